package bench

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// ErrVecsFormat reports a malformed fvecs/ivecs file.
var ErrVecsFormat = errors.New("bench: malformed vecs file")

// MixtureSpec describes a seeded mixture of anisotropic Gaussian clusters on
// the unit sphere. Every vector is drawn from its own PCG stream keyed by
// (Seed, index), so the data does not depend on how many goroutines build it.
//
// A point of cluster c is center_c + sum_j z_j*Sigma*Decay^j*u_{c,j} +
// Noise*g, where center_c = normalize(Shared*s + CenterSpread*r_c) with one
// shared direction s and per-cluster random r_c, u_{c,j} are Rank random unit
// directions of cluster c, z_j and g are standard normal, and the result is
// normalized to unit length.
type MixtureSpec struct {
	Name         string
	Seed         uint64
	N, Queries   int
	Dim          int
	Clusters     int
	Rank         int     // anisotropic directions per cluster
	Sigma        float64 // scale of the first direction
	Decay        float64 // geometric decay of the direction scales
	Noise        float64 // isotropic noise per coordinate
	Shared       float64 // weight of a direction shared by all centers (overlap)
	CenterSpread float64 // weight of the per-cluster random center direction
}

// EasySpec is the issue-3 data set: 500 well separated anisotropic clusters,
// where HNSW at M 16 / ef 100 reaches recall@10 of about 1.00.
func EasySpec(n, queries, dim int) MixtureSpec {
	return MixtureSpec{Name: "easy", Seed: 20261122, N: n, Queries: queries, Dim: dim,
		Clusters: 500, Rank: 16, Sigma: 0.25, Decay: 0.85, Noise: 0.01, Shared: 0, CenterSpread: 1}
}

// HardSpec is the data set where ef 100 is not enough: few heavily
// overlapping clusters (centers close to one shared direction), 64 slowly
// decaying directions each and a strong isotropic component, so the intrinsic
// dimension is high and neighbourhoods are flat.
func HardSpec(n, queries, dim int) MixtureSpec {
	return MixtureSpec{Name: "hard", Seed: 20261123, N: n, Queries: queries, Dim: dim,
		Clusters: 50, Rank: 128, Sigma: 0.2, Decay: 0.99, Noise: 0.06, Shared: 1, CenterSpread: 0.5}
}

// Key names the cached files of a spec; any parameter change gives a new key.
func (s MixtureSpec) Key() string {
	return fmt.Sprintf("%s-n%d-q%d-d%d-c%d-r%d-s%g-de%g-no%g-sh%g-cs%g-seed%d",
		s.Name, s.N, s.Queries, s.Dim, s.Clusters, s.Rank, s.Sigma, s.Decay, s.Noise, s.Shared, s.CenterSpread, s.Seed)
}

type mixtureModel struct {
	spec    MixtureSpec
	centers []float32 // Clusters*Dim
	dirs    []float32 // Clusters*Rank*Dim, pre-scaled by Sigma*Decay^j
}

func newMixtureModel(s MixtureSpec) *mixtureModel {
	m := &mixtureModel{spec: s,
		centers: make([]float32, s.Clusters*s.Dim),
		dirs:    make([]float32, s.Clusters*s.Rank*s.Dim)}
	rng := rand.New(rand.NewPCG(s.Seed, math.MaxUint64))
	shared := make([]float64, s.Dim)
	gaussUnit(rng, shared)
	tmp := make([]float64, s.Dim)
	for c := 0; c < s.Clusters; c++ {
		gaussUnit(rng, tmp)
		for i := range tmp {
			tmp[i] = s.Shared*shared[i] + s.CenterSpread*tmp[i]
		}
		normalize64(tmp)
		for i, v := range tmp {
			m.centers[c*s.Dim+i] = float32(v)
		}
		scale := s.Sigma
		for j := 0; j < s.Rank; j++ {
			gaussUnit(rng, tmp)
			off := (c*s.Rank + j) * s.Dim
			for i, v := range tmp {
				m.dirs[off+i] = float32(v * scale)
			}
			scale *= s.Decay
		}
	}
	return m
}

// point writes vector number idx of stream into out (len Dim).
func (m *mixtureModel) point(stream, idx uint64, out []float32, acc []float64) {
	s := m.spec
	rng := rand.New(rand.NewPCG(s.Seed^stream, idx))
	c := rng.IntN(s.Clusters)
	center := m.centers[c*s.Dim : (c+1)*s.Dim]
	for i, v := range center {
		acc[i] = float64(v) + s.Noise*rng.NormFloat64()
	}
	for j := 0; j < s.Rank; j++ {
		z := rng.NormFloat64()
		d := m.dirs[(c*s.Rank+j)*s.Dim : (c*s.Rank+j+1)*s.Dim]
		for i, v := range d {
			acc[i] += z * float64(v)
		}
	}
	normalize64(acc)
	for i, v := range acc {
		out[i] = float32(v)
	}
}

func gaussUnit(rng *rand.Rand, v []float64) {
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	normalize64(v)
}

func normalize64(v []float64) {
	var s float64
	for _, x := range v {
		s += x * x
	}
	if s == 0 {
		return
	}
	s = 1 / math.Sqrt(s)
	for i := range v {
		v[i] *= s
	}
}

// Generate returns the base vectors (N*Dim, row-major) and held-out queries
// (Queries*Dim). Queries come from a separate stream so none is in the base.
func (s MixtureSpec) Generate() (base, queries []float32) {
	m := newMixtureModel(s)
	base = make([]float32, s.N*s.Dim)
	queries = make([]float32, s.Queries*s.Dim)
	fill := func(dst []float32, stream uint64, n int) {
		parallelRange(n, func(lo, hi int) {
			acc := make([]float64, s.Dim)
			for i := lo; i < hi; i++ {
				m.point(stream, uint64(i), dst[i*s.Dim:(i+1)*s.Dim], acc)
			}
		})
	}
	fill(base, 0, s.N)
	fill(queries, 0x9e3779b97f4a7c15, s.Queries)
	return base, queries
}

// parallelRange splits [0,n) into chunks run on GOMAXPROCS goroutines.
func parallelRange(n int, f func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		f(0, n)
		return
	}
	const chunk = 64
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				lo := next
				next += chunk
				mu.Unlock()
				if lo >= n {
					return
				}
				f(lo, min(lo+chunk, n))
			}
		}()
	}
	wg.Wait()
}

// Subset returns a seeded random subset of [0,n) holding round(frac*n) ids
// (at least 1), sorted ascending. It models a metadata filter that is not
// correlated with the clusters.
func Subset(n int, frac float64, seed uint64) []uint32 {
	size := int(math.Round(frac * float64(n)))
	size = max(1, min(size, n))
	rng := rand.New(rand.NewPCG(seed, uint64(size)))
	perm := rng.Perm(n)[:size]
	mark := make([]bool, n)
	for _, p := range perm {
		mark[p] = true
	}
	out := make([]uint32, 0, size)
	for i, ok := range mark {
		if ok {
			out = append(out, uint32(i))
		}
	}
	return out
}

// L2Sq is the squared Euclidean distance with 8 independent accumulators
// (the exact-scan kernel of this benchmark; len(b) must be >= len(a)).
func L2Sq(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		d0 := a[i] - b[i]
		d1 := a[i+1] - b[i+1]
		d2 := a[i+2] - b[i+2]
		d3 := a[i+3] - b[i+3]
		d4 := a[i+4] - b[i+4]
		d5 := a[i+5] - b[i+5]
		d6 := a[i+6] - b[i+6]
		d7 := a[i+7] - b[i+7]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		s4 += d4 * d4
		s5 += d5 * d5
		s6 += d6 * d6
		s7 += d7 * d7
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// Neighbor is one exact-scan hit.
type Neighbor struct {
	ID   uint32
	Dist float32
}

// topK keeps the k smallest distances in ascending order.
type topK struct {
	k  int
	hs []Neighbor
}

func (t *topK) push(id uint32, d float32) {
	if len(t.hs) == t.k && d >= t.hs[len(t.hs)-1].Dist {
		return
	}
	if len(t.hs) < t.k {
		t.hs = append(t.hs, Neighbor{})
	}
	j := len(t.hs) - 1
	for j > 0 && t.hs[j-1].Dist > d {
		t.hs[j] = t.hs[j-1]
		j--
	}
	t.hs[j] = Neighbor{id, d}
}

// ExactSearch scans base (rows of dim) for the k nearest rows to q by squared
// L2; allow, if non-nil, lists the candidate row ids.
func ExactSearch(base []float32, dim int, q []float32, k int, allow []uint32) []Neighbor {
	t := topK{k: k, hs: make([]Neighbor, 0, k)}
	if allow != nil {
		for _, id := range allow {
			o := int(id) * dim
			t.push(id, L2Sq(q, base[o:o+dim]))
		}
		return t.hs
	}
	n := len(base) / dim
	for i := 0; i < n; i++ {
		t.push(uint32(i), L2Sq(q, base[i*dim:(i+1)*dim]))
	}
	return t.hs
}

// GroundTruth returns the exact top-k ids of every query, computed on all
// cores.
func GroundTruth(base, queries []float32, dim, k int, allow []uint32) [][]uint32 {
	nq := len(queries) / dim
	gt := make([][]uint32, nq)
	parallelRange(nq, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			hs := ExactSearch(base, dim, queries[i*dim:(i+1)*dim], k, allow)
			ids := make([]uint32, len(hs))
			for j, h := range hs {
				ids[j] = h.ID
			}
			gt[i] = ids
		}
	})
	return gt
}

// Recall is |got ∩ want| / len(want) (recall@k with k = len(want)).
func Recall(got, want []uint32) float64 {
	if len(want) == 0 {
		return 1
	}
	hit := 0
	for _, w := range want {
		for _, g := range got {
			if g == w {
				hit++
				break
			}
		}
	}
	return float64(hit) / float64(len(want))
}

// WriteFvecs writes rows of dim float32 in the fvecs layout (per row: int32
// dim, then dim little-endian float32), atomically via a temp file + rename.
func WriteFvecs(path string, data []float32, dim int) error {
	return writeAtomic(path, func(w *bufio.Writer) error {
		var b [4]byte
		for o := 0; o < len(data); o += dim {
			binary.LittleEndian.PutUint32(b[:], uint32(dim))
			w.Write(b[:])
			for _, v := range data[o : o+dim] {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
				w.Write(b[:])
			}
		}
		return nil
	})
}

// WriteIvecs writes variable-length rows of uint32 in the ivecs layout.
func WriteIvecs(path string, rows [][]uint32) error {
	return writeAtomic(path, func(w *bufio.Writer) error {
		var b [4]byte
		for _, r := range rows {
			binary.LittleEndian.PutUint32(b[:], uint32(len(r)))
			w.Write(b[:])
			for _, v := range r {
				binary.LittleEndian.PutUint32(b[:], v)
				w.Write(b[:])
			}
		}
		return nil
	})
}

func writeAtomic(path string, fill func(*bufio.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriterSize(f, 1<<20)
	if err := fill(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// ReadFvecs reads an fvecs file with equal-length rows.
func ReadFvecs(path string) (data []float32, dim int, err error) {
	rows, err := readVecs(path)
	if err != nil {
		return nil, 0, err
	}
	if len(rows) == 0 {
		return nil, 0, nil
	}
	dim = len(rows[0])
	data = make([]float32, 0, len(rows)*dim)
	for _, r := range rows {
		if len(r) != dim {
			return nil, 0, fmt.Errorf("%w: %s: ragged rows", ErrVecsFormat, path)
		}
		for _, v := range r {
			data = append(data, math.Float32frombits(v))
		}
	}
	return data, dim, nil
}

// ReadIvecs reads an ivecs file.
func ReadIvecs(path string) ([][]uint32, error) { return readVecs(path) }

func readVecs(path string) ([][]uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var rows [][]uint32
	var b [4]byte
	remain := st.Size()
	for {
		if _, err := io.ReadFull(r, b[:]); err == io.EOF {
			return rows, nil
		} else if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrVecsFormat, path, err)
		}
		remain -= 4
		n := int64(binary.LittleEndian.Uint32(b[:]))
		if n*4 > remain {
			return nil, fmt.Errorf("%w: %s: row of %d exceeds file", ErrVecsFormat, path, n)
		}
		row := make([]uint32, n)
		buf := make([]byte, 4*n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrVecsFormat, path, err)
		}
		for i := range row {
			row[i] = binary.LittleEndian.Uint32(buf[4*i:])
		}
		remain -= 4 * n
		rows = append(rows, row)
	}
}

// Command sq8study measures, for candidate 8-bit vector codes, the recall@10
// of the exact ranking by the code's cosine distances against float32's true
// top 10: what a graph search with that code converges to as ef grows. It
// reads a data set directory of the index harness (base.fvecs and
// query.fvecs of unit vectors), finds each query's float32 top -depth once
// (cached next to the data) and ranks those candidates by each code; the
// deepest candidate a code's top 10 used is printed, so that a depth too
// small shows. Codes: f32, plain (per-vector min/max, 8 bits), unit (the
// same, decoded to unit norm: index.SQ8 in the cosine space), opt (a
// per-vector range search for the best cosine), rot and rotopt (a random
// orthogonal rotation first), resK and resoptK (the residual to the nearest
// of K k-means centroids trained on -sample vectors).
//
//	go run ./bench/cmd/sq8study -data DIR -codes unit,rot,res256,res1024
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/bench"
)

func main() {
	dir := flag.String("data", "", "data set directory (base.fvecs, query.fvecs)")
	nq := flag.Int("nq", 1000, "queries")
	depth := flag.Int("depth", 100, "candidates per query (float32 exact top)")
	ks := flag.String("codes", "unit,opt,rot,res256,res1024", "codes (see the package comment)")
	sample := flag.Int("sample", 20000, "k-means training sample")
	iters := flag.Int("iters", 8, "k-means iterations")
	flag.Parse()
	base, dim, err := bench.ReadFvecs(filepath.Join(*dir, "base.fvecs"))
	must(err)
	qs, _, err := bench.ReadFvecs(filepath.Join(*dir, "query.fvecs"))
	must(err)
	n := len(base) / dim
	*nq = min(*nq, len(qs)/dim)
	fmt.Printf("n=%d dim=%d nq=%d depth=%d\n", n, dim, *nq, *depth)
	isotropy(base, dim)
	cands := candidates(base, qs, dim, n, *nq, *depth, filepath.Join(*dir, fmt.Sprintf("cands-%d-%d.bin", *nq, *depth)))
	// union of candidate ids
	seen := map[uint32]int{}
	var ids []uint32
	for _, c := range cands {
		for _, id := range c {
			if _, ok := seen[id]; !ok {
				seen[id] = len(ids)
				ids = append(ids, id)
			}
		}
	}
	fmt.Printf("candidates: %d distinct\n", len(ids))
	truth := make([][]uint32, *nq)
	for i := range truth {
		truth[i] = cands[i][:10]
	}
	rng := rand.New(rand.NewPCG(1, 2))
	samp := make([]float32, 0, *sample*dim)
	for _, j := range rng.Perm(n)[:*sample] {
		samp = append(samp, base[j*dim:(j+1)*dim]...)
	}
	for _, code := range split(*ks) {
		t0 := time.Now()
		var enc func(v []float32) []float32
		switch {
		case code == "f32":
			enc = func(v []float32) []float32 { return v }
		case code == "unit":
			enc = func(v []float32) []float32 { return unitNorm(sq8(v, 1)) }
		case code == "plain":
			enc = func(v []float32) []float32 { return sq8(v, 1) }
		case code == "opt":
			enc = func(v []float32) []float32 { return optScale(v, nil) }
		case code == "rot":
			r := rotation(dim, rng)
			enc = func(v []float32) []float32 { return matTvec(r, unitNorm(sq8(matvec(r, v, dim), 1)), dim) }
		case code == "rotopt":
			r := rotation(dim, rng)
			enc = func(v []float32) []float32 { return matTvec(r, optScale(matvec(r, v, dim), nil), dim) }
		case len(code) > 3 && code[:3] == "res":
			var k int
			opt := false
			if _, err := fmt.Sscanf(code, "resopt%d", &k); err == nil {
				opt = true
			} else {
				fmt.Sscanf(code, "res%d", &k)
			}
			cent := kmeans(samp, dim, k, *iters, rng)
			fmt.Printf("  %s: trained in %v\n", code, time.Since(t0).Round(time.Millisecond))
			half := halfNorms(cent, dim)
			enc = func(v []float32) []float32 {
				c := cent[nearest(cent, half, v, dim)*dim:][:dim]
				r := make([]float32, dim)
				for i := range r {
					r[i] = v[i] - c[i]
				}
				var d []float32
				if opt {
					d = optScale(r, c)
				} else {
					d = sq8(r, 1)
					for i := range d {
						d[i] += c[i]
					}
					d = unitNorm(d)
				}
				return d
			}
		default:
			fmt.Println("unknown code", code)
			continue
		}
		dec := make([][]float32, len(ids))
		var errSq float64
		parallel(len(ids), func(lo, hi int) {
			for j := lo; j < hi; j++ {
				id := ids[j]
				dec[j] = enc(base[int(id)*dim : (int(id)+1)*dim])
			}
		})
		for j, id := range ids {
			v := base[int(id)*dim : (int(id)+1)*dim]
			for i := range v {
				e := float64(dec[j][i] - v[i])
				errSq += e * e
			}
		}
		hits, maxRank := 0, 0
		for qi := range *nq {
			q := qs[qi*dim : (qi+1)*dim]
			type sc struct {
				rank int
				d    float32
			}
			s := make([]sc, len(cands[qi]))
			for r, id := range cands[qi] {
				s[r] = sc{r, dot(q, dec[seen[id]])}
			}
			sort.Slice(s, func(a, b int) bool { return s[a].d > s[b].d })
			for _, x := range s[:10] {
				if x.rank < 10 {
					hits++
				}
				maxRank = max(maxRank, x.rank)
			}
		}
		fmt.Printf("%-10s recall@10 %.4f  rms err/component %.3g  deepest candidate used %d  (%v)\n", code,
			float64(hits)/float64(10**nq), math.Sqrt(errSq/float64(len(ids)*dim)), maxRank, time.Since(t0).Round(time.Millisecond))
	}
}

// sq8 quantizes v with its own min/max range shrunk by clip and decodes it.
func sq8(v []float32, clip float32) []float32 {
	lo, hi := slices.Min(v), slices.Max(v)
	mid := (lo + hi) / 2
	lo, hi = mid-(mid-lo)*clip, mid+(hi-mid)*clip
	step := (hi - lo) / 255
	out := make([]float32, len(v))
	for i, f := range v {
		c := float32(0)
		if step > 0 {
			c = float32(max(0, min(255, int((f-lo)/step+0.5))))
		}
		out[i] = lo + step*c
	}
	return out
}

// optScale picks, per vector, the range clip that maximizes the cosine of
// (c + decoded) with (c + v) (c nil: zero).
func optScale(v, c []float32) []float32 {
	best, bestCos := []float32(nil), -2.0
	x := v
	if c != nil {
		x = add(v, c)
	}
	for t := float32(0.70); t <= 1.0001; t += 0.01 {
		d := sq8(v, t)
		if c != nil {
			d = add(d, c)
		}
		cs := float64(dot(d, x)) / math.Sqrt(float64(dot(d, d))*float64(dot(x, x)))
		if cs > bestCos {
			best, bestCos = d, cs
		}
	}
	return unitNorm(best)
}

func add(a, b []float32) []float32 {
	o := make([]float32, len(a))
	for i := range a {
		o[i] = a[i] + b[i]
	}
	return o
}

func unitNorm(v []float32) []float32 {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	if s == 0 {
		return v
	}
	k := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= k
	}
	return v
}

func dot(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

func parallel(n int, f func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for k := range w {
		lo, hi := n*k/w, n*(k+1)/w
		wg.Add(1)
		go func() { defer wg.Done(); f(lo, hi) }()
	}
	wg.Wait()
}

// candidates returns each query's top depth base ids by exact dot product,
// cached in path.
func candidates(base, qs []float32, dim, n, nq, depth int, path string) [][]uint32 {
	out := make([][]uint32, nq)
	if b, err := os.ReadFile(path); err == nil && len(b) == nq*depth*4 {
		for i := range out {
			out[i] = make([]uint32, depth)
			for j := range out[i] {
				out[i][j] = binary.LittleEndian.Uint32(b[(i*depth+j)*4:])
			}
		}
		return out
	}
	t0 := time.Now()
	parallel(nq, func(lo, hi int) {
		type sc struct {
			id uint32
			d  float32
		}
		for qi := lo; qi < hi; qi++ {
			q := qs[qi*dim : (qi+1)*dim]
			top := make([]sc, 0, depth+1)
			worst := float32(math.Inf(-1))
			for j := range n {
				d := dot(q, base[j*dim:(j+1)*dim])
				if len(top) < depth || d > worst {
					top = append(top, sc{uint32(j), d})
					if len(top) > depth {
						sort.Slice(top, func(a, b int) bool { return top[a].d > top[b].d })
						top = top[:depth]
						worst = top[depth-1].d
					} else if len(top) == depth {
						sort.Slice(top, func(a, b int) bool { return top[a].d > top[b].d })
						worst = top[depth-1].d
					}
				}
			}
			sort.Slice(top, func(a, b int) bool { return top[a].d > top[b].d })
			out[qi] = make([]uint32, depth)
			for j := range depth {
				out[qi][j] = top[j].id
			}
		}
	})
	b := make([]byte, nq*depth*4)
	for i := range out {
		for j, id := range out[i] {
			binary.LittleEndian.PutUint32(b[(i*depth+j)*4:], id)
		}
	}
	must(os.WriteFile(path, b, 0o644))
	fmt.Printf("candidates computed in %v\n", time.Since(t0).Round(time.Second))
	return out
}

func isotropy(base []float32, dim int) {
	n := min(len(base)/dim, 100000)
	mean := make([]float64, dim)
	vr := make([]float64, dim)
	for j := range n {
		for i, f := range base[j*dim : (j+1)*dim] {
			mean[i] += float64(f)
			vr[i] += float64(f) * float64(f)
		}
	}
	var mn2 float64
	lo, hi := math.Inf(1), 0.0
	for i := range mean {
		mean[i] /= float64(n)
		vr[i] = vr[i]/float64(n) - mean[i]*mean[i]
		mn2 += mean[i] * mean[i]
		lo, hi = min(lo, vr[i]), max(hi, vr[i])
	}
	// mean |max component| relative to rms
	var peak float64
	for j := range n {
		v := base[j*dim : (j+1)*dim]
		m := 0.0
		for _, f := range v {
			m = max(m, math.Abs(float64(f)))
		}
		peak += m
	}
	fmt.Printf("isotropy: |mean| %.3f, per-dim variance min %.3g max %.3g (x%.1f), mean max|component| %.3f (rms %.3f)\n",
		math.Sqrt(mn2), lo, hi, hi/lo, peak/float64(n), 1/math.Sqrt(float64(dim)))
}

// rotation returns a random orthogonal dim x dim matrix (Gram-Schmidt).
func rotation(dim int, rng *rand.Rand) []float64 {
	m := make([]float64, dim*dim)
	for i := range dim {
		row := m[i*dim : (i+1)*dim]
		for {
			for j := range row {
				row[j] = rng.NormFloat64()
			}
			for k := range i {
				prev := m[k*dim : (k+1)*dim]
				var d float64
				for j := range row {
					d += row[j] * prev[j]
				}
				for j := range row {
					row[j] -= d * prev[j]
				}
			}
			var s float64
			for _, f := range row {
				s += f * f
			}
			if s > 1e-6 {
				s = 1 / math.Sqrt(s)
				for j := range row {
					row[j] *= s
				}
				break
			}
		}
	}
	return m
}

func matvec(m []float64, v []float32, dim int) []float32 {
	o := make([]float32, dim)
	for i := range dim {
		var s float64
		row := m[i*dim : (i+1)*dim]
		for j, f := range v {
			s += row[j] * float64(f)
		}
		o[i] = float32(s)
	}
	return o
}

func matTvec(m []float64, v []float32, dim int) []float32 {
	o := make([]float64, dim)
	for i := range dim {
		row := m[i*dim : (i+1)*dim]
		for j := range o {
			o[j] += row[j] * float64(v[i])
		}
	}
	r := make([]float32, dim)
	for i, f := range o {
		r[i] = float32(f)
	}
	return r
}

func halfNorms(c []float32, dim int) []float32 {
	h := make([]float32, len(c)/dim)
	for a := range h {
		h[a] = dot(c[a*dim:(a+1)*dim], c[a*dim:(a+1)*dim]) / 2
	}
	return h
}

func kmeans(x []float32, dim, k, iters int, rng *rand.Rand) []float32 {
	n := len(x) / dim
	c := make([]float32, k*dim)
	for i, j := range rng.Perm(n)[:k] {
		copy(c[i*dim:], x[j*dim:(j+1)*dim])
	}
	assign := make([]int, n)
	for range iters {
		half := halfNorms(c, dim)
		parallel(n, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				assign[j] = nearest(c, half, x[j*dim:(j+1)*dim], dim)
			}
		})
		sum := make([]float64, k*dim)
		cnt := make([]int, k)
		for j, a := range assign {
			cnt[a]++
			for i, f := range x[j*dim : (j+1)*dim] {
				sum[a*dim+i] += float64(f)
			}
		}
		for a := range k {
			if cnt[a] == 0 {
				j := rng.IntN(n)
				copy(c[a*dim:], x[j*dim:(j+1)*dim])
				continue
			}
			for i := range dim {
				c[a*dim+i] = float32(sum[a*dim+i] / float64(cnt[a]))
			}
		}
	}
	return c
}

// nearest is the centroid of largest dot minus half its squared norm
// (nearest in L2).
func nearest(c, half, v []float32, dim int) int {
	best, bd := 0, float32(math.Inf(-1))
	for a := range len(c) / dim {
		if s := dot(c[a*dim:(a+1)*dim], v) - half[a]; s > bd {
			best, bd = a, s
		}
	}
	return best
}

func split(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

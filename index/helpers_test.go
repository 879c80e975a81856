package index_test

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cairn-dev/cairn/index"
)

var seedFlag = flag.Uint64("seed", 1, "seed for randomized tests")

// testRand returns the seeded generator for a test and logs the seed.
func testRand(t testing.TB) *rand.Rand {
	t.Helper()
	t.Logf("seed %d (rerun with -seed)", *seedFlag)
	return rand.New(rand.NewPCG(*seedFlag, 0x6361697270))
}

// clustered returns n unit vectors of dimension dim drawn from a mixture
// of anisotropic Gaussian clusters.
func clustered(r *rand.Rand, n, dim, clusters int, spread float64) [][]float32 {
	centres := make([][]float64, clusters)
	scales := make([][]float64, clusters)
	for c := range centres {
		centres[c] = make([]float64, dim)
		scales[c] = make([]float64, dim)
		for i := range dim {
			centres[c][i] = r.NormFloat64()
			scales[c][i] = spread * (0.2 + 1.6*r.Float64())
		}
	}
	out := make([][]float32, n)
	for j := range out {
		c := r.IntN(clusters)
		v := make([]float32, dim)
		var ss float64
		for i := range dim {
			f := centres[c][i] + scales[c][i]*r.NormFloat64()
			v[i] = float32(f)
			ss += f * f
		}
		inv := float32(1 / math.Sqrt(ss))
		for i := range v {
			v[i] *= inv
		}
		out[j] = v
	}
	return out
}

// newChecked creates an index whose invariants are checked at cleanup.
func newChecked(t testing.TB, o index.Options) *index.Index {
	t.Helper()
	x, err := index.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := x.Check(); err != nil {
			t.Errorf("Check: %v", err)
		}
	})
	return x
}

func seqIDs(lo, n int) []uint32 {
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(lo + i)
	}
	return ids
}

// recallAt compares Search with the exact oracle over queries.
func recallAt(t testing.TB, x *index.Index, queries [][]float32, k int, so index.SearchOptions) float64 {
	t.Helper()
	hit, total := 0, 0
	for _, q := range queries {
		want, err := x.Exact(q, k, so.Allow)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.Search(q, k, so)
		if err != nil {
			t.Fatal(err)
		}
		set := make(map[uint32]bool, len(want))
		for _, r := range want {
			set[r.ID] = true
		}
		for _, r := range got {
			if set[r.ID] {
				hit++
			}
		}
		total += len(want)
	}
	if total == 0 {
		return 1
	}
	return float64(hit) / float64(total)
}

// bitset is a dense Allow set (the index must not depend on roaring).
type bitset struct {
	w    []uint64
	card uint64
}

func newBitset(n int) *bitset { return &bitset{w: make([]uint64, (n+63)/64)} }

func (b *bitset) Add(id uint32) {
	if !b.Contains(id) {
		b.w[id/64] |= 1 << (id % 64)
		b.card++
	}
}

func (b *bitset) Contains(id uint32) bool {
	return int(id/64) < len(b.w) && b.w[id/64]&(1<<(id%64)) != 0
}

func (b *bitset) GetCardinality() uint64 { return b.card }

func (b *bitset) Iterate(fn func(uint32) bool) {
	for i, w := range b.w {
		for w != 0 {
			bit := uint32(64*i) + uint32(trailingZeros(w))
			if !fn(bit) {
				return
			}
			w &= w - 1
		}
	}
}

func trailingZeros(w uint64) int {
	n := 0
	for w&1 == 0 {
		w >>= 1
		n++
	}
	return n
}

package bench

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/cairn-dev/cairn/index"
)

// CairnPeer wraps cairn's index/ package.
type CairnPeer struct {
	Idx *index.Index
}

// BuildCairn builds an index in space over all rows, holding vectors in code, with
// InsertBatch and the given number of workers; GOMAXPROCS is set to workers during the build so that a
// single-thread build gets no help from a second core (the garbage collector
// included).
// It returns the wall and process CPU time of the build.
func BuildCairn(ctx context.Context, base []float32, dim, m, efc, workers int, seed int64, space index.Space, code index.Code) (p *CairnPeer, wall, cpu time.Duration, err error) {
	idx, err := index.New(index.Options{Space: space, Dim: dim, M: m, EfConstruction: efc,
		EfSearch: 100, Seed: seed, Workers: workers, Code: code})
	if err != nil {
		return nil, 0, 0, fmt.Errorf("bench: cairn index: %w", err)
	}
	n := len(base) / dim
	ids := make([]uint32, n)
	vecs := make([][]float32, n)
	for i := range n {
		ids[i] = uint32(i)
		vecs[i] = base[i*dim : (i+1)*dim : (i+1)*dim]
	}
	prev := runtime.GOMAXPROCS(workers)
	c0 := processCPU()
	t0 := time.Now()
	err = idx.InsertBatch(ctx, ids, vecs)
	wall = time.Since(t0)
	cpu = processCPU() - c0
	runtime.GOMAXPROCS(prev)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("bench: cairn insert: %w", err)
	}
	return &CairnPeer{Idx: idx}, wall, cpu, nil
}

// Query implements QueryFunc.
func (c *CairnPeer) Query(q []float32, k, ef int) []uint32 {
	rs, err := c.Idx.Search(q, k, index.SearchOptions{Ef: ef})
	if err != nil {
		panic(err)
	}
	return resultIDs(rs)
}

// QueryAllowed is a filtered search restricted to allow.
func (c *CairnPeer) QueryAllowed(q []float32, k, ef int, allow *roaring.Bitmap) []uint32 {
	rs, err := c.Idx.Search(q, k, index.SearchOptions{Ef: ef, Allow: allow})
	if err != nil {
		panic(err)
	}
	return resultIDs(rs)
}

// QueryReranked asks for ef candidates (k = ef) and re-sorts them by their
// exact distance to the float32 rows of base: what a caller holding the
// exact vectors elsewhere can do with an SQ8 index. The bench's vectors
// have unit norm, so the L2 order is also the cosine order.
func (c *CairnPeer) QueryReranked(base []float32, dim int) QueryFunc {
	return func(q []float32, k, ef int) []uint32 {
		rs, err := c.Idx.Search(q, max(k, ef), index.SearchOptions{Ef: ef})
		if err != nil {
			panic(err)
		}
		for i := range rs {
			id := int(rs[i].ID)
			rs[i].Distance = L2Sq(q, base[id*dim:(id+1)*dim])
		}
		slices.SortFunc(rs, func(a, b index.Result) int { return cmp.Compare(a.Distance, b.Distance) })
		return resultIDs(rs[:min(k, len(rs))])
	}
}

func resultIDs(rs []index.Result) []uint32 {
	ids := make([]uint32, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return ids
}

// cairnPeers maps the cairn peer names to the index code each one uses.
var cairnPeers = map[string]index.Code{"cairn": index.Float32, "cairn-sq8": index.SQ8, "cairn-sq8r": index.SQ8Residual}

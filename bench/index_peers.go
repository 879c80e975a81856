package bench

import (
	"math/rand"
	"runtime"
	"time"

	"github.com/coder/hnsw"
)

// ExactPeer is the brute-force floor: a single-threaded scan of every row
// (or of the allowed rows) with the 8-accumulator L2 kernel.
type ExactPeer struct {
	Base []float32
	Dim  int
}

// Query implements QueryFunc (ef is ignored).
func (e ExactPeer) Query(q []float32, k, _ int) []uint32 {
	return neighborIDs(ExactSearch(e.Base, e.Dim, q, k, nil))
}

// QueryAllowed scans only the allowed rows.
func (e ExactPeer) QueryAllowed(q []float32, k int, allow []uint32) []uint32 {
	return neighborIDs(ExactSearch(e.Base, e.Dim, q, k, allow))
}

func neighborIDs(hs []Neighbor) []uint32 {
	ids := make([]uint32, len(hs))
	for i, h := range hs {
		ids[i] = h.ID
	}
	return ids
}

// CoderPeer wraps github.com/coder/hnsw v0.6.1 (single-threaded inserts
// only; its search bounds the result set by k, so recall stays low).
type CoderPeer struct {
	g *hnsw.Graph[uint32]
}

// BuildCoder inserts all rows one by one with EfSearch = efc during
// construction (the library has no separate construction ef) and level
// probability 1/M, the same as hnswlib's 1/ln(M) multiplier.
func BuildCoder(base []float32, dim, m, efc int, seed int64) (p *CoderPeer, wall, cpu time.Duration) {
	g := hnsw.NewGraph[uint32]()
	g.M = m
	g.Ml = 1 / float64(m)
	g.Distance = func(a, b []float32) float32 { return L2Sq(a, b) }
	g.EfSearch = efc
	g.Rng = rand.New(rand.NewSource(seed))
	n := len(base) / dim
	prev := runtime.GOMAXPROCS(1)
	c0 := processCPU()
	t0 := time.Now()
	for i := 0; i < n; i++ {
		g.Add(hnsw.MakeNode(uint32(i), base[i*dim:(i+1)*dim:(i+1)*dim]))
	}
	wall = time.Since(t0)
	cpu = processCPU() - c0
	runtime.GOMAXPROCS(prev)
	return &CoderPeer{g: g}, wall, cpu
}

// Query implements QueryFunc. Graph.EfSearch is a field, so this is not safe
// for concurrent use.
func (c *CoderPeer) Query(q []float32, k, ef int) []uint32 {
	c.g.EfSearch = ef
	ns := c.g.Search(q, k)
	ids := make([]uint32, len(ns))
	for i, n := range ns {
		ids[i] = n.Key
	}
	return ids
}

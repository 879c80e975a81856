package index

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
)

// Errors returned by the index. Callers branch on them with errors.Is.
var (
	// ErrInvalidOptions reports an Options value that cannot be used.
	ErrInvalidOptions = errors.New("index: invalid options")
	// ErrDimensionMismatch reports a vector whose length is not Options.Dim.
	ErrDimensionMismatch = errors.New("index: dimension mismatch")
	// ErrInvalidVector reports a vector with a NaN or infinite component.
	ErrInvalidVector = errors.New("index: invalid vector")
	// ErrInvalidID reports an id at or above MaxID.
	ErrInvalidID = errors.New("index: invalid id")
	// ErrNotFound reports an id that holds no live vector.
	ErrNotFound = errors.New("index: id not found")
	// ErrCorrupt reports serialized data that is damaged or inconsistent.
	ErrCorrupt = errors.New("index: corrupt data")
	// ErrUnsupportedVersion reports serialized data written by a newer format version.
	ErrUnsupportedVersion = errors.New("index: unsupported format version")
	// ErrInvariant reports a broken in-memory invariant found by Check.
	ErrInvariant = errors.New("index: invariant violated")
)

// Space is a distance function, with Chroma's semantics.
type Space int

const (
	// Cosine distance is 1 - cos(a, b). Vectors are normalized once on insert
	// (and queries before search), so it is computed as 1 - dot.
	Cosine Space = iota
	// L2 distance is the squared Euclidean distance.
	L2
	// IP distance is 1 - dot(a, b) on the vectors as given.
	IP
)

// String returns Chroma's name of the space: "cosine", "l2" or "ip".
func (s Space) String() string {
	switch s {
	case Cosine:
		return "cosine"
	case L2:
		return "l2"
	case IP:
		return "ip"
	}
	return fmt.Sprintf("Space(%d)", int(s))
}

// ParseSpace maps Chroma's names ("cosine", "l2", "ip") to a Space.
func ParseSpace(name string) (Space, error) {
	switch name {
	case "cosine":
		return Cosine, nil
	case "l2":
		return L2, nil
	case "ip":
		return IP, nil
	}
	return 0, fmt.Errorf("%w: unknown space %q", ErrInvalidOptions, name)
}

const (
	defaultM              = 16
	defaultEfConstruction = 200
	defaultEfSearch       = 100

	// MaxID bounds caller-assigned ids: the index is dense, so an id costs
	// memory for every smaller id.
	MaxID = 1<<31 - 1
	// MaxDim bounds the vector dimension.
	MaxDim = 1 << 14
	// MaxM bounds Options.M.
	MaxM = 256
	// maxEf bounds EfConstruction and EfSearch.
	maxEf = 1 << 16
	// maxLevel bounds a node's top layer.
	maxLevel = 24
)

// Options configure an Index. The zero value of each numeric field means its
// default; Dim is required.
type Options struct {
	Space          Space
	Dim            int
	M              int   // max neighbours per node above layer 0 (2*M at layer 0); default 16
	EfConstruction int   // candidate list size while inserting; default 200
	EfSearch       int   // default candidate list size while searching; default 100
	Seed           int64 // seeds the level generator
	Workers        int   // goroutines used by InsertBatch and repairs; default GOMAXPROCS
	// Code is how vectors are held: Float32 (the default, exact) or SQ8
	// (8-bit codes, about a quarter of the memory, approximate distances).
	Code Code
}

func (o Options) withDefaults() (Options, error) {
	if o.M == 0 {
		o.M = defaultM
	}
	if o.EfConstruction == 0 {
		o.EfConstruction = defaultEfConstruction
	}
	if o.EfSearch == 0 {
		o.EfSearch = defaultEfSearch
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	switch {
	case o.Space != Cosine && o.Space != L2 && o.Space != IP:
		return o, fmt.Errorf("%w: unknown space %d", ErrInvalidOptions, int(o.Space))
	case o.Dim <= 0 || o.Dim > MaxDim:
		return o, fmt.Errorf("%w: Dim %d outside [1, %d]", ErrInvalidOptions, o.Dim, MaxDim)
	case o.M < 2 || o.M > MaxM:
		return o, fmt.Errorf("%w: M %d outside [2, %d]", ErrInvalidOptions, o.M, MaxM)
	case o.EfConstruction < 1 || o.EfConstruction > maxEf:
		return o, fmt.Errorf("%w: EfConstruction %d outside [1, %d]", ErrInvalidOptions, o.EfConstruction, maxEf)
	case o.EfSearch < 1 || o.EfSearch > maxEf:
		return o, fmt.Errorf("%w: EfSearch %d outside [1, %d]", ErrInvalidOptions, o.EfSearch, maxEf)
	case o.Workers < 1:
		return o, fmt.Errorf("%w: Workers %d below 1", ErrInvalidOptions, o.Workers)
	case o.Code != Float32 && o.Code != SQ8 && o.Code != SQ8Residual:
		return o, fmt.Errorf("%w: unknown code %d", ErrInvalidOptions, int(o.Code))
	}
	return o, nil
}

// Slot states, stored in Index.state and read atomically.
const (
	stateEmpty   uint32 = iota // never used, or freed by a repair
	statePending               // vector written, being linked by an insert
	stateLive                  // searchable
	stateDeleted               // tombstone: still linked, never returned
)

// nLocks is the number of striped locks that guard neighbour list writes.
const nLocks = 4096

// Index is an HNSW graph over dense uint32 ids. See the package
// documentation for its concurrency rules.
type Index struct {
	opts   Options
	dim    int
	m, m0  int // max neighbours above layer 0, and at layer 0
	stride int // m0+1: uint32s per node in links0
	ustr   int // m+1: uint32s per upper-layer block
	mult   float64
	kern   kernel
	code   Code
	rowLen int // bytes per slot in mu.codes (SQ8)
	isL2   bool
	norm   bool // normalize vectors on insert (cosine)

	// writeMu serializes every mutation (Insert, InsertBatch, Delete,
	// repairs, MarshalBinary). Lock order: writeMu before mu.
	writeMu sync.Mutex
	// mu guards the slices below (they are replaced when the index grows)
	// and the contents of vecs, codes and levels, which change only while
	// mu is held exclusively, except an SQ8Residual pending slot's row:
	// the insert linking it writes it under writeMu and mu shared, before
	// the slot is reachable (see linkLocked). Searches hold mu shared.
	// Neighbour lists and states change under writeMu alone and are read
	// and written atomically.
	mu struct {
		sync.RWMutex
		vecs  []float32 // Float32: slot i at [i*dim, (i+1)*dim)
		codes []byte    // SQ8: slot i at [i*rowLen, (i+1)*rowLen), see code.go
		// SQ8Residual: the centroids (residualCentroids*dim) and half
		// their squared norms, empty until trained (residual.go).
		centroids, halfNorm []float32
		centroidIDs         []uint32 // 0..len(halfNorm)-1, for the batched dot kernel
		centroidCodes       []byte   // the centroids' SQ8 rows when they decode to them exactly, else nil
		links0              []uint32 // slot i at [i*stride, (i+1)*stride): count, ids...
		upper               []uint32 // blocks of ustr uint32s: count, ids...
		upperOff            []uint32 // slot i's first block in upper, if levels[i] > 0
		upperCap            []uint8  // number of blocks allocated at upperOff[i]
		levels              []uint8
		state               []uint32
	}

	entry atomic.Uint64 // 0, or 1<<63 | level<<32 | id
	live  atomic.Int64

	// Guarded by writeMu.
	tombstones int
	draws      uint64
	rng        *rand.Rand

	locks   [nLocks]sync.Mutex
	scratch sync.Pool // *scratch
}

// New returns an empty index.
func New(opts Options) (*Index, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return newIndex(o, bestKernel()), nil
}

func newIndex(o Options, k kernel) *Index {
	x := &Index{
		opts:   o,
		dim:    o.Dim,
		m:      o.M,
		m0:     2 * o.M,
		stride: 2*o.M + 1,
		ustr:   o.M + 1,
		mult:   1 / math.Log(float64(o.M)),
		kern:   k,
		code:   o.Code,
		rowLen: rowStride(o.Code, o.Dim),
		isL2:   o.Space == L2,
		norm:   o.Space == Cosine,
	}
	x.rng = rand.New(rand.NewPCG(uint64(o.Seed), 0))
	return x
}

// Options returns the options in effect, defaults filled in.
func (x *Index) Options() Options {
	x.mu.RLock() // Recode changes Code
	defer x.mu.RUnlock()
	return x.opts
}

// Len returns the number of live vectors.
func (x *Index) Len() int { return int(x.live.Load()) }

// Contains reports whether id holds a live vector.
func (x *Index) Contains(id uint32) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return int(id) < len(x.mu.state) && atomic.LoadUint32(&x.mu.state[id]) == stateLive
}

// Vector returns a copy of the vector stored at id (normalized, for the
// cosine space; decoded, for SQ8) and whether id is live.
func (x *Index) Vector(id uint32) ([]float32, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if int(id) >= len(x.mu.state) || atomic.LoadUint32(&x.mu.state[id]) != stateLive {
		return nil, false
	}
	v := make([]float32, x.dim)
	if x.code != Float32 {
		x.decodeRowLocked(v, id)
	} else {
		copy(v, x.vecLocked(id))
	}
	return v, true
}

// Stats describes the index.
type Stats struct {
	Live       int // searchable vectors
	Tombstones int // deleted vectors still linked in the graph
	Slots      int // allocated slots (the highest id ever used, plus one)
	MaxLevel   int // top layer, -1 when empty
	Bytes      int // memory held by vectors (or codes), neighbour lists and slot metadata
}

// Stats returns counters describing the index.
func (x *Index) Stats() Stats {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mu.RLock()
	defer x.mu.RUnlock()
	s := Stats{Live: x.Len(), Tombstones: x.tombstones, Slots: len(x.mu.state), MaxLevel: -1}
	if _, lvl, ok := x.entryPoint(); ok {
		s.MaxLevel = lvl
	}
	s.Bytes = 4*(cap(x.mu.vecs)+cap(x.mu.links0)+cap(x.mu.upper)+cap(x.mu.upperOff)+cap(x.mu.state)) +
		cap(x.mu.upperCap) + cap(x.mu.levels) + cap(x.mu.codes)
	return s
}

// vecLocked returns slot id's vector.
// REQUIRES: x.mu held (shared or exclusive) and id in range.
func (x *Index) vecLocked(id uint32) []float32 {
	o := int(id) * x.dim
	return x.mu.vecs[o : o+x.dim : o+x.dim]
}

// listLocked returns slot id's neighbour block at layer: count then ids.
// REQUIRES: x.mu held and levels[id] >= layer.
func (x *Index) listLocked(id uint32, layer int) []uint32 {
	if layer == 0 {
		o := int(id) * x.stride
		return x.mu.links0[o : o+x.stride : o+x.stride]
	}
	o := int(x.mu.upperOff[id]) + (layer-1)*x.ustr
	return x.mu.upper[o : o+x.ustr : o+x.ustr]
}

func (x *Index) maxNeighbours(layer int) int {
	if layer == 0 {
		return x.m0
	}
	return x.m
}

func (x *Index) entryPoint() (id uint32, level int, ok bool) {
	e := x.entry.Load()
	if e == 0 {
		return 0, 0, false
	}
	return uint32(e), int(e>>32) & 0xff, true
}

func packEntry(id uint32, level int) uint64 {
	return 1<<63 | uint64(level)<<32 | uint64(id)
}

// dist is the space's distance between two stored (or prepared) vectors.
func (x *Index) dist(a, b []float32) float32 {
	if x.isL2 {
		return x.kern.l2(a, b)
	}
	return 1 - x.kern.dot(a, b)
}

// prepare validates v and returns the vector to store or search with:
// normalized for cosine, otherwise v itself (or a copy when copyAlways).
func (x *Index) prepare(v []float32, copyAlways bool) ([]float32, error) {
	if len(v) != x.dim {
		return nil, fmt.Errorf("%w: got %d, want %d", ErrDimensionMismatch, len(v), x.dim)
	}
	var ss float64
	for _, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, fmt.Errorf("%w: NaN or infinite component", ErrInvalidVector)
		}
		ss += float64(f) * float64(f)
	}
	if !x.norm {
		if copyAlways {
			v = append([]float32(nil), v...)
		}
		return v, nil
	}
	out := make([]float32, len(v))
	if ss == 0 {
		return out, nil
	}
	inv := 1 / math.Sqrt(ss)
	for i, f := range v {
		out[i] = float32(float64(f) * inv)
	}
	return out, nil
}

// Distance returns the distance between a and b in space, with Chroma's
// semantics: for Cosine, 1 - cos(a, b) on the vectors as given (no prior
// normalization is assumed); for L2, the squared Euclidean distance; for IP,
// 1 - dot(a, b). It panics if the lengths differ.
func Distance(space Space, a, b []float32) float32 {
	if len(a) != len(b) {
		panic("index: Distance of vectors with different lengths")
	}
	k := bestKernel()
	switch space {
	case L2:
		return k.l2(a, b)
	case IP:
		return 1 - k.dot(a, b)
	}
	na, nb := k.dot(a, a), k.dot(b, b)
	if na == 0 || nb == 0 {
		return 1
	}
	return 1 - k.dot(a, b)/float32(math.Sqrt(float64(na)*float64(nb)))
}

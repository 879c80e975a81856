package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// View searches a graph written by MarshalGraph where it lies (in a
// memory-mapped file, for instance), without decoding it into an Index:
// opening it checks the checksum and records where each slot starts (one
// pass over the slots' headers), and a search reads only the neighbour
// lists it visits. The vectors are not in the graph: Search asks the
// caller for each visited slot's vector in its stored form. It is for a
// process that answers a query or two and exits, where decoding the whole
// graph and every vector would cost more than the search.
//
// A View only reads data; data must stay valid and unchanged while the
// View is used. It is not safe for concurrent searches.
type View struct {
	x        *Index   // empty index with the graph's options, for its kernels and helpers
	data     []byte   // the slots and the header, checksum excluded
	off      []uint32 // slot -> offset in data of its level byte (0: empty slot)
	live     []bool
	vecLen   int // bytes of vector after each slot's level (0 for MarshalGraph)
	nLive    int
	epID     uint32
	epLevel  int
	hasEntry bool
	marks    []uint32
	gen      uint32
	buf      []float32
	row      []byte
	table    centroidTable // the bytes x's centroid table was decoded from
}

// centroidTable identifies a graph's centroid table by its bytes as
// written, its dimension and the format version that laid them out.
type centroidTable struct {
	raw     []byte
	dim     int
	version uint32
}

// StoredVector returns slot id's vector as the caller stored it: for SQ8
// the encoding of AppendSQ8 (AppendSQ8Unit of the normalized vector, in the
// cosine space: a View takes lo and step as stored), for SQ8Residual the
// row as AppendRow gives it (coded against the graph's centroid table),
// otherwise dim little-endian float32s as given to Insert. It
// returns nil when the slot has no vector (its record is gone): the search
// then routes through it with the zero vector, as an Index decoded by
// UnmarshalGraph does, and never returns it.
type StoredVector func(id uint32) []byte

// OpenView checks data written by MarshalGraph (or MarshalBinary) and
// returns a View of it. Damaged input gives an error wrapping ErrCorrupt.
func OpenView(data []byte) (*View, error) { return openView(data, nil) }

// Reopen opens data as OpenView does, taking the centroid table of an
// SQ8Residual graph from v when data holds the same one (the same bytes,
// dimension and format version) instead of decoding it again: a process
// reading one snapshot in two transactions decodes its table once. Only
// v's table is read, so v's data need not be valid any more.
func (v *View) Reopen(data []byte) (*View, error) { return openView(data, v) }

func openView(data []byte, prev *View) (*View, error) {
	var known *centroidTable
	if prev != nil {
		known = &prev.table
	}
	h, err := readHeaderKnown(data, known)
	if err != nil {
		if errors.Is(err, ErrUnsupportedVersion) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	v := &View{x: newIndex(h.opts, bestKernel()), data: data[:len(data)-4]}
	switch {
	case h.knownCentroids:
		m := &prev.x.mu
		v.x.mu.centroids, v.x.mu.halfNorm, v.x.mu.centroidIDs, v.x.mu.centroidCodes = m.centroids, m.halfNorm, m.centroidIDs, m.centroidCodes
		v.table = prev.table
	case len(h.centroids) > 0:
		v.x.setCentroidsLocked(h.centroids)
		v.table = centroidTable{raw: bytes.Clone(h.centroidBytes), dim: h.opts.Dim, version: h.version}
	}
	if err := v.indexSlots(h); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return v, nil
}

// indexSlots records each slot's offset, checking that every list fits in
// the data and every neighbour is a slot.
func (v *View) indexSlots(h header) error {
	x := v.x
	b := v.data
	vecLen := 0
	if !h.missing {
		switch x.code {
		case SQ8:
			vecLen = 8 + x.dim
		case SQ8Residual:
			vecLen = RowLen(x.dim)
		default:
			vecLen = 4 * x.dim
		}
	}
	if h.n > len(b)-h.off {
		return fmt.Errorf("%d slots in %d bytes", h.n, len(b)-h.off)
	}
	v.vecLen = vecLen
	v.off = make([]uint32, h.n)
	v.live = make([]bool, h.n)
	o := h.off
	for id := range h.n {
		if o >= len(b) {
			return errShort
		}
		st := b[o]
		o++
		switch st {
		case 0:
			continue
		case 1:
			v.live[id] = true
			v.nLive++
		case 2:
		default:
			return fmt.Errorf("slot %d: bad state", id)
		}
		if o >= len(b) {
			return errShort
		}
		lvl := int(b[o])
		if lvl > maxLevel {
			return fmt.Errorf("slot %d: level %d", id, lvl)
		}
		v.off[id] = uint32(o)
		o += 1 + vecLen
		for l := 0; l <= lvl; l++ {
			if o+2 > len(b) {
				return errShort
			}
			cnt := int(binary.LittleEndian.Uint16(b[o:]))
			if cnt > x.maxNeighbours(l) {
				return fmt.Errorf("slot %d layer %d: %d neighbours", id, l, cnt)
			}
			o += 2 + 4*cnt
			if o > len(b) {
				return errShort
			}
		}
	}
	if o != len(b) {
		return fmt.Errorf("%d trailing bytes", len(b)-o)
	}
	if h.epLevel != noEntry {
		if int(h.epID) >= h.n || h.epLevel > maxLevel || v.off[h.epID] == 0 || int(b[v.off[h.epID]]) < int(h.epLevel) {
			return errors.New("entry point out of range")
		}
		v.epID, v.epLevel, v.hasEntry = h.epID, int(h.epLevel), true
	}
	return nil
}

// Options returns the graph's options.
func (v *View) Options() Options { return v.x.opts }

// Trained reports whether an SQ8Residual graph holds a centroid table.
func (v *View) Trained() bool { return len(v.x.mu.halfNorm) > 0 }

// Len returns the number of live slots in the graph.
func (v *View) Len() int { return v.nLive }

// Slots returns the number of slots (the highest id in the graph, plus one).
func (v *View) Slots() int { return len(v.off) }

// Live reports whether slot id was live when the graph was written.
func (v *View) Live(id uint32) bool { return int(id) < len(v.live) && v.live[id] }

// neighbours returns slot id's list at layer as raw little-endian uint32s,
// or nil when the slot is empty or below layer. Neighbours out of range
// are skipped by the caller.
func (v *View) neighbours(id uint32, layer int) []byte {
	if int(id) >= len(v.off) || v.off[id] == 0 {
		return nil
	}
	o := int(v.off[id])
	b := v.data
	if int(b[o]) < layer {
		return nil
	}
	o += 1 + v.vecLen
	for l := 0; ; l++ {
		cnt := int(binary.LittleEndian.Uint16(b[o:]))
		if l == layer {
			return b[o+2 : o+2+4*cnt]
		}
		o += 2 + 4*cnt
	}
}

// Distance returns the space's distance from q (prepared by Prepare) to a
// vector in its stored form, or false when stored is malformed.
func (v *View) Distance(q Query, stored []byte) (float32, bool) {
	x := v.x
	if x.code == SQ8Residual {
		row := v.residualRow(stored)
		if row == nil {
			return 0, false
		}
		return x.residualDist(q.q, row, x.kern.dotU8(q.q.v, row[sq8Header:sq8Header+x.dim])), true
	}
	if x.code == SQ8 {
		if len(stored) != 8+x.dim {
			return 0, false
		}
		row := v.sq8Row(stored)
		if row == nil {
			return 0, false
		}
		return x.sq8Dist(q.q, row, x.kern.dotU8(q.q.v, row[sq8Header:sq8Header+x.dim])), true
	}
	if len(stored) != 4*x.dim {
		return 0, false
	}
	buf := vec(&v.buf, x.dim)
	var ss float64
	for i := range buf {
		f := math.Float32frombits(binary.LittleEndian.Uint32(stored[4*i:]))
		if !finite(f) {
			return 0, false
		}
		buf[i] = f
		ss += float64(f) * float64(f)
	}
	if x.norm {
		// As prepare does on insert.
		if ss == 0 {
			clear(buf)
		} else {
			inv := 1 / math.Sqrt(ss)
			for i, f := range buf {
				buf[i] = float32(float64(f) * inv)
			}
		}
	}
	return x.dist(q.q.v, buf), true
}

// sq8Row lays stored (AppendSQ8's lo, step, codes) out as an index row,
// the squared norm computed as setParams does; nil for bad parameters.
func (v *View) sq8Row(stored []byte) []byte {
	x := v.x
	if cap(v.row) < x.rowLen {
		v.row = make([]byte, x.rowLen)
	}
	row := v.row[:x.rowLen]
	le := binary.LittleEndian
	lo := math.Float32frombits(le.Uint32(stored))
	step := math.Float32frombits(le.Uint32(stored[4:]))
	if !finite(lo) || !finite(step) || step < 0 || !finite(lo+sq8Levels*step) {
		return nil
	}
	copy(row[sq8Header:], stored[8:])
	if x.isL2 {
		setParams(row, x.dim, lo, step, false)
	} else {
		// Only L2 reads the squared norm.
		le.PutUint32(row[0:], math.Float32bits(lo))
		le.PutUint32(row[4:], math.Float32bits(step))
	}
	return row
}

// residualRow lays an SQ8Residual row in its stored form (RowLen bytes,
// coded against the graph's centroid table) out as an index row; nil when
// malformed.
func (v *View) residualRow(stored []byte) []byte {
	x := v.x
	if x.checkStoredRow(stored) != nil {
		return nil
	}
	if cap(v.row) < x.rowLen {
		v.row = make([]byte, x.rowLen)
	}
	row := v.row[:x.rowLen]
	copy(row, stored[:sq8Header])
	copy(row[sq8Header:], stored[residualRecord:])
	copy(row[sq8Header+x.dim:], stored[sq8Header:residualRecord])
	return row
}

// RowDecoder returns a View that decodes rows (DecodeRow) with v's options
// and centroid table and scratch of its own, so that it may be used beside
// v, in another goroutine. It holds no graph: it must not search.
func (v *View) RowDecoder() *View { return &View{x: v.x, table: v.table} }

// DecodeRow returns the vector an SQ8Residual row in its stored form
// decodes to against the graph's centroid table (what Index.Vector
// returns for it), or false when the row is malformed or the graph's code
// is not SQ8Residual.
func (v *View) DecodeRow(stored []byte) ([]float32, bool) {
	if v.x.code != SQ8Residual {
		return nil, false
	}
	row := v.residualRow(stored)
	if row == nil {
		return nil, false
	}
	out := make([]float32, v.x.dim)
	v.x.decodeResidual(out, row)
	return out, true
}

// zeroDistance is the distance from q to the zero vector.
func (v *View) zeroDistance(q Query) float32 {
	x := v.x
	if !x.isL2 {
		return 1
	}
	if x.code != Float32 {
		return max(0, q.q.sq)
	}
	return x.dist(q.q.v, make([]float32, x.dim))
}

// Query is a query vector prepared for a View's space and code.
type Query struct{ q query }

// Prepare checks q and prepares it (normalized, for cosine).
func (v *View) Prepare(q []float32) (Query, error) {
	p, err := v.x.prepare(q, true)
	if err != nil {
		return Query{}, err
	}
	return Query{q: v.x.newQuery(p)}, nil
}

// Search walks the graph from its entry point as Index.Search's walk does
// and returns up to ef slots that were live when the graph was written
// (and, with allow, are allowed), closest first; disallowed slots are
// walked through but never returned. It never scans exactly: a caller
// with a filter follows PlanFiltered first. vector gives each visited
// slot's stored vector; a slot without one is skipped. Slots whose vector
// has changed since the graph was written are returned with their
// distance to the new vector: callers that know such slots drop them and
// compare them separately.
func (v *View) Search(q Query, ef int, allow Allow, vector StoredVector) ([]Result, error) {
	if ef <= 0 {
		ef = v.x.opts.EfSearch
	}
	if !v.hasEntry || v.nLive == 0 {
		return nil, nil
	}
	// A slot without a vector (its record is gone) routes with the zero
	// vector, as UnmarshalGraph leaves it, and is never returned.
	zero := v.zeroDistance(q)
	dist := func(id uint32) (float32, bool, error) {
		s := vector(id)
		if s == nil {
			return zero, false, nil
		}
		d, ok := v.Distance(q, s)
		if !ok {
			return 0, false, fmt.Errorf("%w: vector %d malformed", ErrCorrupt, id)
		}
		return d, true, nil
	}
	n := uint32(len(v.off))
	ep := v.epID
	d, hasVec, err := dist(ep)
	if err != nil {
		return nil, err
	}
	for l := v.epLevel; l > 0; l-- {
		for changed := true; changed; {
			changed = false
			nbs := v.neighbours(ep, l)
			for i := 0; i+4 <= len(nbs); i += 4 {
				nb := binary.LittleEndian.Uint32(nbs[i:])
				if nb >= n || v.off[nb] == 0 {
					continue
				}
				dn, has, err := dist(nb)
				if err != nil {
					return nil, err
				}
				if dn < d {
					ep, d, hasVec, changed = nb, dn, has, true
				}
			}
		}
	}
	// Layer 0: Algorithm 2, as searchLayerLocked does.
	if len(v.marks) < int(n) {
		v.marks = make([]uint32, n)
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 {
		clear(v.marks)
		v.gen = 1
	}
	gen, marks := v.gen, v.marks
	var cands minHeap
	var res maxHeap
	// returnable marks the candidates that have a vector.
	returnable := func(id uint32, has bool) bool { return has && v.live[id] && (allow == nil || allow.Contains(id)) }
	marks[ep] = gen
	cands.push(cand{d, ep})
	if returnable(ep, hasVec) {
		res.push(cand{d, ep})
	}
	for len(cands) > 0 {
		c := cands.pop()
		if len(res) >= ef && c.d > res[0].d {
			break
		}
		nbs := v.neighbours(c.id, 0)
		for i := 0; i+4 <= len(nbs); i += 4 {
			nb := binary.LittleEndian.Uint32(nbs[i:])
			if nb >= n || marks[nb] == gen || v.off[nb] == 0 {
				continue
			}
			marks[nb] = gen
			dn, has, err := dist(nb)
			if err != nil {
				return nil, err
			}
			if len(res) < ef || dn < res[0].d {
				cands.push(cand{dn, nb})
				if returnable(nb, has) {
					if len(res) < ef {
						res.push(cand{dn, nb})
					} else {
						res.replaceTop(cand{dn, nb})
					}
				}
			}
		}
	}
	return toResults(res.drainSorted(nil), ef), nil
}

// header is the fixed part of MarshalBinary's and MarshalGraph's format.
type header struct {
	version       uint32
	opts          Options
	missing       bool // written by MarshalGraph: no vectors
	draws         uint64
	n             int
	epID, epLevel uint32
	off           int       // offset of the first slot
	centroids     []float32 // version 4, code sq8r: the centroid table
	// centroidBytes are the table's bytes in data; knownCentroids says
	// they were those of the known table readHeaderKnown was given, and
	// left undecoded (centroids nil).
	centroidBytes  []byte
	knownCentroids bool
}

// readHeader checks data's magic, version and checksum and reads its
// header (errors are wrapped as corrupt by the callers).
func readHeader(data []byte) (header, error) { return readHeaderKnown(data, nil) }

// readHeaderKnown is readHeader, leaving the centroid table undecoded
// when it is the known one.
func readHeaderKnown(data []byte, known *centroidTable) (header, error) {
	var h header
	if len(data) < headerLenV1+4 || string(data[:8]) != magic {
		return h, errors.New("bad magic or too short")
	}
	le := binary.LittleEndian
	h.version = le.Uint32(data[8:])
	switch {
	case h.version > formatVersion:
		return h, fmt.Errorf("%w: %d (this build reads up to %d)", ErrUnsupportedVersion, h.version, formatVersion)
	case h.version < 1:
		return h, fmt.Errorf("format version %d", h.version)
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != le.Uint32(data[len(data)-4:]) {
		return h, errors.New("checksum mismatch")
	}
	d := &decoder{b: body, off: 12}
	opts := Options{
		Space: Space(d.u32()), Dim: int(d.u32()), M: int(d.u32()),
		EfConstruction: int(d.u32()), EfSearch: int(d.u32()),
	}
	if h.version >= 2 {
		opts.Code = Code(d.u32())
	}
	if opts.Code == SQ8Residual && h.version < 4 {
		return h, fmt.Errorf("code sq8r in a version %d file", h.version)
	}
	if h.version >= 3 {
		flags := d.u32()
		if flags&^flagNoVectors != 0 {
			return h, fmt.Errorf("unknown flags %#x", flags)
		}
		h.missing = flags&flagNoVectors != 0
	}
	opts.Seed = int64(d.u64())
	h.draws = d.u64()
	h.n = int(d.u32())
	h.epID, h.epLevel = d.u32(), d.u32()
	if h.version >= 4 {
		k := int(d.u32())
		size := 4 * opts.Dim // a centroid's bytes: float32s (4), AppendSQ8 (5)
		if h.version >= 5 {
			size = 8 + opts.Dim
		}
		if k > residualCentroids || opts.Dim <= 0 || opts.Dim > MaxDim || k*size > len(body)-d.off {
			return h, fmt.Errorf("%d centroids", k)
		}
		if k > 0 && opts.Code != SQ8Residual {
			return h, fmt.Errorf("%d centroids for code %v", k, opts.Code)
		}
		h.centroidBytes = d.b[d.off : d.off+k*size]
		if k > 0 && known != nil && known.dim == opts.Dim && known.version == h.version && bytes.Equal(known.raw, h.centroidBytes) {
			h.knownCentroids = true
			d.off += k * size
		} else if h.centroids = make([]float32, k*opts.Dim); h.version >= 5 {
			for c := range k {
				v, err := DecodeSQ8(d.b[d.off : d.off+size])
				if err != nil {
					return h, fmt.Errorf("centroid %d: %w", c, err)
				}
				copy(h.centroids[c*opts.Dim:], v)
				d.off += size
			}
		} else {
			for i := range h.centroids {
				f := math.Float32frombits(d.u32())
				if !finite(f) {
					return h, errors.New("non-finite centroid component")
				}
				h.centroids[i] = f
			}
		}
	}
	if d.bad {
		return h, errShort
	}
	if opts.Dim == 0 || opts.M == 0 || opts.EfConstruction == 0 || opts.EfSearch == 0 {
		return h, errors.New("zero parameter in header")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return h, err
	}
	h.opts = o
	h.off = d.off
	return h, nil
}

package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"sync/atomic"
)

// Serialized format (all integers little endian), version 3:
//
//	magic      [8]byte "CAIRNHNS"
//	version    uint32 (3)
//	space      uint32
//	dim, m, efConstruction, efSearch uint32
//	code       uint32 (0 float32, 1 sq8)
//	flags      uint32 (bit 0: the slots hold no vectors, see MarshalGraph)
//	seed       int64
//	draws      uint64 (levels drawn so far)
//	slots      uint32
//	entryID    uint32
//	entryLevel uint32 (0xFFFFFFFF: empty graph)
//	per slot:  state uint8 (0 empty, 1 live, 2 deleted); if not empty:
//	           level uint8, the vector (absent when flags bit 0 is set),
//	           then for layers 0..level:
//	           count uint16, count uint32 neighbour ids
//	crc32c     uint32 (Castagnoli) of every byte before it
//
// The vector is dim float32s for the float32 code; for sq8 it is lo and
// step (float32) and dim code bytes (the decoded norm is recomputed).
// Version 4 (written for the sq8r code only; the others are still written
// as version 3) adds after entryLevel the centroid table:
//
//	centroids  uint32 (count k)
//	           k*dim float32
//
// and an sq8r vector is lo, step, t (float32), the centroid id (uint16,
// 0xFFFF for none) and dim code bytes (see residual.go). Version 5 is
// version 4 with the table in 8 bits, each centroid as AppendSQ8 lays out
// a vector (lo, step float32, dim code bytes, decoding to the centroid
// exactly): a quarter of the bytes. Tables trained by an index are
// written so; a table without an exact 8-bit form (installed by an
// older build's files) is written as version 4.
// Version 2 is version 3 without the flags field (vectors always
// present); version 1 is version 2 without the code field (always float32).
const (
	magic         = "CAIRNHNS"
	formatVersion = 5
	headerLenV1   = 8 + 4 + 4 + 16 + 8 + 8 + 12
	headerLen     = headerLenV1 + 8
	noEntry       = math.MaxUint32
	// flagNoVectors marks data written by MarshalGraph.
	flagNoVectors = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary encodes the index, tombstones included. It waits for
// running mutations; searches continue meanwhile.
func (x *Index) MarshalBinary() ([]byte, error) { return x.marshal(true) }

// MarshalGraph encodes the index like MarshalBinary but without its
// vectors, for callers that store the vectors themselves (once) and hand
// them back to UnmarshalGraph. At dimension 384 it is about a tenth of
// MarshalBinary's size for Float32 and a third for SQ8.
func (x *Index) MarshalGraph() ([]byte, error) { return x.marshal(false) }

func (x *Index) marshal(withVectors bool) ([]byte, error) {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.mu.state)
	for n > 0 && atomic.LoadUint32(&x.mu.state[n-1]) == stateEmpty {
		n--
	}
	size := headerLen + n + 4 + 4 + len(x.mu.centroidCodes) + 4*len(x.mu.centroids)
	vecLen := 4 * x.dim
	switch x.code {
	case SQ8:
		vecLen = 8 + x.dim
	case SQ8Residual:
		vecLen = residualRecord + x.dim
	}
	var flags uint32
	if !withVectors {
		vecLen, flags = 0, flagNoVectors
	}
	for id := range n {
		if atomic.LoadUint32(&x.mu.state[id]) != stateEmpty {
			size += 1 + vecLen + int(x.mu.levels[id]+1)*2 + 4*int(x.mu.links0[id*x.stride])
			for l := 1; l <= int(x.mu.levels[id]); l++ {
				size += 4 * int(x.listLocked(uint32(id), l)[0])
			}
		}
	}
	b := make([]byte, 0, size)
	b = append(b, magic...)
	le := binary.LittleEndian
	version := uint32(3) // what readers before the sq8r code read
	if x.code == SQ8Residual {
		version = 4
		if len(x.mu.centroids) == 0 || x.mu.centroidCodes != nil {
			version = 5
		}
	}
	b = le.AppendUint32(b, version)
	b = le.AppendUint32(b, uint32(x.opts.Space))
	b = le.AppendUint32(b, uint32(x.dim))
	b = le.AppendUint32(b, uint32(x.m))
	b = le.AppendUint32(b, uint32(x.opts.EfConstruction))
	b = le.AppendUint32(b, uint32(x.opts.EfSearch))
	b = le.AppendUint32(b, uint32(x.code))
	b = le.AppendUint32(b, flags)
	b = le.AppendUint64(b, uint64(x.opts.Seed))
	b = le.AppendUint64(b, x.draws)
	b = le.AppendUint32(b, uint32(n))
	if ep, lvl, ok := x.entryPoint(); ok {
		b = le.AppendUint32(b, ep)
		b = le.AppendUint32(b, uint32(lvl))
	} else {
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, noEntry)
	}
	switch version {
	case 4:
		b = le.AppendUint32(b, uint32(len(x.mu.halfNorm)))
		for _, f := range x.mu.centroids {
			b = le.AppendUint32(b, math.Float32bits(f))
		}
	case 5:
		b = le.AppendUint32(b, uint32(len(x.mu.halfNorm)))
		stride := sq8Stride(x.dim)
		for o := 0; o < len(x.mu.centroidCodes); o += stride {
			b = append(b, x.mu.centroidCodes[o:o+8]...)
			b = append(b, x.mu.centroidCodes[o+sq8Header:o+sq8Header+x.dim]...)
		}
	}
	for id := range n {
		st := atomic.LoadUint32(&x.mu.state[id])
		switch st {
		case stateEmpty:
			b = append(b, 0)
			continue
		case stateLive:
			b = append(b, 1)
		case stateDeleted:
			b = append(b, 2)
		default:
			return nil, fmt.Errorf("%w: slot %d in state %d while marshalling", ErrInvariant, id, st)
		}
		lvl := int(x.mu.levels[id])
		b = append(b, uint8(lvl))
		switch {
		case !withVectors:
		case x.code == SQ8Residual:
			b = x.appendStoredRowLocked(b, uint32(id))
		case x.code == SQ8:
			row := x.rowLocked(uint32(id))
			b = append(b, row[:8]...)
			b = append(b, row[sq8Header:sq8Header+x.dim]...)
		default:
			for _, f := range x.vecLocked(uint32(id)) {
				b = le.AppendUint32(b, math.Float32bits(f))
			}
		}
		for l := 0; l <= lvl; l++ {
			blk := x.listLocked(uint32(id), l)
			cnt := int(atomic.LoadUint32(&blk[0]))
			b = le.AppendUint16(b, uint16(cnt))
			for _, nb := range blk[1 : 1+cnt] {
				b = le.AppendUint32(b, nb)
			}
		}
	}
	return le.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// decoder reads little-endian fields, remembering the first short read.
type decoder struct {
	b   []byte
	off int
	bad bool
}

func (d *decoder) take(n int) []byte {
	if d.bad || n < 0 || len(d.b)-d.off < n {
		d.bad = true
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

func (d *decoder) u8() uint8 {
	if p := d.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if p := d.take(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if p := d.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if p := d.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

var errShort = errors.New("truncated")

// maxDecodeAlloc bounds the memory Unmarshal allocates relative to its
// input, so hostile headers cannot exhaust memory.
func maxDecodeAlloc(inputLen int) int { return 64*inputLen + 256<<20 }

// Unmarshal decodes data written by MarshalBinary. Damaged or hostile input
// yields an error wrapping ErrCorrupt (ErrUnsupportedVersion for a newer
// format); it never panics. Data written by MarshalGraph is refused as
// corrupt: it needs UnmarshalGraph.
func Unmarshal(data []byte) (*Index, error) { return UnmarshalGraph(data, nil) }

// UnmarshalGraph decodes data written by MarshalGraph, taking each occupied
// slot's vector from vector: the vector as it was given to Insert, which is
// prepared and encoded again exactly as Insert did (so an SQ8 caller that
// inserts DecodeSQ8 of what it stores gets the same codes back). A slot whose vector is nil becomes a tombstone (its
// record was deleted since the graph was written; it keeps routing
// searches with a zero vector until the next repair). An error from vector
// is returned wrapped, not as corruption. Data written by MarshalBinary
// carries its own vectors, and vector is not called.
func UnmarshalGraph(data []byte, vector func(id uint32) ([]float32, error)) (*Index, error) {
	x, missing, err := unmarshal(data)
	if err == nil && missing && vector == nil {
		err = errors.New("the data holds no vectors (written by MarshalGraph)")
	}
	if err != nil {
		if errors.Is(err, ErrUnsupportedVersion) || errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if missing {
		if err := x.fillVectors(vector); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// fillVectors stores each occupied slot's vector from vector, turning slots
// without one into tombstones.
// REQUIRES: x not shared yet.
func (x *Index) fillVectors(vector func(id uint32) ([]float32, error)) error {
	return x.fillSlots(func(id uint32) (bool, error) {
		v, err := vector(id)
		if err != nil || v == nil {
			return false, err
		}
		p, err := x.prepare(v, false)
		if err != nil {
			return false, err
		}
		x.storeLocked(id, p)
		return true, nil
	})
}

// fillSlots calls fill for each occupied slot of a decoded graph, which
// stores the slot's vector and reports whether it had one; a slot without
// one becomes a tombstone (its record was deleted since the graph was
// written: it keeps routing searches until the next repair).
// REQUIRES: x not shared yet.
func (x *Index) fillSlots(fill func(id uint32) (bool, error)) error {
	for id := range x.mu.state {
		st := x.mu.state[id]
		if st == stateEmpty {
			continue
		}
		ok, err := fill(uint32(id))
		if err != nil {
			return fmt.Errorf("index: vector %d: %w", id, err)
		}
		if !ok {
			if x.code == SQ8Residual {
				// The zero vector routes it: no centroid either.
				binary.LittleEndian.PutUint16(x.rowLocked(uint32(id))[sq8Header+x.dim:], noCentroid)
			}
			if st == stateLive {
				x.mu.state[id] = stateDeleted
				x.live.Add(-1)
				x.tombstones++
			}
		}
	}
	return nil
}

// unmarshal decodes an index written by MarshalBinary, checking every field
// against the header and the data's size (errors here are wrapped as corrupt
// by Unmarshal).
//
// It is long because it is a decoder reading the format field by field, in
// the byte order MarshalBinary writes them.
//
// missing reports data written by MarshalGraph: the vectors are left zero.
func unmarshal(data []byte) (x *Index, missing bool, err error) {
	h, err := readHeader(data)
	if err != nil {
		return nil, false, err
	}
	le := binary.LittleEndian
	body := data[:len(data)-4]
	d := &decoder{b: body, off: h.off}
	o, missing, draws, n, epID, epLevel := h.opts, h.missing, h.draws, h.n, h.epID, h.epLevel
	x = newIndex(o, bestKernel())
	if len(h.centroids) > 0 {
		x.setCentroidsLocked(h.centroids)
	}
	if n > len(body)-d.off {
		return nil, false, fmt.Errorf("%d slots in %d bytes", n, len(body)-d.off)
	}
	if n*(4*x.dim+4*x.stride+14) > maxDecodeAlloc(len(data)) {
		// (an upper bound for SQ8 too, whose rows are smaller)
		return nil, false, fmt.Errorf("%d slots of dimension %d too large for %d bytes", n, x.dim, len(data))
	}
	x.growLocked(n)
	x.mu.state = x.mu.state[:n]
	live, dead := 0, 0
	for id := range n {
		switch d.u8() {
		case 0:
			continue
		case 1:
			x.mu.state[id] = stateLive
			live++
		case 2:
			x.mu.state[id] = stateDeleted
			dead++
		default:
			return nil, false, fmt.Errorf("slot %d: bad state", id)
		}
		lvl := int(d.u8())
		if lvl > maxLevel {
			return nil, false, fmt.Errorf("slot %d: level %d", id, lvl)
		}
		if !missing {
			if err := x.decodeVector(d, uint32(id)); err != nil {
				return nil, false, err
			}
		}
		if lvl*x.ustr > maxDecodeAlloc(len(data))/4-len(x.mu.upper) {
			return nil, false, fmt.Errorf("slot %d: upper layers too large", id)
		}
		x.allocLevelsLocked(uint32(id), lvl)
		for l := 0; l <= lvl; l++ {
			cnt := int(d.u16())
			if d.bad {
				return nil, false, errShort
			}
			if cnt > x.maxNeighbours(l) {
				return nil, false, fmt.Errorf("slot %d layer %d: %d neighbours", id, l, cnt)
			}
			blk := x.listLocked(uint32(id), l)
			raw := d.take(4 * cnt)
			if raw == nil {
				return nil, false, errShort
			}
			for i := range cnt {
				nb := le.Uint32(raw[4*i:])
				if int(nb) >= n {
					return nil, false, fmt.Errorf("slot %d layer %d: neighbour %d out of range", id, l, nb)
				}
				blk[1+i] = nb
			}
			blk[0] = uint32(cnt)
		}
	}
	if d.bad {
		return nil, false, errShort
	}
	if d.off != len(body) {
		return nil, false, fmt.Errorf("%d trailing bytes", len(body)-d.off)
	}
	if epLevel != noEntry {
		if int(epID) >= n || epLevel > maxLevel {
			return nil, false, errors.New("entry point out of range")
		}
		x.entry.Store(packEntry(epID, int(epLevel)))
	}
	x.live.Store(int64(live))
	x.tombstones = dead
	x.draws = draws
	x.rng = rand.New(rand.NewPCG(uint64(o.Seed), draws))
	if err := x.checkLocked(); err != nil {
		return nil, false, err
	}
	return x, missing, nil
}

// decodeVector reads slot id's vector from d.
// REQUIRES: x.mu held exclusively (or x not shared yet), id in range.
func (x *Index) decodeVector(d *decoder, id uint32) error {
	le := binary.LittleEndian
	if x.code == SQ8Residual {
		raw := d.take(residualRecord + x.dim)
		if raw == nil {
			return errShort
		}
		if err := x.checkStoredRow(raw); err != nil {
			return fmt.Errorf("slot %d: %w", id, err)
		}
		x.setStoredRowLocked(id, raw)
		return nil
	}
	if x.code == SQ8 {
		raw := d.take(8 + x.dim)
		if raw == nil {
			return errShort
		}
		lo := math.Float32frombits(le.Uint32(raw))
		step := math.Float32frombits(le.Uint32(raw[4:]))
		if !finite(lo) || !finite(step) || step < 0 || !finite(lo+sq8Levels*step) {
			return fmt.Errorf("slot %d: bad code parameters %v, %v", id, lo, step)
		}
		row := x.rowLocked(id)
		copy(row[sq8Header:], raw[8:])
		setParams(row, x.dim, lo, step, x.norm)
		return nil
	}
	raw := d.take(4 * x.dim)
	if raw == nil {
		return errShort
	}
	v := x.vecLocked(id)
	for i := range v {
		f := math.Float32frombits(le.Uint32(raw[4*i:]))
		if !finite(f) {
			return fmt.Errorf("slot %d: non-finite vector component", id)
		}
		v[i] = f
	}
	return nil
}

func finite(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }

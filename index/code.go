package index

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Code is how the index holds its vectors.
type Code int

const (
	// Float32 holds every vector as given (normalized, for cosine): 4 bytes
	// per component, distances exact.
	Float32 Code = iota
	// SQ8 holds every vector as 8-bit codes with a per-vector offset and
	// step (x[i] ≈ lo + step*c[i], lo and step from the vector's own
	// minimum and maximum): about a quarter of Float32's bytes. Distances
	// are computed between the float32 query and the decoded vector, so
	// they are approximate (to about 1e-3 on unit vectors of dimension
	// 384), and Vector returns the decoded vector. In the cosine space lo
	// and step are scaled so that the decoded vector has unit norm (see
	// encodeSQ8).
	SQ8
	// SQ8Residual is SQ8 of each vector's residual to the nearest of
	// residualCentroids centroids trained on the index's vectors (see
	// residual.go): the same bytes plus two, about half SQ8's error on
	// clustered data.
	SQ8Residual
)

// rowStride is the bytes of one slot's row for a code other than Float32.
func rowStride(c Code, dim int) int {
	if c == SQ8Residual {
		return residualStride(dim)
	}
	return sq8Stride(dim)
}

// String returns the code's name: "float32" or "sq8".
func (c Code) String() string {
	switch c {
	case Float32:
		return "float32"
	case SQ8:
		return "sq8"
	case SQ8Residual:
		return "sq8r"
	}
	return fmt.Sprintf("Code(%d)", int(c))
}

// ParseCode maps a code's name ("float32", "sq8") to a Code.
func ParseCode(name string) (Code, error) {
	switch name {
	case "float32":
		return Float32, nil
	case "sq8":
		return SQ8, nil
	case "sq8r":
		return SQ8Residual, nil
	}
	return 0, fmt.Errorf("%w: unknown code %q", ErrInvalidOptions, name)
}

// An SQ8 row is sq8Header bytes of parameters, then dim code bytes, padded
// to a multiple of 4 so the float parameters of every row stay aligned:
//
//	lo   float32  decoded value of code 0
//	step float32  decoded distance between adjacent codes
//	sq   float32  squared norm of the decoded vector (for L2)
//	c    [dim]uint8
//
// The parameters sit in front of the codes so that the cache lines a
// distance reads are contiguous.
const sq8Header = 12

func sq8Stride(dim int) int { return (sq8Header + dim + 3) &^ 3 }

// sq8Levels is the largest code.
const sq8Levels = 255

// encodeSQ8 writes v's row into row (len sq8Stride(len(v))). With unit
// (v of unit norm: the cosine space) lo and step are then scaled so that
// the decoded vector has unit norm too. A cosine distance depends only on
// the decoded vector's direction, and the scaling removes the part of the
// rounding error e along the vector x itself: what is left of q·e is
// (q - (q·x)x)·e, whose variance is 1 - (q·x)² times that of q·e, so the
// distances to a query's near neighbours, the ones that decide recall, are
// the most exact (at 1,000,000 vectors of the bench's easy set, the exact
// ranking by SQ8 distances found 0.978 of the true top 10 without the
// scaling and 0.9905 with it). The codes are those of the unscaled range,
// so encoding the decoded vector again gives the same codes.
func encodeSQ8(row []byte, v []float32, unit bool) {
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for _, f := range v {
		lo = min(lo, f)
		hi = max(hi, f)
	}
	if len(v) == 0 {
		lo, hi = 0, 0
	}
	// In float64, so that the range of two components near ±MaxFloat32
	// does not overflow.
	step := (float64(hi) - float64(lo)) / sq8Levels
	codes := row[sq8Header : sq8Header+len(v)]
	if step == 0 {
		clear(codes)
	} else {
		inv := 1 / step
		for i, f := range v {
			c := int((float64(f)-float64(lo))*inv + 0.5)
			codes[i] = uint8(max(0, min(sq8Levels, c)))
		}
	}
	clear(row[sq8Header+len(v):])
	setParams(row, len(v), lo, float32(step), unit)
}

// setParams stores lo and step in row, whose codes are written, and the
// squared norm they give the decoded vector of dimension dim; with unit,
// lo and step are first scaled so that the decoded vector has unit norm
// (see encodeSQ8). A row already of unit norm to rounding is left as it
// is, so that loading a scaled row again gives it back bit for bit.
func setParams(row []byte, dim int, lo, step float32, unit bool) {
	sq := decodedNorm2(row[sq8Header:sq8Header+dim], lo, step)
	if unit && sq > 0 && math.Abs(sq-1) > unitTolerance {
		s := 1 / math.Sqrt(sq)
		lo, step = float32(float64(lo)*s), float32(float64(step)*s)
		sq = decodedNorm2(row[sq8Header:sq8Header+dim], lo, step)
	}
	binary.LittleEndian.PutUint32(row[0:], math.Float32bits(lo))
	binary.LittleEndian.PutUint32(row[4:], math.Float32bits(step))
	binary.LittleEndian.PutUint32(row[8:], math.Float32bits(float32(sq)))
}

// unitTolerance is how far from 1 the squared norm of a row scaled by
// setParams may be: float32 rounding of lo, step and the decoded
// components (relative 6e-8 each) moves it by a few 1e-7.
const unitTolerance = 1e-6

// decodedNorm2 is the squared norm of the vector that codes decode to.
func decodedNorm2(codes []byte, lo, step float32) float64 {
	var sq float64
	for _, c := range codes {
		d := float64(lo + step*float32(c))
		sq += d * d
	}
	return sq
}

// params returns an SQ8 row's lo, step and squared norm.
func params(row []byte) (lo, step, sq float32) {
	_ = row[11]
	return math.Float32frombits(binary.LittleEndian.Uint32(row[0:])),
		math.Float32frombits(binary.LittleEndian.Uint32(row[4:])),
		math.Float32frombits(binary.LittleEndian.Uint32(row[8:]))
}

// decodeSQ8 writes the decoded vector of row into dst (len dim).
func decodeSQ8(dst []float32, row []byte) {
	lo, step, _ := params(row)
	codes := row[sq8Header : sq8Header+len(dst)]
	for i, c := range codes {
		dst[i] = lo + step*float32(c)
	}
}

// query is a vector prepared for distance computations against stored
// vectors: for SQ8 its component sum and squared norm are computed once.
type query struct {
	v       []float32
	sum, sq float32
	qc      *centroidDots // SQ8Residual: q·centroid, computed when first needed
}

// centroidDots holds a query's dot products with the centroids: vals[k] is
// NaN until computed; touched lists the computed ones, so that reusing the
// buffer for another query resets only those.
// full says every value was computed at once (fillCentroidDots).
type centroidDots struct {
	vals    []float32
	touched []uint16
	full    bool
}

func (c *centroidDots) reset() {
	nan := float32(math.NaN())
	if c.vals == nil || c.full {
		c.vals = c.vals[:0]
		for range residualCentroids {
			c.vals = append(c.vals, nan)
		}
		c.full = false
	}
	for _, k := range c.touched {
		c.vals[k] = nan
	}
	c.touched = c.touched[:0]
}

// newQuery prepares v (len dim) as a query; it keeps v.
func (x *Index) newQuery(v []float32) query {
	return x.newQueryBuf(v, nil)
}

// newQueryBuf is newQuery keeping the centroid dots of SQ8Residual in qc,
// allocated when nil.
func (x *Index) newQueryBuf(v []float32, qc *centroidDots) query {
	q := query{v: v}
	if x.code == SQ8Residual {
		if qc == nil {
			qc = &centroidDots{}
		}
		qc.reset()
		q.qc = qc
	}
	if x.code != Float32 {
		var sum, sq float32
		for _, f := range v {
			sum += f
			sq += f * f
		}
		q.sum, q.sq = sum, sq
	}
	return q
}

// storedQueryLocked returns slot id's vector as a query: the stored vector
// itself for Float32, decoded into buf (len dim) for SQ8.
// REQUIRES: x.mu held and id in range.
func (x *Index) storedQueryLocked(buf []float32, qc *centroidDots, id uint32) query {
	if x.code == Float32 {
		return query{v: x.vecLocked(id)}
	}
	x.decodeRowLocked(buf, id)
	return x.newQueryBuf(buf, qc)
}

// decodeRowLocked writes slot id's decoded vector into dst (len dim).
// REQUIRES: x.mu held, x.code != Float32 and id in range.
func (x *Index) decodeRowLocked(dst []float32, id uint32) {
	if x.code == SQ8Residual {
		x.decodeResidual(dst, x.rowLocked(id))
		return
	}
	decodeSQ8(dst, x.rowLocked(id))
}

// rowLocked returns slot id's SQ8 row.
// REQUIRES: x.mu held, x.code == SQ8 and id in range.
func (x *Index) rowLocked(id uint32) []byte {
	o := int(id) * x.rowLen
	return x.mu.codes[o : o+x.rowLen : o+x.rowLen]
}

// distLocked is the space's distance from q to slot id.
// REQUIRES: x.mu held and id in range.
func (x *Index) distLocked(q query, id uint32) float32 {
	if x.code == Float32 {
		return x.dist(q.v, x.vecLocked(id))
	}
	row := x.rowLocked(id)
	raw := x.kern.dotU8(q.v, row[sq8Header:sq8Header+x.dim])
	if x.code == SQ8Residual {
		return x.residualDist(q, row, raw)
	}
	return x.sq8Dist(q, row, raw)
}

// sq8Dist turns raw = q·codes into the space's distance from q to the
// decoded row: q·x̂ = lo*sum(q) + step*raw, and for L2
// |q - x̂|² = |q|² - 2 q·x̂ + |x̂|².
func (x *Index) sq8Dist(q query, row []byte, raw float32) float32 {
	lo, step, sq := params(row)
	dot := lo*q.sum + step*raw
	if x.isL2 {
		return max(0, q.sq-2*dot+sq)
	}
	return 1 - dot
}

// distBatchLocked sets out[i] to the distance from q to slot ids[i].
// REQUIRES: x.mu held, every id in range, len(out) >= len(ids).
func (x *Index) distBatchLocked(q query, ids []uint32, out []float32) {
	out = out[:len(ids)]
	n := len(x.mu.state)
	if x.code == Float32 {
		vecs := x.mu.vecs[:n*x.dim]
		if x.isL2 {
			x.kern.l2Batch(q.v, vecs, x.dim, ids, out)
			return
		}
		x.kern.dotBatch(q.v, vecs, x.dim, ids, out)
		for i, d := range out {
			out[i] = 1 - d
		}
		return
	}
	codes := x.mu.codes[:n*x.rowLen]
	x.kern.dotU8Batch(q.v, codes, x.rowLen, sq8Header, ids, out)
	if x.code == SQ8Residual {
		for i, id := range ids {
			o := int(id) * x.rowLen
			out[i] = x.residualDist(q, codes[o:o+x.rowLen], out[i])
		}
		return
	}
	for i, id := range ids {
		o := int(id) * x.rowLen
		out[i] = x.sq8Dist(q, codes[o:o+sq8Header], out[i])
	}
}

// storeLocked writes the prepared vector v into slot id.
// REQUIRES: x.mu held exclusively and id in range.
func (x *Index) storeLocked(id uint32, v []float32) {
	if x.code == Float32 {
		copy(x.vecLocked(id), v)
		return
	}
	if x.code == SQ8Residual {
		x.encodeResidual(x.rowLocked(id), v, x.nearestCentroid(v), nil)
		return
	}
	encodeSQ8(x.rowLocked(id), v, x.norm)
}

// Recode re-encodes every stored vector in code and keeps the graph, so a
// Float32 index (one read from an older file, say) becomes SQ8 without
// being rebuilt. Going from SQ8 to Float32 keeps the decoded vectors;
// going from SQ8 to SQ8Residual trains the centroids on them (with
// trainAt vectors or more) and keeps every SQ8 row as it is, without a
// centroid: only vectors inserted later are coded as residuals. It
// waits for running mutations and searches, and blocks new ones meanwhile.
func (x *Index) Recode(code Code) error {
	if code != Float32 && code != SQ8 && code != SQ8Residual {
		return fmt.Errorf("%w: unknown code %d", ErrInvalidOptions, int(code))
	}
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if code == x.code {
		return nil
	}
	n := len(x.mu.state)
	// Every vector as the current code holds it (decoded, for a code).
	vecs := x.mu.vecs
	if x.code != Float32 {
		vecs = make([]float32, n*x.dim)
		for id := range n {
			x.decodeRowLocked(vecs[id*x.dim:(id+1)*x.dim], uint32(id))
		}
	}
	old, oldCodes := x.code, x.mu.codes
	x.mu.vecs, x.mu.codes = nil, nil
	x.mu.centroids, x.mu.halfNorm, x.mu.centroidIDs, x.mu.centroidCodes = nil, nil, nil, nil
	x.code, x.opts.Code = code, code
	switch code {
	case Float32:
		x.mu.vecs = vecs
	case SQ8:
		x.rowLen = rowStride(code, x.dim)
		x.mu.codes = make([]byte, n*x.rowLen)
		for id := range n {
			o := id * x.rowLen
			encodeSQ8(x.mu.codes[o:o+x.rowLen], vecs[id*x.dim:(id+1)*x.dim], x.norm)
		}
	case SQ8Residual:
		x.rowLen = rowStride(code, x.dim)
		x.mu.codes = make([]byte, n*x.rowLen)
		rows := make([][]float32, 0, n)
		for id := range n {
			if x.mu.state[id] != stateEmpty {
				rows = append(rows, vecs[id*x.dim:(id+1)*x.dim])
			}
		}
		x.trainLocked(rows)
		if old == SQ8 {
			// An SQ8 row is an sq8r row without a centroid (lo, step and
			// codes alike; t is SQ8's squared norm, which is what L2
			// needs and cosine does not read without a centroid): kept
			// bit for bit, since coding the decoded vector again would
			// add a second rounding. Rows inserted from now on are
			// residuals.
			oldLen := rowStride(SQ8, x.dim)
			for id := range n {
				row := x.mu.codes[id*x.rowLen : (id+1)*x.rowLen]
				copy(row, oldCodes[id*oldLen:id*oldLen+sq8Header+x.dim])
				binary.LittleEndian.PutUint16(row[sq8Header+x.dim:], noCentroid)
			}
			return nil
		}
		all := make([][]float32, n)
		for id := range n {
			all[id] = vecs[id*x.dim : (id+1)*x.dim]
		}
		buf := make([]float32, x.dim)
		for id, k := range x.assignParallel(all) {
			o := id * x.rowLen
			x.encodeResidual(x.mu.codes[o:o+x.rowLen], all[id], k, buf)
		}
	}
	return nil
}

// SQ8Len is the length of AppendSQ8's encoding of a vector of dimension dim.
func SQ8Len(dim int) int { return 8 + dim }

// AppendSQ8 appends v's SQ8 encoding to dst: lo and step (float32, little
// endian), then one code byte per component, x[i] ≈ lo + step*c[i]. It is
// the form an SQ8 index is built from and marshals, for callers that store
// vectors themselves: DecodeSQ8 gives back the vector an SQ8 index would
// hold, and inserting that vector into an SQ8 index reproduces the codes.
func AppendSQ8(dst []byte, v []float32) []byte { return appendSQ8(dst, v, false) }

// AppendSQ8Unit is AppendSQ8 for a vector of unit norm, as an SQ8 index in
// the cosine space holds it: lo and step are scaled so that the decoded
// vector has unit norm too, which makes cosine distances to it more exact
// (the codes are AppendSQ8's). An index in the cosine space given the
// decoded vector reproduces the codes and, to rounding, lo and step.
func AppendSQ8Unit(dst []byte, v []float32) []byte { return appendSQ8(dst, v, true) }

func appendSQ8(dst []byte, v []float32, unit bool) []byte {
	row := make([]byte, sq8Stride(len(v)))
	encodeSQ8(row, v, unit)
	dst = append(dst, row[:8]...)
	return append(dst, row[sq8Header:sq8Header+len(v)]...)
}

// DecodeSQ8 decodes AppendSQ8's encoding b of a vector of dimension
// len(b)-8. It refuses (with ErrCorrupt) input too short or whose
// parameters are not finite.
func DecodeSQ8(b []byte) ([]float32, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("%w: SQ8 vector of %d bytes", ErrCorrupt, len(b))
	}
	le := binary.LittleEndian
	lo := math.Float32frombits(le.Uint32(b))
	step := math.Float32frombits(le.Uint32(b[4:]))
	if !finite(lo) || !finite(step) || step < 0 || !finite(lo+sq8Levels*step) {
		return nil, fmt.Errorf("%w: SQ8 parameters %v, %v", ErrCorrupt, lo, step)
	}
	v := make([]float32, len(b)-8)
	for i, c := range b[8:] {
		v[i] = lo + step*float32(c)
	}
	return v, nil
}

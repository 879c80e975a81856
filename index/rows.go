package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
)

// An SQ8Residual index's vectors can be stored by the caller as rows, in
// the form MarshalBinary writes them (version 4): lo, step, t (float32),
// the centroid id (uint16, 0xFFFF for none), then dim code bytes, little
// endian. A row depends on the centroid table it was coded against, and
// coding its decoded vector again need not give it back (another centroid
// may be nearer), so a caller that keeps rows gives them back as rows:
// InsertRows and UnmarshalGraphRows take them as stored, and SetCentroids
// installs the table they were coded against.

// ErrNotResidual reports a row operation on an index whose code is not
// SQ8Residual.
var ErrNotResidual = errors.New("index: not an SQ8Residual index")

// TrainRows is the number of vectors an SQ8Residual index trains its
// centroids at, and the least TrainCentroids takes.
const TrainRows = trainAt

// RowLen is the length of an SQ8Residual row of dimension dim.
func RowLen(dim int) int { return residualRecord + dim }

// AppendRow appends slot id's row to dst; false when id holds no live
// vector.
func (x *Index) AppendRow(dst []byte, id uint32) ([]byte, bool, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.code != SQ8Residual {
		return dst, false, ErrNotResidual
	}
	if int(id) >= len(x.mu.state) || atomic.LoadUint32(&x.mu.state[id]) != stateLive {
		return dst, false, nil
	}
	return x.appendStoredRowLocked(dst, id), true, nil
}

// EncodeRow appends to dst the row Insert would store for v now: v
// prepared (normalized, in the cosine space) and coded against the
// nearest centroid, or none before training.
func (x *Index) EncodeRow(dst []byte, v []float32) ([]byte, error) {
	p, err := x.prepare(v, false)
	if err != nil {
		return dst, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.code != SQ8Residual {
		return dst, ErrNotResidual
	}
	row := make([]byte, x.rowLen)
	x.encodeResidual(row, p, x.nearestCentroid(p), nil)
	return x.appendRowBytes(dst, row), nil
}

// TrainCentroids returns the centroid table k-means gives on (a sample of)
// vecs, prepared as Insert prepares them, without installing it: a caller
// that stores rows stores the table too and installs what it stored with
// SetCentroids. Each centroid is the decoding of SQ8 codes, so a caller can
// store the table in 8 bits (AppendSQ8 a centroid) and install its
// DecodeSQ8 at no loss but float32 rounding of the step. It needs at least
// 4,096 vectors.
func (x *Index) TrainCentroids(vecs [][]float32) ([]float32, error) {
	x.mu.RLock() // Recode changes the code
	code := x.code
	x.mu.RUnlock()
	if code != SQ8Residual {
		return nil, ErrNotResidual
	}
	if len(vecs) < trainAt {
		return nil, fmt.Errorf("%w: %d vectors to train on, need %d", ErrInvalidOptions, len(vecs), trainAt)
	}
	prepared := make([][]float32, len(vecs))
	for i, v := range vecs {
		p, err := x.prepare(v, false)
		if err != nil {
			return nil, fmt.Errorf("vector %d: %w", i, err)
		}
		prepared[i] = p
	}
	cent := x.kmeans(prepared)
	quantizeCentroids(cent, x.dim)
	return cent, nil
}

// AppendCentroidTable appends table (k*dim floats) in 8 bits: each
// centroid laid out as AppendSQ8 lays out a vector, with the step and
// codes whose DecodeSQ8 gives the centroid back exactly. It returns false
// (dst unchanged) when a centroid has no such form; a table trained by an
// index always has one (see TrainCentroids, Centroids).
func AppendCentroidTable(dst []byte, table []float32, dim int) ([]byte, bool) {
	if dim <= 0 || len(table)%dim != 0 {
		return dst, false
	}
	codes := exactCodes(table, dim)
	if codes == nil {
		return dst, false
	}
	stride := sq8Stride(dim)
	for o := 0; o < len(codes); o += stride {
		dst = append(dst, codes[o:o+8]...)
		dst = append(dst, codes[o+sq8Header:o+sq8Header+dim]...)
	}
	return dst, true
}

// SetCentroids installs table (k*Dim floats, 1 <= k < 65535) in an
// SQ8Residual index that has none; rows inserted afterwards may refer to
// its centroids.
func (x *Index) SetCentroids(table []float32) error {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case x.code != SQ8Residual:
		return ErrNotResidual
	case len(x.mu.halfNorm) > 0:
		return fmt.Errorf("%w: the index already has centroids", ErrInvalidOptions)
	case len(table) == 0 || len(table)%x.dim != 0 || len(table)/x.dim >= noCentroid:
		return fmt.Errorf("%w: centroid table of %d floats at dimension %d", ErrInvalidOptions, len(table), x.dim)
	}
	for _, f := range table {
		if !finite(f) {
			return fmt.Errorf("%w: non-finite centroid component", ErrInvalidVector)
		}
	}
	x.setCentroidsLocked(append([]float32(nil), table...))
	return nil
}

// InsertRows inserts rows[i] (RowLen(Dim) bytes each, coded against the
// index's centroids) at ids[i] as they are, as InsertBatch inserts
// vectors; the decoded row is the vector linked. It never trains the
// index: the caller coded the rows. Every row is checked before anything
// changes.
func (x *Index) InsertRows(ctx context.Context, ids []uint32, rows [][]byte) error {
	if len(ids) != len(rows) {
		return fmt.Errorf("%w: %d ids, %d rows", ErrBatchMismatch, len(ids), len(rows))
	}
	decoded := make([][]float32, len(rows))
	x.mu.RLock()
	if x.code != SQ8Residual {
		x.mu.RUnlock()
		return ErrNotResidual
	}
	for i, r := range rows {
		if err := x.checkStoredRow(r); err != nil {
			x.mu.RUnlock()
			return fmt.Errorf("%w: id %d: %w", ErrInvalidVector, ids[i], err)
		}
		row := make([]byte, x.rowLen)
		copy(row, r[:sq8Header])
		copy(row[sq8Header:], r[residualRecord:])
		binary.LittleEndian.PutUint16(row[sq8Header+x.dim:], binary.LittleEndian.Uint16(r[12:]))
		decoded[i] = make([]float32, x.dim)
		x.decodeResidual(decoded[i], row)
	}
	x.mu.RUnlock()
	return x.insertBatch(ctx, ids, decoded, rows)
}

// UnmarshalGraphRows is UnmarshalGraph for an SQ8Residual index whose rows
// the caller stores: row gives each occupied slot's row as stored (nil: a
// tombstone), taken as it is. The centroid table is the one in data.
func UnmarshalGraphRows(data []byte, row func(id uint32) ([]byte, error)) (*Index, error) {
	x, missing, err := unmarshal(data)
	if err == nil && x.code != SQ8Residual {
		return nil, ErrNotResidual
	}
	if err == nil && !missing {
		err = errors.New("the data holds its own vectors (written by MarshalBinary)")
	}
	if err != nil {
		if errors.Is(err, ErrUnsupportedVersion) || errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	err = x.fillSlots(func(id uint32) (bool, error) {
		r, err := row(id)
		if err != nil || r == nil {
			return false, err
		}
		if err := x.checkStoredRow(r); err != nil {
			return false, fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		x.setStoredRowLocked(id, r)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return x, nil
}

// checkStoredRow checks a row in its stored form against the index.
// REQUIRES: x.mu held (or x not shared yet).
func (x *Index) checkStoredRow(raw []byte) error {
	if len(raw) != residualRecord+x.dim {
		return fmt.Errorf("row of %d bytes, want %d", len(raw), residualRecord+x.dim)
	}
	le := binary.LittleEndian
	lo := math.Float32frombits(le.Uint32(raw))
	step := math.Float32frombits(le.Uint32(raw[4:]))
	t := math.Float32frombits(le.Uint32(raw[8:]))
	k := int(le.Uint16(raw[12:]))
	if !finite(lo) || !finite(step) || step < 0 || !finite(lo+sq8Levels*step) || !finite(t) {
		return fmt.Errorf("bad code parameters %v, %v, %v", lo, step, t)
	}
	if k != noCentroid && k >= len(x.mu.halfNorm) {
		return fmt.Errorf("centroid %d of %d", k, len(x.mu.halfNorm))
	}
	return nil
}

// setStoredRowLocked copies a checked stored-form row into slot id.
// REQUIRES: x.mu held exclusively (or x not shared yet), or slot id
// pending and not yet reachable (see linkLocked); id in range.
func (x *Index) setStoredRowLocked(id uint32, raw []byte) {
	row := x.rowLocked(id)
	copy(row, raw[:sq8Header])
	copy(row[sq8Header:], raw[residualRecord:])
	copy(row[sq8Header+x.dim:], raw[12:14])
}

// appendStoredRowLocked appends slot id's row in its stored form.
// REQUIRES: x.mu held, id in range.
func (x *Index) appendStoredRowLocked(dst []byte, id uint32) []byte {
	return x.appendRowBytes(dst, x.rowLocked(id))
}

// appendRowBytes appends an in-memory row in its stored form.
func (x *Index) appendRowBytes(dst, row []byte) []byte {
	dst = append(dst, row[:sq8Header]...)
	dst = append(dst, row[sq8Header+x.dim:sq8Header+x.dim+2]...)
	return append(dst, row[sq8Header:sq8Header+x.dim]...)
}

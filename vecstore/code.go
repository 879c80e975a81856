package vecstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cairn-dev/cairn/index"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	bolt "go.etcd.io/bbolt"
)

// sq8Beam multiplies the candidate list of searches in SQ8 and sq8r
// collections (an sq8r collection's rows written before training, or
// converted from SQ8, are SQ8 codes). The
// codes reorder near-equidistant neighbours; a wider beam finds the true
// ones the codes rank just outside ef, and an SQ8 distance costs about half
// a float32 one, so a 1.5x beam costs less than float32's search.
// (measured in bench/README.md, "SQ8 in vecstore").
const sq8Beam = 1.5

// indexCode is the graph code of a collection's configuration.
func indexCode(c chroma.HNSWConfig) index.Code {
	switch c.VectorCode {
	case chroma.CodeSQ8:
		return index.SQ8
	case chroma.CodeSQ8R:
		return index.SQ8Residual
	}
	return index.Float32
}

// graphVec is what a collection's graph is given for one vector: the
// vector (float32 and SQ8 collections) or its row as stored (sq8r: a row
// depends on the centroid table it was coded against and is given back
// as it is, see index.InsertRows).
type graphVec struct {
	v   []float32
	row []byte
}

// encodeStored returns the vec-bucket value of vector v (as written) in
// collection ci, and the vector the graph is given for it: v itself for
// float32; for SQ8 the decoded code of v (normalized first in the cosine
// space, so the codes use the graph's scale), which is what decodeStored
// gives back, so that a graph rebuilt from the file holds the same codes.
// For sq8r the value is v's row as coder (an index holding the
// collection's centroid table, see rowCoderLocked) codes it, stored
// without its t field (storedRow), and the graph is given the row that
// expands back from it, so that every process holds the same rows.
func encodeStored(ci *collInfo, coder *index.Index, table []float32, v []float32) (val []byte, gv graphVec, err error) {
	switch ci.Config.HNSW.VectorCode {
	case chroma.CodeSQ8:
	case chroma.CodeSQ8R:
		row, err := coder.EncodeRow(nil, v)
		if err != nil {
			return nil, graphVec{}, fmt.Errorf("vecstore: code a vector: %w", err)
		}
		stored := storedRow(row)
		full, err := expandRow(ci, table, stored)
		if err != nil {
			return nil, graphVec{}, err
		}
		return sealed(stored), graphVec{row: full}, nil
	default:
		return encodeVector(v), graphVec{v: v}, nil
	}
	var raw []byte
	if ci.Config.HNSW.Space == chroma.SpaceCosine {
		raw = index.AppendSQ8Unit(nil, normalized(v))
	} else {
		raw = index.AppendSQ8(nil, v)
	}
	dec, err := index.DecodeSQ8(raw)
	if err != nil { // finite input always encodes to finite parameters
		panic(fmt.Sprintf("vecstore: SQ8 round trip: %v", err))
	}
	return sealed(raw), graphVec{v: dec}, nil
}

// decodeStored decodes a vec-bucket value of collection ci: the vector as
// written (float32) or as given to the graph (SQ8, see encodeStored).
// An sq8r row decodes only with its table: see decodeGraphVec.
func decodeStored(ci *collInfo, val []byte, what string) ([]float32, error) {
	if ci.Config.HNSW.VectorCode == chroma.CodeSQ8R {
		return nil, corruptf(nil, "%s: an sq8r row read as a vector", what)
	}
	if ci.Config.HNSW.VectorCode != chroma.CodeSQ8 {
		return decodeVector(val, what)
	}
	p, err := unseal(val, what)
	if err != nil {
		return nil, err
	}
	if ci.Dimension != 0 && len(p) != index.SQ8Len(ci.Dimension) {
		return nil, corruptf(nil, "%s: %d bytes, want %d for an SQ8 vector of dimension %d", what, len(p), index.SQ8Len(ci.Dimension), ci.Dimension)
	}
	v, err := index.DecodeSQ8(p)
	if err != nil {
		return nil, corruptf(err, "%s", what)
	}
	return v, nil
}

// decodeGraphVec decodes a vec-bucket value of collection ci as its graph
// takes it: a vector (decodeStored), or an sq8r row expanded against
// table, the collection's centroid table (see expandRow; the index checks
// the rest of the row).
func decodeGraphVec(ci *collInfo, table []float32, val []byte, what string) (graphVec, error) {
	if ci.Config.HNSW.VectorCode != chroma.CodeSQ8R {
		v, err := decodeStored(ci, val, what)
		return graphVec{v: v}, err
	}
	p, err := unseal(val, what)
	if err != nil {
		return graphVec{}, err
	}
	row, err := expandRow(ci, table, p)
	if err != nil {
		return graphVec{}, corruptf(err, "%s", what)
	}
	return graphVec{row: row}, nil
}

// An sq8r row is stored without its t field: the row index.AppendRow
// gives is lo, step, t (float32), the centroid id (uint16, 0xFFFF for
// none) and dim codes; storedRow drops t (4 of 402 bytes at dimension
// 384, which is what makes a vec-bucket page hold as many rows as SQ8
// vectors: 39) and expandRow computes it back from the rest and the
// centroid table: |x̂|² in L2 and IP (exactly as the index computes it),
// in the cosine space the s > 0 that gives s*c + lo + step*codes unit
// norm (to float rounding; t is not read for a row without a centroid).
// Every process expands the same stored bytes, so all hold equal rows.
const rowT = 8 // offset of t in an index row

// storedRow returns an index row (index.RowLen bytes) without its t field.
func storedRow(row []byte) []byte {
	out := make([]byte, 0, len(row)-4)
	out = append(out, row[:rowT]...)
	return append(out, row[rowT+4:]...)
}

// expandRow returns the index row of stored row p (storedRow's form) of
// collection ci, whose centroid table is table (nil when untrained).
func expandRow(ci *collInfo, table []float32, p []byte) ([]byte, error) {
	dim := ci.Dimension
	if dim == 0 || len(p) != index.RowLen(dim)-4 {
		return nil, corruptf(nil, "sq8r row of %d bytes at dimension %d", len(p), dim)
	}
	le := binary.LittleEndian
	lo := math.Float32frombits(le.Uint32(p))
	step := math.Float32frombits(le.Uint32(p[4:]))
	k := int(le.Uint16(p[rowT:]))
	codes := p[rowT+2:]
	var c []float32
	if k != math.MaxUint16 {
		if (k+1)*dim > len(table) {
			return nil, corruptf(nil, "sq8r row: centroid %d of %d", k, len(table)/dim)
		}
		c = table[k*dim : (k+1)*dim]
	}
	var t float64
	if ci.Config.HNSW.Space == chroma.SpaceCosine {
		t = 1
		if c != nil {
			var cc, cu, uu float64
			for i, b := range codes {
				u := float64(lo + step*float32(b))
				cc += float64(c[i]) * float64(c[i])
				cu += float64(c[i]) * u
				uu += u * u
			}
			if cc > 0 {
				t = (-cu + math.Sqrt(max(0, cu*cu-cc*(uu-1)))) / cc
			}
		}
	} else {
		for i, b := range codes {
			d := float64(lo + step*float32(b))
			if c != nil {
				d += float64(c[i])
			}
			t += d * d
		}
	}
	row := make([]byte, 0, len(p)+4)
	row = append(row, p[:rowT]...)
	row = le.AppendUint32(row, math.Float32bits(float32(t)))
	return append(row, p[rowT:]...), nil
}

// encodeCentroids is the stored form of an sq8r centroid table (k*dim
// floats, each centroid the decoding of SQ8 codes, as an index trains
// them): index.AppendCentroidTable's 8 bits, which decode to the table
// exactly, sealed.
func encodeCentroids(table []float32, dim int) ([]byte, error) {
	out, ok := index.AppendCentroidTable(make([]byte, 0, len(table)/dim*index.SQ8Len(dim)), table, dim)
	if !ok {
		return nil, fmt.Errorf("vecstore: a centroid table without an exact 8-bit form")
	}
	return sealed(out), nil
}

// decodeCentroids decodes a stored centroid table of dimension dim.
func decodeCentroids(val []byte, dim int) ([]float32, error) {
	p, err := unseal(val, "centroid table")
	if err != nil {
		return nil, err
	}
	n := index.SQ8Len(dim)
	if dim == 0 || len(p) == 0 || len(p)%n != 0 {
		return nil, corruptf(nil, "centroid table: %d bytes at dimension %d", len(p), dim)
	}
	table := make([]float32, 0, len(p)/n*dim)
	for o := 0; o < len(p); o += n {
		c, err := index.DecodeSQ8(p[o : o+n])
		if err != nil {
			return nil, corruptf(err, "centroid table")
		}
		table = append(table, c...)
	}
	return table, nil
}

// readCentroids reads collection bucket cb's centroid table (nil when the
// collection has not trained).
func readCentroids(cb *bolt.Bucket, ci *collInfo) ([]float32, error) {
	val := cb.Get(keyCentroids)
	if val == nil {
		return nil, nil
	}
	if ci.Config.HNSW.VectorCode != chroma.CodeSQ8R {
		return nil, corruptf(nil, "a centroid table in a %q collection", ci.Config.HNSW.VectorCode)
	}
	return decodeCentroids(val, ci.Dimension)
}

func normalized(v []float32) []float32 {
	out := make([]float32, len(v))
	n := float64(vecNorm(v))
	if n == 0 {
		return out
	}
	for i, f := range v {
		out[i] = float32(float64(f) / n)
	}
	return out
}

// RecodeProgress reports a Recode's progress: done of total vectors.
type RecodeProgress func(done, total int)

// Recode converts collection collID's stored vectors to code in one
// transaction: every vector is re-encoded, the configuration records the
// new code, and the graph is kept (re-encoded in memory, not rebuilt). A
// crash at any moment leaves the collection wholly converted or wholly as
// it was. Going from SQ8 or sq8r to float32 keeps the decoded vectors;
// going to sq8r trains the centroid table (with index.TrainRows vectors or
// more) and keeps SQ8 codes as they are (rows without a centroid). It is a
// no-op when the collection already has that code.
func (s *Store) Recode(ctx context.Context, collID string, code chroma.VectorCode, progress RecodeProgress) error {
	cid, err := chroma.ParseCollectionID(collID)
	if err != nil {
		return err
	}
	if code != chroma.CodeFloat32 && code != chroma.CodeSQ8 && code != chroma.CodeSQ8R {
		return &chroma.Error{Class: chroma.ErrInvalid, Rule: chroma.RuleVectorCode, Field: "code",
			Reason: fmt.Sprintf("vector code must be %q, %q or %q", chroma.CodeFloat32, chroma.CodeSQ8, chroma.CodeSQ8R)}
	}
	stored := code
	if code == chroma.CodeFloat32 {
		stored = ""
	}
	err = s.writeOp(ctx, func(tx *bolt.Tx) (func(), error) {
		if s.mu.infos[cid] == nil {
			return nil, chroma.CollectionNotFoundByID(cid)
		}
		mc, err := s.loadedLocked(tx, cid)
		if err != nil {
			return nil, err
		}
		old, err := freshInfo(tx, cid)
		if err != nil {
			return nil, err
		}
		if old.Config.HNSW.VectorCode == stored {
			return nil, nil
		}
		ni := *old
		ni.Config.HNSW.VectorCode = stored
		cb := tx.Bucket(collBucketName(cid))
		if cb == nil {
			return nil, corruptf(nil, "collection %s: missing data bucket", cid)
		}
		vecB := cb.Bucket(subVec)
		total := vecB.Stats().KeyN
		// The graph holds every live vector as the old code does; it is
		// re-encoded first when the new code's rows are read from it.
		if mc.graph != nil && stored == chroma.CodeSQ8R {
			if err := mc.graph.Recode(index.SQ8Residual); err != nil {
				return nil, err
			}
		}
		type kv struct{ k, v []byte }
		var out []kv
		done := 0
		err = vecB.ForEach(func(k, v []byte) error {
			if done%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				if progress != nil {
					progress(done, total)
				}
			}
			val, err := recodeValue(old, &ni, mc, u32key(k), v)
			if err != nil {
				return fmt.Errorf("vector %x: %w", k, err)
			}
			out = append(out, kv{append([]byte(nil), k...), val})
			done++
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("collection %s: %w", cid, err)
		}
		// A fresh bucket, filled in key order: rewriting values in place
		// with shorter ones would leave pages a quarter full.
		if err := cb.DeleteBucket(subVec); err != nil {
			return nil, err
		}
		if vecB, err = cb.CreateBucket(subVec); err != nil {
			return nil, err
		}
		fillBuckets(vecB)
		for _, e := range out {
			if err := vecB.Put(e.k, e.v); err != nil {
				return nil, err
			}
		}
		if err := recodeCentroids(cb, &ni, mc); err != nil {
			return nil, fmt.Errorf("collection %s: %w", cid, err)
		}
		seq, err := nextSeq(tx)
		if err != nil {
			return nil, err
		}
		if mc.graph != nil {
			// The graph is kept: re-encoded in memory and snapshotted at
			// this sequence, so every process reloads the collection
			// from it (its snapshot moves past what they applied).
			if err := mc.graph.Recode(indexCode(ni.Config.HNSW)); err != nil {
				return nil, err
			}
			raw, err := mc.graph.MarshalGraph()
			if err != nil {
				return nil, fmt.Errorf("vecstore: marshal graph: %w", err)
			}
			ni.LastSeq = seq
			side, err := mc.snapSide(seq, &ni)
			if err != nil {
				return nil, err
			}
			if err := putRawSnapshot(tx, &ni, raw, side, seq, uint32(len(mc.byDense))); err != nil {
				return nil, err
			}
		}
		if err := putCollInfo(tx, &ni); err != nil {
			return nil, err
		}
		if progress != nil {
			progress(total, total)
		}
		return func() { s.mu.infos[cid] = &ni }, nil
	})
	// Memory is reloaded from the file (on success the collection has the
	// new code; on failure its graph may have been re-encoded already).
	s.mu.Lock()
	delete(s.mu.colls, cid)
	s.mu.Unlock()
	return err
}

// recodeValue re-encodes dense id d's vec-bucket value v from collection
// old's code to ni's. An sq8r row is read from the graph (it decodes only
// with the graph's table), and one is written from the graph re-encoded
// already (see Recode).
func recodeValue(old, ni *collInfo, mc *memColl, d uint32, v []byte) ([]byte, error) {
	if ni.Config.HNSW.VectorCode == chroma.CodeSQ8R {
		if mc.graph == nil {
			return nil, corruptf(nil, "not in the graph")
		}
		row, ok, err := mc.graph.AppendRow(nil, d)
		if err != nil || !ok {
			return nil, corruptf(err, "not in the graph")
		}
		return sealed(storedRow(row)), nil
	}
	var vec []float32
	if old.Config.HNSW.VectorCode == chroma.CodeSQ8R {
		var ok bool
		if mc.graph != nil {
			vec, ok = mc.graph.Vector(d)
		}
		if !ok {
			return nil, corruptf(nil, "not in the graph")
		}
	} else {
		var err error
		if vec, err = decodeStored(old, v, "vector"); err != nil {
			return nil, err
		}
	}
	if old.Config.HNSW.VectorCode != "" && old.Config.HNSW.Space == chroma.SpaceCosine {
		// Coded cosine vectors are stored normalized; the record's norm
		// scales them back to the vector as written.
		if int(d) < len(mc.byDense) && mc.byDense[d] != nil && mc.byDense[d].norm > 0 {
			r := mc.byDense[d]
			for i := range vec {
				vec[i] *= r.norm
			}
		}
	}
	val, _, err := encodeStored(ni, nil, nil, vec)
	return val, err
}

// recodeCentroids stores the centroid table of collection ni's graph, just
// recoded, when ni is sq8r and the graph trained, and removes any table
// otherwise. The stored table decodes to the graph's exactly (a trained
// table is 8-bit exact), or the rows would not decode as coded.
func recodeCentroids(cb *bolt.Bucket, ni *collInfo, mc *memColl) error {
	if err := cb.Delete(keyCentroids); err != nil {
		return err
	}
	if ni.Config.HNSW.VectorCode != chroma.CodeSQ8R || mc.graph == nil {
		return nil
	}
	table := mc.graph.Centroids()
	if table == nil {
		return nil
	}
	val, err := encodeCentroids(table, ni.Dimension)
	if err != nil {
		return err
	}
	return cb.Put(keyCentroids, val)
}

func u32key(k []byte) uint32 {
	if len(k) != 4 {
		return math.MaxUint32
	}
	return uint32(k[0])<<24 | uint32(k[1])<<16 | uint32(k[2])<<8 | uint32(k[3])
}

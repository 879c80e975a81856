package vecstore

import (
	"context"
	"fmt"
	"math"

	"github.com/cairn-dev/cairn/index"
	"github.com/cairn-dev/cairn/vecstore/where"
	bolt "go.etcd.io/bbolt"
)

// VectorCode is how a collection stores its vectors, on disk and in its
// graph. It is chosen when the collection is created and kept in its
// configuration.
type VectorCode string

const (
	// CodeFloat32 (the default; stored as "") keeps every vector exactly as
	// written: Get with embeddings returns the same floats.
	CodeFloat32 VectorCode = "float32"
	// CodeSQ8 keeps every vector as 8-bit codes with a per-vector offset and
	// step (index.SQ8): about a quarter of the bytes on disk and in memory.
	// Get returns the decoded vector (each component within one step,
	// 1/255 of the vector's range, of the one written), and distances are
	// to the decoded vectors.
	CodeSQ8 VectorCode = "sq8"
)

// MetaVectorCode is the collection metadata key that selects the vector code
// at creation ("float32" or "sq8"): cairn's extension to Chroma's
// configuration, read like Chroma's legacy "hnsw:*" keys (once, when the
// collection is created; changing the key later changes nothing). It is
// read whether or not the request carries a configuration.
const MetaVectorCode = "cairn:vector_code"

// RuleVectorCode refuses a MetaVectorCode value other than "float32" or "sq8".
const RuleVectorCode Rule = "vector_code" // Field, Key, Value

// sq8Beam multiplies the candidate list of searches in SQ8 collections. The
// codes reorder near-equidistant neighbours; a wider beam finds the true
// ones the codes rank just outside ef, and an SQ8 distance costs about half
// a float32 one, so a 1.5x beam costs less than float32's search.
// (measured in bench/README.md, "SQ8 in vecstore").
const sq8Beam = 1.5

// vectorCodeFromMetadata reads MetaVectorCode from a create request's metadata.
func vectorCodeFromMetadata(md Metadata) (VectorCode, error) {
	v, ok := md[MetaVectorCode]
	if !ok {
		return "", nil
	}
	if v.Kind == where.KindString {
		switch VectorCode(v.Str) {
		case CodeFloat32:
			return "", nil
		case CodeSQ8:
			return CodeSQ8, nil
		}
	}
	e := invalidErr(RuleVectorCode, "metadata", "%s: must be %q or %q", MetaVectorCode, CodeFloat32, CodeSQ8)
	e.Key = MetaVectorCode
	return "", e
}

// indexCode is the graph code of a collection's configuration.
func (c HNSWConfig) indexCode() index.Code {
	if c.VectorCode == CodeSQ8 {
		return index.SQ8
	}
	return index.Float32
}

// encodeStored returns the vec-bucket value of vector v (as written) in
// collection ci, and the vector the graph is given for it: v itself for
// float32; for SQ8 the decoded code of v (normalized first in the cosine
// space, so the codes use the graph's scale), which is what decodeStored
// gives back, so that a graph rebuilt from the file holds the same codes.
func encodeStored(ci *collInfo, v []float32) (val []byte, graphVec []float32) {
	if ci.Config.HNSW.VectorCode != CodeSQ8 {
		return encodeVector(v), v
	}
	var raw []byte
	if ci.Config.HNSW.Space == SpaceCosine {
		raw = index.AppendSQ8Unit(nil, normalized(v))
	} else {
		raw = index.AppendSQ8(nil, v)
	}
	dec, err := index.DecodeSQ8(raw)
	if err != nil { // finite input always encodes to finite parameters
		panic(fmt.Sprintf("vecstore: SQ8 round trip: %v", err))
	}
	return sealed(raw), dec
}

// decodeStored decodes a vec-bucket value of collection ci: the vector as
// written (float32) or as given to the graph (SQ8, see encodeStored).
func decodeStored(ci *collInfo, val []byte, what string) ([]float32, error) {
	if ci.Config.HNSW.VectorCode != CodeSQ8 {
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
// it was. Going from SQ8 to float32 keeps the decoded vectors. It is a
// no-op when the collection already has that code.
func (s *Store) Recode(ctx context.Context, collID string, code VectorCode, progress RecodeProgress) error {
	cid, err := ParseCollectionID(collID)
	if err != nil {
		return err
	}
	if code != CodeFloat32 && code != CodeSQ8 {
		return invalidErr(RuleVectorCode, "code", "vector code must be %q or %q", CodeFloat32, CodeSQ8)
	}
	stored := code
	if code == CodeFloat32 {
		stored = ""
	}
	err = s.writeOp(ctx, func(tx *bolt.Tx) (func(), error) {
		if s.mu.infos[cid] == nil {
			return nil, collNotFoundByID(cid)
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
			vec, err := decodeStored(old, v, fmt.Sprintf("vector %x", k))
			if err != nil {
				return err
			}
			if old.Config.HNSW.VectorCode == CodeSQ8 && old.Config.HNSW.Space == SpaceCosine {
				// SQ8 cosine vectors are stored normalized; the record's
				// norm scales them back to the vector as written.
				if d := u32key(k); int(d) < len(mc.byDense) && mc.byDense[d] != nil && mc.byDense[d].norm > 0 {
					r := mc.byDense[d]
					for i := range vec {
						vec[i] *= r.norm
					}
				}
			}
			val, _ := encodeStored(&ni, vec)
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
		seq, err := nextSeq(tx)
		if err != nil {
			return nil, err
		}
		if mc.graph != nil {
			// The graph is kept: re-encoded in memory and snapshotted at
			// this sequence, so every process reloads the collection
			// from it (its snapshot moves past what they applied).
			if err := mc.graph.Recode(ni.Config.HNSW.indexCode()); err != nil {
				return nil, err
			}
			raw, err := mc.graph.MarshalGraph()
			if err != nil {
				return nil, fmt.Errorf("vecstore: marshal graph: %w", err)
			}
			ni.LastSeq = seq
			if err := putRawSnapshot(tx, &ni, raw, encodeSnapIDs(mc.byDense), seq, uint32(len(mc.byDense))); err != nil {
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

func u32key(k []byte) uint32 {
	if len(k) != 4 {
		return math.MaxUint32
	}
	return uint32(k[0])<<24 | uint32(k[1])<<16 | uint32(k[2])<<8 | uint32(k[3])
}

package vecstore

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/cairn-dev/cairn/index"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// Metadata postings: the string and bool part of a collection's metadata
// index (metaIndex) as of its snapshot, stored beside the snapshot
// (keySnapMeta) so that a read in place answers a filter on those values
// from a few bitmaps instead of decoding the metadata of every record
// (about 40 ms at 100,000 records, most of a one-shot filtered query).
//
// Layout, sealed: version u8 (postingsVersion), the snapshot's sequence
// (uvarint), the number of keys (uvarint), then per key in byte order its
// name (uvarint length + bytes) and number of values (uvarint), then per
// value (strings in byte order, then false, then true) its kind u8
// (where.KindString or where.KindBool), the string (uvarint length +
// bytes) or the bool (u8), and the dense ids holding it (uvarint length +
// roaring's portable serialization).
//
// The postings are derived data: they are written in the same transaction
// as the snapshot they describe, into the snap bucket that every snapshot
// write empties first (replaceSnapshot, in every version), so they never
// outlive it, and they carry its sequence, checked on read. A snapshot
// without them (written before they existed) is read by the metadata scan,
// and gets them at its next snapshot.
const postingsVersion = 1

// encodePostings lays out idx's string and bool values as of snapshot
// sequence seq. REQUIRES: the collection's lock, held for reading.
func encodePostings(idx *metaIndex, seq uint64) ([]byte, error) {
	b := []byte{postingsVersion}
	b = binary.AppendUvarint(b, seq)
	keys := slices.Sorted(maps.Keys(idx.keys))
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		ki := idx.keys[k]
		vals := make([]string, 0, len(ki.str))
		for v, bm := range ki.str {
			if !bm.IsEmpty() {
				vals = append(vals, v)
			}
		}
		slices.Sort(vals)
		n := len(vals)
		for _, bm := range ki.bools {
			if bm != nil && !bm.IsEmpty() {
				n++
			}
		}
		b = appendString(b, k)
		b = binary.AppendUvarint(b, uint64(n))
		appendBitmap := func(bm *roaring.Bitmap) error {
			p, err := bm.ToBytes()
			if err != nil {
				return fmt.Errorf("vecstore: metadata postings of %q: %w", k, err)
			}
			b = binary.AppendUvarint(b, uint64(len(p)))
			b = append(b, p...)
			return nil
		}
		for _, v := range vals {
			b = append(b, byte(where.KindString))
			b = appendString(b, v)
			if err := appendBitmap(ki.str[v]); err != nil {
				return nil, err
			}
		}
		for i, bm := range ki.bools {
			if bm == nil || bm.IsEmpty() {
				continue
			}
			b = append(b, byte(where.KindBool), byte(i))
			if err := appendBitmap(bm); err != nil {
				return nil, err
			}
		}
	}
	return sealed(b), nil
}

// postingsAnswer says whether the postings alone answer w: a tree of
// $and and $or over $eq, $ne, $in and $nin with string or bool operands
// (which match only string or bool values, see matchCmp).
func postingsAnswer(w *where.Expr) bool {
	switch w.Op {
	case where.OpAnd, where.OpOr:
		for _, c := range w.Children {
			if !postingsAnswer(c) {
				return false
			}
		}
		return true
	case where.OpEq, where.OpNe:
		return w.Value.Kind == where.KindString || w.Value.Kind == where.KindBool
	case where.OpIn, where.OpNin:
		for _, v := range w.Values {
			if v.Kind != where.KindString && v.Kind != where.KindBool {
				return false
			}
		}
		return true
	}
	return false
}

// decodePostings reads the postings of the keys named in keys into a
// metaIndex holding their string and bool values only; ok is false when
// val was written for another snapshot sequence than seq or in a version
// this reader does not know (the caller scans the records instead).
func decodePostings(val []byte, seq uint64, keys []string) (idx *metaIndex, ok bool, err error) {
	p, err := unseal(val, "metadata postings")
	if err != nil {
		return nil, false, err
	}
	d := &decoder{b: p}
	if v := d.u8(); v != postingsVersion || d.err != nil {
		return nil, false, nil
	}
	if d.uvarint() != seq || d.err != nil {
		return nil, false, nil
	}
	idx = newMetaIndex()
	nk := d.uvarint()
	for i := uint64(0); i < nk && d.err == nil; i++ {
		k := d.str()
		wanted := slices.Contains(keys, k)
		nv := d.uvarint()
		for j := uint64(0); j < nv && d.err == nil; j++ {
			var v where.Value
			switch kind := where.Kind(d.u8()); kind {
			case where.KindString:
				v = where.String(d.str())
			case where.KindBool:
				v = where.Bool(d.u8() != 0)
			default:
				d.fail()
			}
			n := d.uvarint()
			if n > uint64(len(d.b)) {
				d.fail()
			}
			raw := d.bytes(int(n))
			if !wanted || d.err != nil {
				continue
			}
			bm := roaring.New()
			if err := bm.UnmarshalBinary(raw); err != nil {
				return nil, false, corruptf(err, "metadata postings of %q", k)
			}
			ki := idx.key(k)
			if v.Kind == where.KindString {
				ki.str[v.Str] = bm
			} else if v.Bool {
				ki.bools[1] = bm
			} else {
				ki.bools[0] = bm
			}
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return nil, false, corruptf(d.err, "metadata postings")
	}
	return idx, true, nil
}

// whereKeys lists the metadata keys w names.
func whereKeys(w *where.Expr) []string {
	var keys []string
	var walk func(w *where.Expr)
	walk = func(w *where.Expr) {
		if w.Key != "" && !slices.Contains(keys, w.Key) {
			keys = append(keys, w.Key)
		}
		for _, ch := range w.Children {
			walk(ch)
		}
	}
	walk(w)
	return keys
}

// allowedByPostings answers allowed from the snapshot's metadata postings:
// the records unchanged since the snapshot from the postings, the records
// written since (c.fresh) from their metadata. ok is false when the
// snapshot has no postings for this reader or w needs more than they hold.
func (c *inPlace) allowedByPostings(w *where.Expr, keys []string) (allowed *roaring.Bitmap, n int, ok bool, err error) {
	if c.snap == nil || !postingsAnswer(w) {
		return nil, 0, false, nil
	}
	val := c.snap.Get(keySnapMeta)
	if val == nil {
		return nil, 0, false, nil
	}
	idx, ok, err := decodePostings(val, c.ci.SnapSeq, keys)
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("collection %s: %w", c.ci.ID, err)
		}
		return nil, 0, false, err
	}
	// live: the snapshot's records that have not changed since.
	words := make([]uint64, len(c.ids.off)/128+1)
	for d := range len(c.ids.off) / 2 {
		s, e := c.ids.off[2*d], c.ids.off[2*d+1]
		if e == s {
			continue
		}
		if len(c.fresh) > 0 {
			if _, changed := c.fresh[string(c.ids.p[s:e])]; changed {
				continue
			}
		}
		words[d/64] |= 1 << (d % 64)
	}
	live := roaring.FromDense(words, false)
	allowed = idx.eval(w, live)
	allowed.And(live)
	n = int(live.GetCardinality())
	for _, r := range c.fresh {
		if r == nil {
			continue
		}
		n++
		if matchWhere(w, r.meta) {
			allowed.Add(r.dense)
		}
	}
	return allowed, n, true, nil
}

// Row scales: the t field of each sq8r row as of the snapshot (see
// storedRow: a row is stored without it and expandRow computes it back,
// about a microsecond a row, most of a one-shot graph walk's time), so
// that a read in place expands a row unchanged since the snapshot by
// copying. Layout, sealed: version u8 (rowScalesVersion), the snapshot's
// sequence (uvarint), the number of dense ids (uvarint), then per dense id
// t's float32 bits (little endian), noRowScale when that id held no row.
// Derived like the postings: written with the snapshot into the snap
// bucket every snapshot write empties, checked against its sequence.
const (
	rowScalesVersion = 1
	noRowScale       = math.MaxUint32
)

// encodeRowScales lays out the t of each of graph's rows below next as of
// snapshot sequence seq: expandRow's, from the row as stored (the graph's
// row without its t, see storedRow) and table, collection ci's centroid
// table, which is what a reader computes.
// REQUIRES: the collection's lock, held for reading.
func encodeRowScales(graph *index.Index, ci *collInfo, table []float32, next uint32, seq uint64) ([]byte, error) {
	b := []byte{rowScalesVersion}
	b = binary.AppendUvarint(b, seq)
	b = binary.AppendUvarint(b, uint64(next))
	var row []byte
	for d := range next {
		var ok bool
		var err error
		row, ok, err = graph.AppendRow(row[:0], d)
		if err != nil {
			return nil, fmt.Errorf("vecstore: row scales: %w", err)
		}
		t := uint32(noRowScale)
		if ok {
			full, err := expandRow(ci, table, storedRow(row))
			if err != nil {
				return nil, fmt.Errorf("vecstore: row scales: %w", err)
			}
			t = binary.LittleEndian.Uint32(full[rowT:])
		}
		b = binary.LittleEndian.AppendUint32(b, t)
	}
	return sealed(b), nil
}

// decodeRowScales returns the t bits of each dense id (4 bytes each,
// within val), or nil when val was written for another snapshot sequence
// than seq or in an unknown version.
func decodeRowScales(val []byte, seq uint64) ([]byte, error) {
	p, err := unseal(val, "row scales")
	if err != nil {
		return nil, err
	}
	d := &decoder{b: p}
	if v := d.u8(); v != rowScalesVersion || d.err != nil {
		return nil, nil
	}
	if d.uvarint() != seq || d.err != nil {
		return nil, nil
	}
	n := d.uvarint()
	if d.err != nil || n*4 != uint64(len(d.b)) {
		return nil, corruptf(d.err, "row scales: %d bytes for %d rows", len(d.b), n)
	}
	return d.b, nil
}

// rowScale returns dense id d's row t bits as of the snapshot, false when
// unknown (no scales, d written since, or no row then).
func (c *inPlace) rowScale(d uint32) (uint32, bool) {
	if int(d) >= len(c.scales)/4 || c.freshDense[d] {
		return 0, false
	}
	t := binary.LittleEndian.Uint32(c.scales[4*d:])
	return t, t != noRowScale
}

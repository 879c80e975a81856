package vecstore

import (
	"context"
	"math"
	"slices"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// metaIndex is the in-memory inverted index of one collection's metadata:
// per key, string and bool values map to roaring bitmaps of dense ids, and
// int and float values are kept in sorted (value, id) arrays for ranges and
// equality. The arrays are re-sorted lazily after changes.
type metaIndex struct {
	keys map[string]*keyIndex
}

type keyIndex struct {
	str    map[string]*roaring.Bitmap
	bools  [2]*roaring.Bitmap
	ints   map[uint32]int64
	floats map[uint32]float64

	intSorted   []intEntry
	floatSorted []floatEntry
	intDirty    bool
	floatDirty  bool
}

type intEntry struct {
	v  int64
	id uint32
}

type floatEntry struct {
	v  float64
	id uint32
}

func newMetaIndex() *metaIndex { return &metaIndex{keys: make(map[string]*keyIndex)} }

func (m *metaIndex) key(k string) *keyIndex {
	ki := m.keys[k]
	if ki == nil {
		ki = &keyIndex{str: make(map[string]*roaring.Bitmap), ints: make(map[uint32]int64),
			floats: make(map[uint32]float64)}
		m.keys[k] = ki
	}
	return ki
}

func (m *metaIndex) add(id uint32, md chroma.Metadata) {
	for k, v := range md {
		ki := m.key(k)
		switch v.Kind {
		case where.KindString:
			b := ki.str[v.Str]
			if b == nil {
				b = roaring.New()
				ki.str[v.Str] = b
			}
			b.Add(id)
		case where.KindBool:
			i := 0
			if v.Bool {
				i = 1
			}
			if ki.bools[i] == nil {
				ki.bools[i] = roaring.New()
			}
			ki.bools[i].Add(id)
		case where.KindInt:
			ki.ints[id] = v.Int
			ki.intDirty = true
		case where.KindFloat:
			ki.floats[id] = v.Float
			ki.floatDirty = true
		}
	}
}

func (m *metaIndex) remove(id uint32, md chroma.Metadata) {
	for k, v := range md {
		ki := m.keys[k]
		if ki == nil {
			continue
		}
		switch v.Kind {
		case where.KindString:
			if b := ki.str[v.Str]; b != nil {
				b.Remove(id)
				if b.IsEmpty() {
					delete(ki.str, v.Str)
				}
			}
		case where.KindBool:
			i := 0
			if v.Bool {
				i = 1
			}
			if ki.bools[i] != nil {
				ki.bools[i].Remove(id)
			}
		case where.KindInt:
			delete(ki.ints, id)
			ki.intDirty = true
		case where.KindFloat:
			delete(ki.floats, id)
			ki.floatDirty = true
		}
		if len(ki.str) == 0 && len(ki.ints) == 0 && len(ki.floats) == 0 &&
			(ki.bools[0] == nil || ki.bools[0].IsEmpty()) && (ki.bools[1] == nil || ki.bools[1].IsEmpty()) {
			delete(m.keys, k)
		}
	}
}

// prepare sorts the numeric arrays that changed. It must run before eval
// under the collection's write lock, so that evaluation under a read lock
// never mutates.
func (m *metaIndex) prepare() {
	for _, ki := range m.keys {
		if ki.intDirty {
			ki.intSorted = ki.intSorted[:0]
			for id, v := range ki.ints {
				ki.intSorted = append(ki.intSorted, intEntry{v, id})
			}
			slices.SortFunc(ki.intSorted, func(a, b intEntry) int {
				if a.v != b.v {
					if a.v < b.v {
						return -1
					}
					return 1
				}
				return int(a.id) - int(b.id)
			})
			ki.intDirty = false
		}
		if ki.floatDirty {
			ki.floatSorted = ki.floatSorted[:0]
			for id, v := range ki.floats {
				ki.floatSorted = append(ki.floatSorted, floatEntry{v, id})
			}
			slices.SortFunc(ki.floatSorted, func(a, b floatEntry) int {
				switch {
				case a.v < b.v:
					return -1
				case a.v > b.v:
					return 1
				}
				return int(a.id) - int(b.id)
			})
			ki.floatDirty = false
		}
	}
}

func (m *metaIndex) dirty() bool {
	for _, ki := range m.keys {
		if ki.intDirty || ki.floatDirty {
			return true
		}
	}
	return false
}

// truncToInt converts a float operand the way Chroma 1.0.0 compares it with
// int-typed values (Rust's saturating `as i64`: toward zero, NaN to 0).
func truncToInt(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// cmpRange describes a numeric range test: values v with lo <(=) v <(=) hi.
type cmpOp uint8

const (
	cmpEq cmpOp = iota
	cmpGt
	cmpGte
	cmpLt
	cmpLte
)

// numeric returns the ids whose int or float value for key satisfies op
// against the numeric operand v. REQUIRES: prepare called since the last change.
func (ki *keyIndex) numeric(op cmpOp, v where.Value, out *roaring.Bitmap) {
	var iv int64
	var fv float64
	if v.Kind == where.KindInt {
		iv, fv = v.Int, float64(v.Int)
	} else {
		iv, fv = truncToInt(v.Float), v.Float
	}
	// ints
	{
		a := ki.intSorted
		lo := sort.Search(len(a), func(i int) bool { return a[i].v >= iv })
		hi := sort.Search(len(a), func(i int) bool { return a[i].v > iv })
		from, to := opRange(op, lo, hi, len(a))
		addIDs(out, a[from:to], func(e intEntry) uint32 { return e.id })
	}
	{
		a := ki.floatSorted
		lo := sort.Search(len(a), func(i int) bool { return a[i].v >= fv })
		hi := sort.Search(len(a), func(i int) bool { return a[i].v > fv })
		from, to := opRange(op, lo, hi, len(a))
		addIDs(out, a[from:to], func(e floatEntry) uint32 { return e.id })
	}
}

// addIDs adds the ids of a value-sorted range to out. The ids come in value
// order, not id order, so adding them one by one makes roaring insert into
// the middle of its array containers (that was 43% of a filtered query's
// CPU at 10% selectivity over 100,000 records); a range of more than a few
// ids goes through a dense bitset instead, unless the range is so sparse that
// clearing and scanning the bitset (maxID/64 words) costs more.
func addIDs[E any](out *roaring.Bitmap, es []E, id func(E) uint32) {
	var maxID uint32
	if len(es) >= 64 {
		for _, e := range es {
			maxID = max(maxID, id(e))
		}
	}
	if len(es) < 64 || uint64(len(es))*256 < uint64(maxID) {
		for _, e := range es {
			out.Add(id(e))
		}
		return
	}
	words := make([]uint64, maxID/64+1)
	for _, e := range es {
		d := id(e)
		words[d/64] |= 1 << (d % 64)
	}
	out.Or(roaring.FromDense(words, false))
}

// eq returns the ids whose value for key equals v (int and float compared
// across types). REQUIRES: prepare called since the last change.
func (m *metaIndex) eq(key string, v where.Value, out *roaring.Bitmap) {
	ki := m.keys[key]
	if ki == nil {
		return
	}
	switch v.Kind {
	case where.KindString:
		if b := ki.str[v.Str]; b != nil {
			out.Or(b)
		}
	case where.KindBool:
		i := 0
		if v.Bool {
			i = 1
		}
		if ki.bools[i] != nil {
			out.Or(ki.bools[i])
		}
	case where.KindInt, where.KindFloat:
		ki.numeric(cmpEq, v, out)
	}
}

// eval returns the set of live ids matching w. REQUIRES: prepare called.
func (m *metaIndex) eval(w *where.Expr, live *roaring.Bitmap) *roaring.Bitmap {
	out := roaring.New()
	switch w.Op {
	case where.OpAnd:
		out = live.Clone()
		for _, c := range w.Children {
			out.And(m.eval(c, live))
			if out.IsEmpty() {
				break
			}
		}
	case where.OpOr:
		for _, c := range w.Children {
			out.Or(m.eval(c, live))
		}
	case where.OpEq:
		m.eq(w.Key, w.Value, out)
	case where.OpNe:
		m.eq(w.Key, w.Value, out)
		out = roaring.AndNot(live, out)
	case where.OpIn, where.OpNin:
		for _, v := range w.Values {
			m.eq(w.Key, v, out)
		}
		if w.Op == where.OpNin {
			out = roaring.AndNot(live, out)
		}
	case where.OpGt, where.OpGte, where.OpLt, where.OpLte:
		ki := m.keys[w.Key]
		if ki != nil {
			ki.numeric(rangeOp(w.Op), w.Value, out)
		}
	}
	return out
}

// matchWhere evaluates w against one record's metadata, with the same
// semantics as eval. It is the reference used by tests and by small scans.
func matchWhere(w *where.Expr, md chroma.Metadata) bool {
	switch w.Op {
	case where.OpAnd:
		for _, c := range w.Children {
			if !matchWhere(c, md) {
				return false
			}
		}
		return true
	case where.OpOr:
		for _, c := range w.Children {
			if matchWhere(c, md) {
				return true
			}
		}
		return false
	case where.OpNe:
		return !matchCmp(cmpEq, md, w.Key, w.Value)
	case where.OpIn, where.OpNin:
		hit := false
		for _, v := range w.Values {
			if matchCmp(cmpEq, md, w.Key, v) {
				hit = true
				break
			}
		}
		return hit == (w.Op == where.OpIn)
	}
	return matchCmp(rangeOp(w.Op), md, w.Key, w.Value)
}

// rangeOp is the comparison of a $eq, $gt, $gte, $lt or $lte clause (a
// switch: a map literal here was built on every record a scan matched).
func rangeOp(op where.Op) cmpOp {
	switch op {
	case where.OpGt:
		return cmpGt
	case where.OpGte:
		return cmpGte
	case where.OpLt:
		return cmpLt
	case where.OpLte:
		return cmpLte
	}
	return cmpEq
}

func matchCmp(op cmpOp, md chroma.Metadata, key string, operand where.Value) bool {
	v, ok := md[key]
	if !ok {
		return false
	}
	var c int
	switch {
	case v.Kind == where.KindString && operand.Kind == where.KindString:
		if op != cmpEq {
			return false
		}
		return v.Str == operand.Str
	case v.Kind == where.KindBool && operand.Kind == where.KindBool:
		if op != cmpEq {
			return false
		}
		return v.Bool == operand.Bool
	case v.Kind == where.KindInt && operand.Kind == where.KindInt:
		c = cmpInt(v.Int, operand.Int)
	case v.Kind == where.KindInt && operand.Kind == where.KindFloat:
		c = cmpInt(v.Int, truncToInt(operand.Float))
	case v.Kind == where.KindFloat && operand.Kind == where.KindInt:
		c = cmpFloat(v.Float, float64(operand.Int))
	case v.Kind == where.KindFloat && operand.Kind == where.KindFloat:
		if math.IsNaN(v.Float) || math.IsNaN(operand.Float) {
			return false
		}
		c = cmpFloat(v.Float, operand.Float)
	default:
		return false
	}
	switch op {
	case cmpEq:
		return c == 0
	case cmpGt:
		return c > 0
	case cmpGte:
		return c >= 0
	case cmpLt:
		return c < 0
	case cmpLte:
		return c <= 0
	}
	return false
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// matchWhereDocument evaluates d against one record's document (nil =
// none), with no context and no bound on the work.
func matchWhereDocument(d *where.DocExpr, doc *string) bool {
	ok, _ := chroma.NewDocMatcher(context.Background(), d, math.MaxInt64).Match(doc)
	return ok
}

// opRange is the slice [from, to) of a sorted array of n values that
// satisfies op against a value whose equal run is [lo, hi).
func opRange(op cmpOp, lo, hi, n int) (from, to int) {
	switch op {
	case cmpEq:
		return lo, hi
	case cmpGt:
		return hi, n
	case cmpGte:
		return lo, n
	case cmpLt:
		return 0, lo
	case cmpLte:
		return 0, hi
	}
	return 0, 0
}

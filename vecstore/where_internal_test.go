package vecstore

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// fuzzRecords is a fixed set of metadata maps covering every kind, missing
// keys, int/float crossings and duplicates.
var fuzzRecords = []chroma.Metadata{
	{"n": where.Int(1), "s": where.String("x"), "f": where.Float(1.5), "b": where.Bool(true)},
	{"n": where.Float(2), "s": where.String("y"), "f": where.Int(2)},
	{"s": where.String("1"), "b": where.Bool(false), "n": where.String("1")},
	nil,
	{"n": where.Int(-3), "f": where.Float(-0.5), "s": where.String("")},
	{"n": where.Int(3), "a": where.Int(1 << 60)},
	{"n": where.Float(1), "t": where.Bool(true), "a": where.Float(-1e300)},
}

func buildIndex(recs []chroma.Metadata) (*metaIndex, *roaring.Bitmap) {
	idx := newMetaIndex()
	live := roaring.New()
	for i, md := range recs {
		idx.add(uint32(i), md)
		live.Add(uint32(i))
	}
	idx.prepare()
	return idx, live
}

// checkEvalAgrees compares the inverted-index evaluation with the per-record
// reference evaluator.
func checkEvalAgrees(t *testing.T, w *where.Expr, recs []chroma.Metadata) {
	t.Helper()
	idx, live := buildIndex(recs)
	got := idx.eval(w, live)
	for i, md := range recs {
		if want := matchWhere(w, md); want != got.Contains(uint32(i)) {
			t.Fatalf("where %s, record %d %v: index says %v, reference says %v", w, i, md, got.Contains(uint32(i)), want)
		}
	}
}

func FuzzParseWhere(f *testing.F) {
	for _, s := range []string{`{"n":1}`, `{"n":{"$gte":1.5}}`, `{"$and":[{"n":{"$in":[2.5,1]}},{"s":{"$ne":"x"}}]}`,
		`{"$or":[]}`, `{"b":{"$nin":[true]}}`, `{"a":{"$lt":-1e300}}`, `{}`, `[]`, `{"n":{"$eq":null}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := where.Parse(data)
		if err != nil {
			if !errors.Is(err, where.ErrInvalid) {
				t.Fatalf("error without class: %v", err)
			}
			return
		}
		if w == nil {
			return
		}
		if err := w.Validate(); err != nil {
			t.Fatalf("parsed where %s fails Validate: %v", w, err)
		}
		// Round trip through the canonical form.
		w2, err := where.Parse([]byte(w.String()))
		if err != nil {
			t.Fatalf("canonical form %s does not parse: %v", w, err)
		}
		if w.String() != w2.String() {
			t.Fatalf("round trip changed %s into %s", w, w2)
		}
		checkEvalAgrees(t, w, fuzzRecords)
	})
}

func FuzzParseWhereDocument(f *testing.F) {
	for _, s := range []string{`{"$contains":"a"}`, `{"$not_regex":"^a+$"}`, `{"$and":[{"$or":[]},{"$regex":"(?i)x"}]}`, `{"$regex":"("}`} {
		f.Add([]byte(s))
	}
	docs := []*string{nil, ptr(""), ptr("hello World"), ptr("a\nb"), ptr("%_\\")}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := where.ParseDocument(data)
		if err != nil || d == nil {
			return
		}
		d2, err := where.ParseDocument([]byte(d.String()))
		if err != nil || d2.String() != d.String() {
			t.Fatalf("round trip of %s: %v %v", d, d2, err)
		}
		for _, doc := range docs {
			if matchWhereDocument(d, doc) != matchWhereDocument(d2, doc) {
				t.Fatalf("round trip changed the meaning of %s", d)
			}
		}
	})
}

func ptr(s string) *string { return &s }

// FuzzDecoders: the decoders of every value we lay out return errors, never panic.
func FuzzDecoders(f *testing.F) {
	d := "doc"
	f.Add(encodeRecord(&record{id: "x", dense: 3, order: 9, vseq: 2, doc: &d, meta: chroma.Metadata{"a": where.Int(1), "b": where.Float(2), "c": where.String("s"), "d": where.Bool(true)}}))
	f.Add(encodeLogEntry([]string{"a", "bb"}))
	f.Add(encodeVector([]float32{1, 2, 3}))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = decodeRecord("x", data)
		_, _ = decodeLogEntry(data)
		_, _ = decodeVector(data, "v")
		_, _ = decodeCollInfo(data)
		// Unsealed payloads reach the structure decoder too.
		sealedData := sealed(data)
		if r, err := decodeRecord("x", sealedData); err == nil {
			if got := encodeRecord(r); string(got) != string(sealedData) && r.meta == nil {
				_ = got
			}
		}
		_, _ = decodeLogEntry(sealedData)
	})
}

// TestEvalRandom compares index evaluation with the reference on random
// metadata and random filters (seeded; -run TestEvalRandom -v prints it).
func TestEvalRandom(t *testing.T) {
	seed := uint64(42)
	r := rand.New(rand.NewPCG(seed, seed))
	t.Logf("seed %d", seed)
	val := func() where.Value {
		switch r.IntN(4) {
		case 0:
			return where.String([]string{"a", "b", "c"}[r.IntN(3)])
		case 1:
			return where.Int(int64(r.IntN(7) - 3))
		case 2:
			return where.Float(float64(r.IntN(13)-6) / 2)
		}
		return where.Bool(r.IntN(2) == 0)
	}
	keys := []string{"k1", "k2", "k3"}
	var recs []chroma.Metadata
	for i := 0; i < 300; i++ {
		var md chroma.Metadata
		for _, k := range keys {
			if r.IntN(3) > 0 {
				if md == nil {
					md = chroma.Metadata{}
				}
				md[k] = val()
			}
		}
		recs = append(recs, md)
	}
	var gen func(depth int) *where.Expr
	gen = func(depth int) *where.Expr {
		if depth < 3 && r.IntN(4) == 0 {
			w := &where.Expr{Op: []where.Op{where.OpAnd, where.OpOr}[r.IntN(2)]}
			for i := r.IntN(4); i > 0; i-- {
				w.Children = append(w.Children, gen(depth+1))
			}
			return w
		}
		k := keys[r.IntN(len(keys))]
		op := []where.Op{where.OpEq, where.OpNe, where.OpGt, where.OpGte, where.OpLt, where.OpLte, where.OpIn, where.OpNin}[r.IntN(8)]
		switch op {
		case where.OpIn, where.OpNin:
			v := val()
			vals := []where.Value{v}
			for i := r.IntN(3); i > 0; i-- {
				w := val()
				if w.Kind == v.Kind {
					vals = append(vals, w)
				}
			}
			return &where.Expr{Op: op, Key: k, Values: vals}
		case where.OpGt, where.OpGte, where.OpLt, where.OpLte:
			v := val()
			for v.Kind != where.KindInt && v.Kind != where.KindFloat {
				v = val()
			}
			return &where.Expr{Op: op, Key: k, Value: v}
		}
		return &where.Expr{Op: op, Key: k, Value: val()}
	}
	for i := 0; i < 2000; i++ {
		w := gen(0)
		if err := w.Validate(); err != nil {
			t.Fatalf("generated invalid where %s: %v", w, err)
		}
		checkEvalAgrees(t, w, recs)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	d, u := "doc", "uri"
	r := &record{id: "x", dense: 7, order: 11, vseq: 5, norm: 2.5, doc: &d, uri: &u,
		meta: chroma.Metadata{"i": where.Int(-9), "f": where.Float(2), "s": where.String("é"), "b": where.Bool(false)}}
	got, err := decodeRecord("x", encodeRecord(r))
	if err != nil {
		t.Fatal(err)
	}
	if got.dense != r.dense || got.order != r.order || got.vseq != r.vseq || got.norm != r.norm ||
		*got.doc != d || *got.uri != u || len(got.meta) != 4 {
		t.Fatalf("got %+v, want %+v", got, r)
	}
	for k, v := range r.meta {
		if !got.meta[k].Equal(v) {
			t.Errorf("meta %s: got %v want %v", k, got.meta[k], v)
		}
	}
	b := encodeRecord(r)
	b[len(b)-1] ^= 1
	if _, err := decodeRecord("x", b); err == nil {
		t.Fatal("flipped byte not detected")
	}
}

// BenchmarkAddIDs compares addIDs with adding a value-sorted range one id at
// a time (what numeric did before), at 100,000 records with r = i mod 1000.
//
//	go test ./vecstore -run '^$' -bench BenchmarkAddIDs -benchtime 200x -count 5
func BenchmarkAddIDs(b *testing.B) {
	const n = 100000
	es := make([]intEntry, n)
	for i := range es {
		es[i] = intEntry{int64(i % 1000), uint32(i)}
	}
	slices.SortStableFunc(es, func(a, c intEntry) int { return cmp.Compare(a.v, c.v) })
	for _, limit := range []int{500, 100, 10, 1} {
		r := es[:limit*n/1000]
		b.Run(fmt.Sprintf("sel=%g%%/addIDs", float64(limit)/10), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				out := roaring.New()
				addIDs(out, r, func(e intEntry) uint32 { return e.id })
			}
		})
		b.Run(fmt.Sprintf("sel=%g%%/one-by-one", float64(limit)/10), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				out := roaring.New()
				for _, e := range r {
					out.Add(e.id)
				}
			}
		})
	}
}

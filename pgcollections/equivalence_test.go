package pgcollections_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/pgtest"
	"github.com/cairn-dev/cairn/pgcollections"
	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

func openBoth(t *testing.T) (*vecstore.Store, *pgcollections.Store) {
	t.Helper()
	ctx := context.Background()
	vs, err := vecstore.Open(ctx, t.TempDir(), vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vs.Close() })
	pg, err := pgcollections.Open(ctx, pgtest.Database(t), pgcollections.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Close() })
	return vs, pg
}

func strp(s string) *string { return &s }

// testRecords is a deterministic batch: every metadata kind, keys missing
// on some records, records without documents, uris, metadata.
func testRecords(n, dim int) chroma.AddRequest {
	rng := rand.New(rand.NewPCG(1, 2))
	var req chroma.AddRequest
	for i := range n {
		req.IDs = append(req.IDs, fmt.Sprintf("r%03d", i))
		v := make([]float32, dim)
		for j := range v {
			v[j] = rng.Float32()*2 - 1
		}
		req.Embeddings = append(req.Embeddings, v)
		var doc *string
		if i%6 != 5 {
			doc = strp(fmt.Sprintf("document %d about %s", i, []string{"alpha", "beta", "gamma delta", "Alpha"}[i%4]))
		}
		req.Documents = append(req.Documents, doc)
		var uri *string
		if i%9 == 0 {
			uri = strp(fmt.Sprintf("file:///r%d", i))
		}
		req.URIs = append(req.URIs, uri)
		md := chroma.Metadata{}
		if i%5 != 0 {
			md["i"] = where.Int(int64(i % 7))
		}
		if i%4 != 1 {
			md["f"] = where.Float(float64(i)*0.5 - 10)
		}
		if i%3 != 2 {
			md["s"] = where.String(fmt.Sprintf("s%d", i%5))
		}
		if i%2 == 0 {
			md["b"] = where.Bool(i%4 == 0)
		}
		if i%11 == 0 {
			md["mixed"] = where.Float(2.0)
		} else if i%11 == 1 {
			md["mixed"] = where.Int(2)
		}
		if i%13 == 0 {
			md = nil
		}
		req.Metadatas = append(req.Metadatas, md)
	}
	return req
}

var filters = []string{
	`{"i": 3}`, `{"i": {"$ne": 3}}`, `{"i": {"$gt": 2}}`, `{"i": {"$gte": 2.5}}`, `{"i": {"$lt": 2.9}}`, `{"i": {"$lte": -0.5}}`,
	`{"f": {"$gt": 0}}`, `{"f": {"$lte": 3}}`, `{"f": 2.5}`, `{"f": {"$eq": 2}}`, `{"s": "s1"}`, `{"s": {"$ne": "s1"}}`,
	`{"s": {"$in": ["s1", "s3"]}}`, `{"s": {"$nin": ["s1", "s3"]}}`, `{"i": {"$in": [1, 2]}}`, `{"i": {"$nin": [1, 2]}}`,
	`{"f": {"$in": [2.5, -10.0]}}`, `{"b": true}`, `{"b": {"$ne": false}}`, `{"mixed": 2}`, `{"mixed": 2.0}`, `{"mixed": {"$gt": 1.5}}`,
	`{"$and": [{"i": {"$gt": 1}}, {"s": "s2"}]}`, `{"$or": [{"i": 0}, {"b": false}]}`,
	`{"$and": [{"$or": [{"s": "s0"}, {"s": "s4"}]}, {"f": {"$gt": -5}}]}`, `{"missing": {"$ne": 1}}`, `{"missing": 1}`,
	`{"s": 1}`, `{"i": "1"}`,
}

var docFilters = []string{
	`{"$contains": "alpha"}`, `{"$not_contains": "alpha"}`, `{"$regex": "^document [0-9]*5 "}`, `{"$not_regex": "(?i)alpha"}`,
	`{"$and": [{"$contains": "gamma"}, {"$not_contains": "1"}]}`, `{"$or": [{"$contains": "beta"}, {"$regex": "7"}]}`,
}

func parseWhere(t *testing.T, s string) *where.Expr {
	t.Helper()
	w, err := where.Parse([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return w
}

func parseDoc(t *testing.T, s string) *where.DocExpr {
	t.Helper()
	d, err := where.ParseDocument([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return d
}

// sameErr compares two stores' answers: both nil, or the same class, rule,
// field and values.
func sameErr(t *testing.T, what string, ev, ep error) bool {
	t.Helper()
	if ev == nil && ep == nil {
		return true
	}
	var xv, xp *chroma.Error
	if errors.As(ev, &xv) && errors.As(ep, &xp) && xv.Class == xp.Class && xv.Rule == xp.Rule && xv.Field == xp.Field &&
		xv.Value == xp.Value && xv.Want == xp.Want && xv.Key == xp.Key {
		return false // same refusal; nothing more to compare
	}
	t.Errorf("%s: vecstore %v, postgres %v", what, ev, ep)
	return false
}

func approxVectors(a, b [][]float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if math.Abs(float64(a[i][j]-b[i][j])) > 1e-5 {
				return false
			}
		}
	}
	return true
}

func sameGet(t *testing.T, what string, v, p *chroma.GetResult) {
	t.Helper()
	if !approxVectors(v.Embeddings, p.Embeddings) || (v.Embeddings == nil) != (p.Embeddings == nil) {
		t.Errorf("%s: embeddings differ", what)
	}
	vc, pc := *v, *p
	vc.Embeddings, pc.Embeddings = nil, nil
	if !reflect.DeepEqual(vc, pc) {
		t.Errorf("%s:\nvecstore %s\npostgres %s", what, describe(&vc), describe(&pc))
	}
}

func describe(r *chroma.GetResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ids %v", r.IDs)
	if r.Documents != nil {
		b.WriteString(" docs [")
		for _, d := range r.Documents {
			if d == nil {
				b.WriteString("nil ")
			} else {
				fmt.Fprintf(&b, "%q ", *d)
			}
		}
		b.WriteString("]")
	}
	if r.Metadatas != nil {
		fmt.Fprintf(&b, " metadatas %v", r.Metadatas)
	}
	return b.String()
}

func sameQuery(t *testing.T, what string, v, p *chroma.QueryResult) {
	t.Helper()
	if len(v.Distances) != len(p.Distances) {
		t.Fatalf("%s: %d distance rows against %d", what, len(v.Distances), len(p.Distances))
	}
	for i := range v.Distances {
		if !approxVectors([][]float32{v.Distances[i]}, [][]float32{p.Distances[i]}) {
			t.Errorf("%s: distances %v, postgres %v", what, v.Distances[i], p.Distances[i])
		}
	}
	if len(v.Embeddings) != len(p.Embeddings) {
		t.Errorf("%s: embeddings rows differ", what)
	}
	for i := range v.Embeddings {
		if !approxVectors(v.Embeddings[i], p.Embeddings[i]) {
			t.Errorf("%s: embeddings differ", what)
		}
	}
	vc, pc := *v, *p
	vc.Distances, pc.Distances, vc.Embeddings, pc.Embeddings = nil, nil, nil, nil
	if !reflect.DeepEqual(vc, pc) {
		t.Errorf("%s:\nvecstore %+v\npostgres %+v", what, vc, pc)
	}
}

// TestSameAsVecstore runs the same operations on vecstore and on
// PostgreSQL and compares every answer: ids, documents, uris, metadata
// (kinds included), filters, errors, and query results (identical ids and
// order; distances within float32 round-off) on small, exactly scanned
// collections of every space.
func TestSameAsVecstore(t *testing.T) {
	ctx := context.Background()
	vs, pg := openBoth(t)
	stores := []chroma.Store{vs, pg}
	for _, space := range []chroma.Space{chroma.SpaceL2, chroma.SpaceCosine, chroma.SpaceIP} {
		t.Run(string(space), func(t *testing.T) {
			sp := space
			ids := make([]string, 2)
			for i, s := range stores {
				c, err := s.CreateCollection(ctx, chroma.CreateCollectionRequest{Name: "eq-" + string(sp),
					Metadata: chroma.Metadata{"owner": where.String("x"), "n": where.Int(3), "w": where.Float(1.0)},
					HNSW:     &chroma.HNSWParams{Space: &sp}})
				if err != nil {
					t.Fatal(err)
				}
				ids[i] = c.ID
				if c.Metadata["w"].Kind != where.KindFloat || c.Config.HNSW.Space != sp {
					t.Errorf("collection metadata %v config %+v", c.Metadata, c.Config)
				}
			}
			recs := testRecords(150, 8)
			both := func(what string, f func(s chroma.Store, id string) error) {
				t.Helper()
				ev, ep := f(vs, ids[0]), f(pg, ids[1])
				sameErr(t, what, ev, ep)
			}
			both("add", func(s chroma.Store, id string) error { return s.Add(ctx, id, recs) })
			// Write rules: duplicates, nulls, upsert merge, update, dimension.
			both("add again", func(s chroma.Store, id string) error {
				return s.Add(ctx, id, chroma.AddRequest{IDs: []string{"r001", "new1", "new1"},
					Embeddings: [][]float32{recs.Embeddings[5], recs.Embeddings[6], recs.Embeddings[7]},
					Documents:  []*string{strp("ignored"), strp("first"), strp("second")}})
			})
			both("upsert", func(s chroma.Store, id string) error {
				return s.Upsert(ctx, id, chroma.AddRequest{IDs: []string{"r002", "r003", "new2"},
					Embeddings: [][]float32{recs.Embeddings[9], recs.Embeddings[2], recs.Embeddings[1]},
					Metadatas: []chroma.Metadata{{"i": where.Null(), "s": where.String("up")}, nil,
						{"chroma:document": where.String("reserved doc"), "k": where.Int(1)}}})
			})
			both("update", func(s chroma.Store, id string) error {
				return s.Update(ctx, id, chroma.UpdateRequest{IDs: []string{"r004", "nope"},
					Documents: []*string{strp("updated"), strp("x")}, URIs: []*string{strp("u:4"), nil}})
			})
			both("wrong dimension", func(s chroma.Store, id string) error {
				return s.Add(ctx, id, chroma.AddRequest{IDs: []string{"d"}, Embeddings: [][]float32{{1, 2}}})
			})
			both("lengths", func(s chroma.Store, id string) error {
				return s.Add(ctx, id, chroma.AddRequest{IDs: []string{"a", "b"}, Embeddings: [][]float32{recs.Embeddings[0]}})
			})
			both("model", func(s chroma.Store, id string) error {
				return s.Add(ctx, id, chroma.AddRequest{IDs: []string{"m"}, Embeddings: [][]float32{recs.Embeddings[0]}, Model: "other"})
			})
			both("null in add", func(s chroma.Store, id string) error {
				return s.Add(ctx, id, chroma.AddRequest{IDs: []string{"n"}, Embeddings: [][]float32{recs.Embeddings[0]},
					Metadatas: []chroma.Metadata{{"x": where.Null()}}})
			})
			get := func(what string, req chroma.GetRequest) {
				t.Helper()
				rv, ev := vs.Get(ctx, ids[0], req)
				rp, ep := pg.Get(ctx, ids[1], req)
				if ev != nil || ep != nil {
					sameErr(t, what, ev, ep)
					return
				}
				sameGet(t, what, rv, rp)
			}
			all := []chroma.Include{chroma.IncludeDocuments, chroma.IncludeMetadatas, chroma.IncludeURIs, chroma.IncludeEmbeddings}
			get("all", chroma.GetRequest{Include: all})
			two := 2
			get("page", chroma.GetRequest{Limit: &two, Offset: 7})
			get("ids", chroma.GetRequest{IDs: []string{"r010", "nope", "r003", "r010"}, Include: all})
			get("no ids", chroma.GetRequest{IDs: []string{}})
			for _, f := range filters {
				get("where "+f, chroma.GetRequest{Where: parseWhere(t, f)})
			}
			for _, f := range docFilters {
				get("where_document "+f, chroma.GetRequest{WhereDocument: parseDoc(t, f)})
				get("both "+f, chroma.GetRequest{WhereDocument: parseDoc(t, f), Where: parseWhere(t, `{"i": {"$gte": 3}}`)})
			}
			query := func(what string, req chroma.QueryRequest) {
				t.Helper()
				rv, ev := vs.Query(ctx, ids[0], req)
				rp, ep := pg.Query(ctx, ids[1], req)
				if ev != nil || ep != nil {
					sameErr(t, what, ev, ep)
					return
				}
				sameQuery(t, what, rv, rp)
			}
			qs := [][]float32{recs.Embeddings[3], recs.Embeddings[40], {0.5, -0.5, 0.25, 0, 0.1, 0.9, -0.3, 0.2}}
			k := 7
			query("plain", chroma.QueryRequest{Embeddings: qs, NResults: &k,
				Include: []chroma.Include{chroma.IncludeDistances, chroma.IncludeDocuments, chroma.IncludeMetadatas, chroma.IncludeEmbeddings, chroma.IncludeURIs}})
			for _, f := range filters {
				query("where "+f, chroma.QueryRequest{Embeddings: qs, NResults: &k, Where: parseWhere(t, f)})
			}
			for _, f := range docFilters {
				query("where_document "+f, chroma.QueryRequest{Embeddings: qs, NResults: &k, WhereDocument: parseDoc(t, f)})
			}
			query("ids", chroma.QueryRequest{Embeddings: qs, IDs: []string{"r001", "r002", "r050"}})
			query("unknown id", chroma.QueryRequest{Embeddings: qs, IDs: []string{"r001", "zzz"}})
			query("dimension", chroma.QueryRequest{Embeddings: [][]float32{{1}}})
			both("delete where", func(s chroma.Store, id string) error {
				return s.Delete(ctx, id, chroma.DeleteRequest{Where: parseWhere(t, `{"s": "s2"}`)})
			})
			both("delete doc", func(s chroma.Store, id string) error {
				return s.Delete(ctx, id, chroma.DeleteRequest{WhereDocument: parseDoc(t, `{"$regex": "about beta$"}`)})
			})
			both("delete ids", func(s chroma.Store, id string) error {
				return s.Delete(ctx, id, chroma.DeleteRequest{IDs: []string{"r000", "r001"}})
			})
			both("delete nothing", func(s chroma.Store, id string) error {
				return s.Delete(ctx, id, chroma.DeleteRequest{IDs: []string{}})
			})
			nv, _ := vs.Count(ctx, ids[0])
			np, err := pg.Count(ctx, ids[1])
			if err != nil || nv != np {
				t.Errorf("count: vecstore %d, postgres %d (%v)", nv, np, err)
			}
			get("after deletes", chroma.GetRequest{Include: all})
			query("after deletes", chroma.QueryRequest{Embeddings: qs, NResults: &k})
		})
	}
}

// TestEmbeddingsExact checks that vectors come back as the float32 values
// written, in every space.
func TestEmbeddingsExact(t *testing.T) {
	ctx := context.Background()
	_, pg := openBoth(t)
	for _, sp := range []chroma.Space{chroma.SpaceL2, chroma.SpaceCosine, chroma.SpaceIP} {
		c, err := pg.CreateCollection(ctx, chroma.CreateCollectionRequest{Name: "exact-" + string(sp), HNSW: &chroma.HNSWParams{Space: &sp}})
		if err != nil {
			t.Fatal(err)
		}
		v := []float32{math.SmallestNonzeroFloat32, math.MaxFloat32, -1.0 / 3, 1e-38, 0.1, 123456.78}
		if err := pg.Add(ctx, c.ID, chroma.AddRequest{IDs: []string{"a"}, Embeddings: [][]float32{v}}); err != nil {
			t.Fatal(err)
		}
		r, err := pg.Get(ctx, c.ID, chroma.GetRequest{Include: []chroma.Include{chroma.IncludeEmbeddings}})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.Embeddings, [][]float32{v}) {
			t.Errorf("%s: got %v, want %v", sp, r.Embeddings, v)
		}
	}
}

// TestUnstorable: what PostgreSQL cannot store (NUL in text, NaN in jsonb)
// is refused as invalid, and nothing is written.
func TestUnstorable(t *testing.T) {
	ctx := context.Background()
	_, pg := openBoth(t)
	c, err := pg.CreateCollection(ctx, chroma.CreateCollectionRequest{Name: "unstorable"})
	if err != nil {
		t.Fatal(err)
	}
	for name, req := range map[string]chroma.AddRequest{
		"nul document": {IDs: []string{"a"}, Embeddings: [][]float32{{1}}, Documents: []*string{strp("a\x00b")}},
		"nul id":       {IDs: []string{"a\x00"}, Embeddings: [][]float32{{1}}},
		"nul metadata": {IDs: []string{"a"}, Embeddings: [][]float32{{1}}, Metadatas: []chroma.Metadata{{"k": where.String("\x00")}}},
		"nan metadata": {IDs: []string{"a"}, Embeddings: [][]float32{{1}}, Metadatas: []chroma.Metadata{{"k": where.Float(math.NaN())}}},
	} {
		if err := pg.Add(ctx, c.ID, req); !errors.Is(err, chroma.ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", name, err)
		}
	}
	if n, err := pg.Count(ctx, c.ID); err != nil || n != 0 {
		t.Errorf("count = %d (%v), want 0", n, err)
	}
}

package chromaapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/chromaapi"
	"github.com/cairn-dev/cairn/vecstore"
)

// TestAnswerBuiltWithinBound: max_answer_bytes bounds what a get or query
// copies while its answer is built, not only the JSON sent: a query asking
// for one 1 MiB document with 200 query embeddings (a 200 MiB answer), or
// for 20 such documents with one, or a get of 20, is refused with 400 naming max_answer_bytes
// having allocated a small multiple of the bound, on the loaded store, on
// a store answering in place from its file (a cold collection of a server,
// every read of a read-only one), and on PostgreSQL. Allocation is counted
// in-process (runtime.MemStats.TotalAlloc, which bounds the growth of the
// peak heap from above).
func TestAnswerBuiltWithinBound(t *testing.T) {
	const bound = 2 << 20
	doc := strings.Repeat("d", 1<<20)
	meta := strings.Repeat("m", 64<<10)
	var ids, embs, docs, metas []string
	for i := range 20 {
		ids = append(ids, fmt.Sprintf(`"r%d"`, i))
		embs = append(embs, fmt.Sprintf("[%d,1]", i+1))
		docs = append(docs, `"`+doc+`"`)
		metas = append(metas, `{"m":"`+meta+`"}`)
	}
	add := `{"ids":[` + strings.Join(ids, ",") + `],"embeddings":[` + strings.Join(embs, ",") + `],"documents":[` + strings.Join(docs, ",") + `],"metadatas":[` + strings.Join(metas, ",") + `]}`
	opts := chromaapi.Options{MaxAnswerBytes: bound, MaxBodyBytes: 64 << 20}
	written := func(base string) (string, string) {
		id := createCollection(t, base, "big", nil)
		if a := call(t, base, "POST", collPath+"/"+id+"/add", add, nil); a.status != 201 {
			t.Fatalf("add: %d %.300s", a.status, a.body)
		}
		return base, id
	}
	servers := map[string]func(t *testing.T) (string, string){
		"loaded": func(t *testing.T) (string, string) {
			base, _ := cairnServer(t, opts)
			return written(base)
		},
		"in place": func(t *testing.T) (string, string) { return inPlaceServer(t, opts, written) },
		"postgres": func(t *testing.T) (string, string) { return written(cairnPGServer(t, opts)) },
	}
	for name, start := range servers {
		t.Run(name, func(t *testing.T) {
			base, id := start(t)
			for _, r := range []struct{ what, path, body string }{
				{"query: one document x 200 embeddings", "/query", `{"query_embeddings":[` + strings.TrimSuffix(strings.Repeat("[1,1],", 200), ",") + `],"n_results":1,"include":["documents","metadatas"]}`},
				{"query: 20 documents for one embedding", "/query", `{"query_embeddings":[[1,1]],"n_results":20,"include":["documents","metadatas"]}`},
				{"get: 20 documents", "/get", `{"ids":[` + strings.Join(ids, ",") + `],"include":["documents","metadatas"]}`},
			} {
				var a answer
				alloc := allocated(func() { a = call(t, base, "POST", collPath+"/"+id+r.path, r.body, nil) })
				if a.status != 400 || !strings.Contains(a.body, "max_answer_bytes") {
					t.Errorf("%s: %d %.300s, want 400 naming max_answer_bytes", r.what, a.status, a.body)
				}
				t.Logf("%s: %.1f MiB allocated (bound %d MiB)", r.what, float64(alloc)/(1<<20), bound>>20)
				if alloc > 6*bound {
					t.Errorf("%s allocated %.1f MiB building an answer bounded at %d MiB", r.what, float64(alloc)/(1<<20), bound>>20)
				}
			}
		})
	}
}

// allocated returns the bytes the process allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// inPlaceServer writes through a store of its own (write returns the
// server and the collection id), closes it, and serves the directory with
// a one-shot store, which answers the reads of a collection it has not
// loaded in place from the file (queries too: ExactMax 1).
func inPlaceServer(t *testing.T, opts chromaapi.Options, write func(base string) (string, string)) (string, string) {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	w, err := vecstore.Open(ctx, dir, vecstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wopts := opts
	wopts.Collections = w
	srv := httptest.NewServer(chromaapi.New(wopts))
	_, id := write(srv.URL)
	srv.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := vecstore.Open(ctx, dir, vecstore.Options{OneShot: true, ExactMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	opts.Collections = r
	srv = httptest.NewServer(chromaapi.New(opts))
	t.Cleanup(func() {
		srv.Close()
		_ = r.Close()
	})
	return srv.URL, id
}

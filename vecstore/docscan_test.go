package vecstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

// hookCtx calls hook (once) at its n-th Err call, and answers Canceled
// from then on when cancel is set: a context that ends, or does something,
// in the middle of a request.
type hookCtx struct {
	context.Context
	mu     sync.Mutex
	calls  int
	n      int
	cancel bool
	hook   func()
}

func (c *hookCtx) Err() error {
	c.mu.Lock()
	c.calls++
	fire := c.calls == c.n
	calls := c.calls
	c.mu.Unlock()
	if fire && c.hook != nil {
		c.hook()
	}
	if c.cancel && calls >= c.n {
		return context.Canceled
	}
	return nil
}

// docCollection makes a collection of n records whose documents all
// contain "needle".
func docCollection(t *testing.T, n int) (*vecstore.Store, string) {
	t.Helper()
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	c, err := s.CreateCollection(ctx, chroma.CreateCollectionRequest{Name: "docs"})
	if err != nil {
		t.Fatal(err)
	}
	const batch = 5000
	for lo := 0; lo < n; lo += batch {
		var req chroma.AddRequest
		for i := lo; i < min(lo+batch, n); i++ {
			doc := fmt.Sprintf("document %d with a needle in it", i)
			req.IDs = append(req.IDs, fmt.Sprint("r", i))
			req.Embeddings = append(req.Embeddings, []float32{float32(i%97) + 1, float32(i%89) + 1})
			req.Documents = append(req.Documents, &doc)
		}
		if err := s.Add(ctx, c.ID, req); err != nil {
			t.Fatal(err)
		}
	}
	return s, c.ID
}

// entryChecks is more than the context checks a request makes before its
// scan starts, so a hook at this count fires inside the scan's loop.
const entryChecks = 6

// scanDocs is the size of the scanned collections: the scan checks its
// context every 1,024 records, so 8,192 records reach entryChecks checks
// inside the scan with room to spare (-short); 20,000 without -short.
func scanDocs() int {
	if testing.Short() {
		return 8 * 1024
	}
	return 20_000
}

// TestDocumentScanCancels: a where_document scan notices its context ending
// while it runs (not only on entry), for get, query and delete.
func TestDocumentScanCancels(t *testing.T) {
	docs := scanDocs()
	s, id := docCollection(t, docs)
	wd := where.Contains("needle")
	for name, op := range map[string]func(ctx context.Context) error{
		"get": func(ctx context.Context) error {
			_, err := s.Get(ctx, id, chroma.GetRequest{WhereDocument: wd})
			return err
		},
		"query": func(ctx context.Context) error {
			_, err := s.Query(ctx, id, chroma.QueryRequest{Embeddings: [][]float32{{1, 1}}, WhereDocument: wd})
			return err
		},
		"delete": func(ctx context.Context) error {
			return s.Delete(ctx, id, chroma.DeleteRequest{WhereDocument: wd})
		},
	} {
		ctx := &hookCtx{Context: context.Background(), n: entryChecks, cancel: true}
		if err := op(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v after %d context checks, want context.Canceled", name, err, ctx.calls)
		}
	}
	if n, err := s.Count(context.Background(), id); err != nil || n != docs {
		t.Errorf("count after the cancelled delete = %d, %v; want %d", n, err, docs)
	}
}

// TestDocumentScanDoesNotBlockWriters: an add made while a where_document
// scan runs completes during the scan, and the scan's answer includes it.
func TestDocumentScanDoesNotBlockWriters(t *testing.T) {
	docs := scanDocs()
	s, id := docCollection(t, docs)
	doc := "added during the scan, with a needle"
	added := make(chan error, 1)
	var addedDuringScan bool
	ctx := &hookCtx{Context: context.Background(), n: entryChecks, hook: func() {
		go func() {
			added <- s.Add(context.Background(), id, chroma.AddRequest{IDs: []string{"late"},
				Embeddings: [][]float32{{3, 4}}, Documents: []*string{&doc}})
		}()
		select {
		case err := <-added:
			addedDuringScan = err == nil
			if err != nil {
				t.Errorf("add during the scan: %v", err)
			}
		case <-time.After(2 * time.Minute): // a deadlock guard, not a measurement: generous on a loaded machine
			t.Error("an add waited behind the where_document scan")
		}
	}}
	res, err := s.Get(ctx, id, chroma.GetRequest{WhereDocument: where.Contains("needle"), Include: []chroma.Include{}})
	if err != nil {
		t.Fatal(err)
	}
	if !addedDuringScan {
		t.Fatalf("the add did not run during the scan (%d context checks)", ctx.calls)
	}
	if len(res.IDs) != docs+1 || !slices.Contains(res.IDs, "late") {
		t.Errorf("get answered %d records (late included: %v), want %d with the late one", len(res.IDs), slices.Contains(res.IDs, "late"), docs+1)
	}
}

// bigDocCollection makes a collection of n records whose documents are
// size bytes of letters, with no digit in them.
func bigDocCollection(t *testing.T, n, size int) (*vecstore.Store, string) {
	t.Helper()
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	c, err := s.CreateCollection(ctx, chroma.CreateCollectionRequest{Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Repeat("abcdefghij", size/10)
	var req chroma.AddRequest
	for i := range n {
		req.IDs = append(req.IDs, fmt.Sprint("r", i))
		req.Embeddings = append(req.Embeddings, []float32{float32(i) + 1, 1})
		req.Documents = append(req.Documents, &doc)
	}
	if err := s.Add(ctx, c.ID, req); err != nil {
		t.Fatal(err)
	}
	return s, c.ID
}

// slowFilter is a where_document of n $not_regex clauses that no document
// of bigDocCollection matches, so every clause scans every document whole.
func slowFilter(n int) *where.DocExpr {
	var cs []*where.DocExpr
	for i := range n {
		cs = append(cs, where.NotRegex(fmt.Sprintf("[a-j]+%d", i)))
	}
	return where.DocAll(cs...)
}

// TestDocumentScanStopsWithinARecord: a context ending while one record's
// clauses are being evaluated stops the scan before the next clause, not
// after the record (here minutes of regular-expression work: 4 records x
// 500 clauses x 2 MB).
func TestDocumentScanStopsWithinARecord(t *testing.T) {
	s, id := bigDocCollection(t, 4, 2<<20)
	ctx := &hookCtx{Context: context.Background(), n: entryChecks, cancel: true}
	done := make(chan error, 1)
	go func() {
		_, err := s.Get(ctx, id, chroma.GetRequest{WhereDocument: slowFilter(500), MaxScanBytes: 1 << 62})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("get: %v, want context.Canceled", err)
		}
	case <-time.After(60 * time.Second): // a hang guard, not a measurement
		t.Fatal("the scan went on after its context ended")
	}
}

// TestDocumentScanWorkBounded: a where_document whose clauses would scan
// more document bytes than the request's MaxScanBytes is refused as
// invalid, naming where_document and the limit, for get, query and
// delete (which deletes nothing); within the bound it is served.
func TestDocumentScanWorkBounded(t *testing.T) {
	s, id := bigDocCollection(t, 20, 10_000)
	ctx := context.Background()
	wd := slowFilter(10) // 20 records x 10 clauses x 10 KB = 2 MB scanned
	const limit = 1 << 20
	for name, op := range map[string]func(max int64) error{
		"get": func(max int64) error {
			_, err := s.Get(ctx, id, chroma.GetRequest{WhereDocument: wd, MaxScanBytes: max})
			return err
		},
		"query": func(max int64) error {
			_, err := s.Query(ctx, id, chroma.QueryRequest{Embeddings: [][]float32{{1, 1}}, WhereDocument: wd, MaxScanBytes: max})
			return err
		},
		"delete": func(max int64) error {
			return s.Delete(ctx, id, chroma.DeleteRequest{WhereDocument: where.Contains("0"), MaxScanBytes: max})
		},
	} {
		err := op(limit)
		if name == "delete" {
			err = op(100_000) // 20 x 10 KB: 200 KB for one clause
		}
		var ve *chroma.Error
		if !errors.As(err, &ve) || !errors.Is(err, chroma.ErrInvalid) || ve.Rule != chroma.RuleScanLimit || ve.Field != "where_document" || !strings.Contains(err.Error(), "max_scan_bytes") {
			t.Errorf("%s over the bound: %v, want invalid where_document naming max_scan_bytes", name, err)
		}
		if err := op(4 << 20); err != nil {
			t.Errorf("%s within the bound: %v", name, err)
		}
	}
	if n, err := s.Count(ctx, id); err != nil || n != 20 {
		t.Errorf("count after the refused delete = %d, %v; want 20", n, err)
	}
}

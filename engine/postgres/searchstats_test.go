package postgres_test

import (
	"context"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/pgtest"
)

// cairn stats on PostgreSQL counts the searches of every process sharing
// the store: a process adds its counts after a write and when it closes
// having written, as on a data dir; one that only searched (and fewer than
// 64 times) adds nothing, so a search alone writes nothing.
func TestSearchCountsSharedOnPostgres(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	open := func() *engine.Engine { return openPG(t, dsn, engine.Options{NoVectorWorker: true}) }
	search := func(e *engine.Engine, n int) {
		t.Helper()
		for range n {
			if _, err := e.Search(ctx, engine.SearchRequest{Query: "outbox", Mode: engine.ModeKeyword}); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(e *engine.Engine, text string) {
		t.Helper()
		if _, err := e.StoreMessage(ctx, engine.NewMessage{Channel: "c", Sender: "a", Content: text}); err != nil {
			t.Fatal(err)
		}
	}
	searches := func(e *engine.Engine) int64 {
		t.Helper()
		st, err := ops.StoreStats(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		return st.Search.Searches
	}
	a, b, c := open(), open(), open()
	search(a, 3)
	write(a, "the outbox drains in batches") // adds a's 3
	search(b, 2)
	write(b, "the outbox has leases")
	search(b, 4) // pending in b until it closes
	search(c, 5) // c never writes: kept in memory only
	if got := searches(a); got != 3+2 {
		t.Fatalf("a counts %d searches, want 5 (its own and b's first two)", got)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	d := open()
	if got := searches(d); got != 3+2+4 {
		t.Fatalf("a new process counts %d searches, want 9", got)
	}
}

package ingest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// clock is a fake clock: each call returns the current time and advances
// it by a second.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(time.Second)
	return t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// openTest opens an engine on a fresh dir with a fake clock; the store is
// checked and the engine closed when the test ends.
func openTest(t testing.TB, opts engine.Options) (*engine.Engine, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	opts.Now = c.Now
	e, err := sqlite.OpenEngine(context.Background(), t.TempDir(), opts, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ops.Check(context.Background(), e); err != nil {
			t.Errorf("invariant check: %v", err)
		}
		if err := e.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return e, c
}

func ptr[T any](v T) *T { return &v }

func mustNote(t testing.TB, e *engine.Engine, n engine.NewNote) int64 {
	t.Helper()
	res, err := e.WriteNote(context.Background(), n)
	if err != nil {
		t.Fatalf("WriteNote(%+v): %v", n, err)
	}
	return res.ID
}

func mustStore(t testing.TB, e *engine.Engine, m engine.NewMessage) int64 {
	t.Helper()
	res, err := e.StoreMessage(context.Background(), m)
	if err != nil {
		t.Fatalf("StoreMessage(%+v): %v", m, err)
	}
	return res.ID
}

// countMessages counts all messages through a filter-only listing.
func countMessages(t testing.TB, e *engine.Engine) int {
	t.Helper()
	rs, err := e.Search(context.Background(), engine.SearchRequest{Limit: engine.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	return len(rs)
}

func resultIDs(rs []engine.SearchResult) []int64 {
	out := []int64{}
	for _, r := range rs {
		out = append(out, r.Message.ID)
	}
	return out
}

package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// clock is a fake clock: each call returns the current time and advances it
// by step.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func newClock() *clock {
	return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), step: time.Second}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// dataStores are the data dirs' stores of the engines the tests opened
// (openEngine), for what only the data dir has (storeOf).
var dataStores sync.Map // *engine.Engine -> *sqlite.Store

// openEngine opens the data dir dir and an engine over it
// (sqlite.OpenEngineStore), keeping its store for storeOf.
func openEngine(ctx context.Context, dir string, opts engine.Options) (*engine.Engine, error) {
	return openEngineWith(ctx, dir, opts, sqlite.Options{})
}

// openEngineWith is openEngine with the data dir's own options.
func openEngineWith(ctx context.Context, dir string, opts engine.Options, sopts sqlite.Options) (*engine.Engine, error) {
	e, st, err := sqlite.OpenEngineStore(ctx, dir, opts, sopts)
	if err != nil {
		return nil, err
	}
	dataStores.Store(e, st)
	return e, nil
}

// storeOf is the data dir's store of e, which openEngine opened.
func storeOf(e *engine.Engine) *sqlite.Store {
	st, _ := dataStores.Load(e)
	return st.(*sqlite.Store)
}

// openTest opens an engine on a fresh dir with a fake clock; the database is
// checked and the engine closed when the test ends.
func openTest(t testing.TB, opts engine.Options) (*engine.Engine, *clock) {
	t.Helper()
	c := newClock()
	if opts.Now == nil {
		opts.Now = c.Now
	}
	e, err := openEngine(context.Background(), t.TempDir(), opts)
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

func ids(ms []engine.Message) []int64 {
	out := []int64{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func resultIDs(rs []engine.SearchResult) []int64 {
	out := []int64{}
	for _, r := range rs {
		out = append(out, r.Message.ID)
	}
	return out
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

// countMarks counts the rows of the breadcrumb marks cache.
func countMarks(ctx context.Context, e *engine.Engine) (int, error) {
	var c engine.PartCounts
	err := e.Use(func(s engine.Store) error {
		var err error
		c, err = s.PartCounts(ctx)
		return err
	})
	return int(c.Marks), err
}

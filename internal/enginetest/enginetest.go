package enginetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// Clock is a fake clock: each call of Now returns the current time and
// advances it by a step (a second unless SetStep changes it).
type Clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

// NewClock is a Clock at 2026-01-02 03:04:05 UTC.
func NewClock() *Clock {
	return &Clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), step: time.Second}
}

// Now returns the clock's time and moves it a step on.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

// SetStep sets how far each call of Now moves the clock on (0 stops it).
func (c *Clock) SetStep(d time.Duration) {
	c.mu.Lock()
	c.step = d
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// dataStores are the data dirs' stores of the engines the tests opened
// (OpenEngine), for what only the data dir has (StoreOf).
var dataStores sync.Map // *engine.Engine -> *sqlite.Store

// OpenEngine opens the data dir dir and an engine over it
// (sqlite.OpenEngineStore), keeping its store for StoreOf.
func OpenEngine(ctx context.Context, dir string, opts engine.Options) (*engine.Engine, error) {
	return OpenEngineWith(ctx, dir, opts, sqlite.Options{})
}

// OpenEngineWith is OpenEngine with the data dir's own options.
func OpenEngineWith(ctx context.Context, dir string, opts engine.Options, sopts sqlite.Options) (*engine.Engine, error) {
	e, st, err := sqlite.OpenEngineStore(ctx, dir, opts, sopts)
	if err != nil {
		return nil, err
	}
	dataStores.Store(e, st)
	return e, nil
}

// StoreOf is the data dir's store of e, which OpenEngine opened.
func StoreOf(e *engine.Engine) *sqlite.Store {
	st, _ := dataStores.Load(e)
	return st.(*sqlite.Store)
}

// Open opens an engine on a fresh dir with a fake clock (unless opts has
// its own); the store is checked and the engine closed when the test
// ends.
func Open(t testing.TB, opts engine.Options) (*engine.Engine, *Clock) {
	t.Helper()
	c := NewClock()
	if opts.Now == nil {
		opts.Now = c.Now
	}
	e, err := OpenEngine(context.Background(), t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	checkAtCleanup(t, e)
	return e, c
}

// RetentionNow is the time OpenIn's engines see unless given their own
// clock.
var RetentionNow = time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)

// OpenIn opens an engine in dir (a fresh temp dir when "") whose clock
// stands at RetentionNow unless opts has its own; the store is checked
// and the engine closed when the test ends.
func OpenIn(t testing.TB, dir string, opts engine.Options) *engine.Engine {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return RetentionNow }
	}
	e, err := OpenEngine(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	checkAtCleanup(t, e)
	return e
}

// checkAtCleanup checks e's store and closes e when the test ends.
func checkAtCleanup(t testing.TB, e *engine.Engine) {
	t.Cleanup(func() {
		if err := ops.Check(context.Background(), e); err != nil {
			t.Errorf("invariant check: %v", err)
		}
		if err := e.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

// Ptr is a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }

// MustNote writes n and returns its id, failing the test on an error.
func MustNote(t testing.TB, e *engine.Engine, n engine.NewNote) int64 {
	t.Helper()
	res, err := e.WriteNote(context.Background(), n)
	if err != nil {
		t.Fatalf("WriteNote(%+v): %v", n, err)
	}
	return res.ID
}

// MustStore stores m and returns its id, failing the test on an error.
func MustStore(t testing.TB, e *engine.Engine, m engine.NewMessage) int64 {
	t.Helper()
	res, err := e.StoreMessage(context.Background(), m)
	if err != nil {
		t.Fatalf("StoreMessage(%+v): %v", m, err)
	}
	return res.ID
}

// IDs are the ids of ms, in order.
func IDs(ms []engine.Message) []int64 {
	out := []int64{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// ResultIDs are the message ids of rs, in order.
func ResultIDs(rs []engine.SearchResult) []int64 {
	out := []int64{}
	for _, r := range rs {
		out = append(out, r.Message.ID)
	}
	return out
}

// CountMessages counts all messages through a filter-only listing.
func CountMessages(t testing.TB, e *engine.Engine) int {
	t.Helper()
	rs, err := e.Search(context.Background(), engine.SearchRequest{Limit: engine.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	return len(rs)
}

// CountMarks counts the rows of the breadcrumb marks cache.
func CountMarks(ctx context.Context, e *engine.Engine) (int, error) {
	var c engine.PartCounts
	err := e.Use(func(s engine.Store) error {
		var err error
		c, err = s.PartCounts(ctx)
		return err
	})
	return int(c.Marks), err
}

// AgedNote writes agent's note content with confidence conf, type typ
// and metadata meta (JSON, or ""), created age before RetentionNow, and
// returns its id.
func AgedNote(t testing.TB, e *engine.Engine, agent, content string, age time.Duration, conf float64, typ, meta string) int64 {
	t.Helper()
	res, err := e.WriteNote(context.Background(), engine.NewNote{Agent: agent, Content: content, Confidence: &conf, Type: typ,
		Metadata: []byte(meta), CreatedAt: RetentionNow.Add(-age)})
	if err != nil {
		t.Fatal(err)
	}
	return res.ID
}

// OpenFuzz opens an engine in f's temp dir for a fuzz target's inputs to
// share, closed (not checked) when the target ends.
func OpenFuzz(f *testing.F) *engine.Engine {
	e, err := OpenEngine(context.Background(), f.TempDir(), engine.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { e.Close() })
	return e
}

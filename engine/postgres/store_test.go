package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/postgres"
	"github.com/cairn-dev/cairn/internal/pgtest"
)

// Open applies the migrations once, records the format and refuses a
// database of a newer format or of another application.
func TestMigrationsVersioned(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	for i := 0; i < 2; i++ { // the second Open finds everything applied
		s, err := postgres.Open(ctx, dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if v, it := s.VectorVersion(); !it {
			t.Errorf("vector %s: iterative scans off", v)
		}
		s.Close()
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, "SELECT version FROM cairn_format WHERE app = 'cairn'").Scan(&v); err != nil || v != postgres.FormatVersion() {
		t.Fatalf("format %d (%v), want %d", v, err, postgres.FormatVersion())
	}
	for _, set := range []string{"version = 99", "app = 'other'"} {
		if _, err := conn.Exec(ctx, "UPDATE cairn_format SET "+set); err != nil {
			t.Fatal(err)
		}
		_, err := postgres.Open(ctx, dsn, postgres.Options{})
		if !errors.Is(err, engine.ErrIncompatibleFormat) {
			t.Fatalf("%s: Open = %v, want ErrIncompatibleFormat", set, err)
		}
	}
}

// A malformed URL is bad input naming the store; an unreachable server is
// an error naming it, without the password.
func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	var inv *engine.InvalidError
	for _, dsn := range []string{"postgres://x:y@[::1", "mysql://localhost/x", "postgres://u@127.0.0.1:5432/db?sslmode=bogus"} {
		if _, err := postgres.Open(ctx, dsn, postgres.Options{}); !errors.As(err, &inv) || inv.Field != "store" {
			t.Errorf("Open(%q) = %v, want an *InvalidError on store", dsn, err)
		}
	}
	_, err := postgres.Open(ctx, "postgres://cairn:secret@127.0.0.1:1/cairn?connect_timeout=2", postgres.Options{})
	if err == nil || errors.As(err, &inv) {
		t.Fatalf("unreachable server: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "127.0.0.1:1") || strings.Contains(msg, "secret") {
		t.Fatalf("unreachable server: %q should name the host and not the password", msg)
	}
}

// Engines over separate pools (as separate processes) write the same and
// different messages at once: every repeated message has one id, no write
// is lost, ids are unique, and the counters add up.
func TestConcurrentEnginesOneDatabase(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	const engines, writers, shared, own = 3, 4, 40, 40
	es := make([]*engine.Engine, engines)
	for i := range es {
		s, err := postgres.Open(ctx, dsn, postgres.Options{MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		e, err := engine.OpenBackend(ctx, s, postgres.Kind, "", engine.Options{Embedder: wordsEmbedder(32)})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		es[i] = e
	}
	var mu sync.Mutex
	sharedIDs := map[int]map[int64]bool{}
	ownIDs := map[int64]bool{}
	var wg sync.WaitGroup
	errs := make(chan error, engines*writers)
	for ei := range es {
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < shared+own; i++ {
					var m engine.NewMessage
					if i%2 == 0 {
						k := i / 2
						m = engine.NewMessage{Channel: fmt.Sprintf("team-%d", k%3), Sender: "agent", Content: fmt.Sprintf("shared finding %d", k)}
					} else {
						m = engine.NewMessage{Channel: fmt.Sprintf("team-%d", i%3), Sender: fmt.Sprintf("w%d-%d", ei, w), Content: fmt.Sprintf("own finding %d", i)}
					}
					var rs []engine.WriteResult
					var err error
					if i%5 == 0 {
						rs, err = es[ei].StoreMessages(ctx, []engine.NewMessage{m, {Channel: "batch", Sender: "agent", Content: fmt.Sprintf("batched %d", i)}})
					} else {
						var r engine.WriteResult
						r, err = es[ei].StoreMessage(ctx, m)
						rs = []engine.WriteResult{r}
					}
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					if i%2 == 0 {
						if sharedIDs[i/2] == nil {
							sharedIDs[i/2] = map[int64]bool{}
						}
						sharedIDs[i/2][rs[0].ID] = true
					} else {
						if ownIDs[rs[0].ID] {
							mu.Unlock()
							errs <- fmt.Errorf("own message got id %d twice", rs[0].ID)
							return
						}
						ownIDs[rs[0].ID] = true
					}
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for k, ids := range sharedIDs {
		if len(ids) != 1 {
			t.Fatalf("shared message %d got ids %v", k, ids)
		}
	}
	chans, err := es[0].ListChannels(ctx, engine.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, c := range chans {
		total += c.MessageCount
	}
	// Distinct contents: shared (every even i), own (each writer's odd i),
	// batched (every i divisible by 5, the same for every writer).
	wantShared, wantOwn, batched := (shared+own)/2, engines*writers*(shared+own)/2, (shared+own)/5
	if len(sharedIDs) != wantShared || len(ownIDs) != wantOwn {
		t.Fatalf("%d shared and %d own messages, want %d and %d", len(sharedIDs), len(ownIDs), wantShared, wantOwn)
	}
	want := int64(wantShared + wantOwn + batched)
	if total != want {
		t.Fatalf("channels count %d messages, want %d", total, want)
	}
	for _, e := range es {
		if err := ops.SyncVectors(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	sets, err := ops.VectorSets(ctx, es[0])
	if err != nil || len(sets) != 1 || sets[0].Pending != 0 {
		t.Fatalf("vector sets %+v (%v): want one set with nothing pending", sets, err)
	}
}

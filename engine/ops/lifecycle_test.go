package ops_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/claudecode/ccfixture"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
)

// eventually polls cond until it holds or a generous deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // generous: the machine is shared
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunLifecycle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := openEngine(t)
	out := t.TempDir()
	var mu sync.Mutex
	var errs []error
	done := make(chan error, 1)
	go func() {
		done <- ops.RunLifecycle(ctx, e, ops.LifecycleOptions{
			GCEvery:     20 * time.Millisecond,
			GC:          ops.GCOptions{Policies: []ops.RetentionPolicy{{Channels: []string{"agent-notes:tmp"}, MaxAge: time.Hour}}, NoVacuum: true},
			ExportEvery: 20 * time.Millisecond,
			Export:      ingest.ExportSessionsOptions{OutDir: out, Formats: []string{ingest.FormatJSONL}},
			OnError: func(err error) {
				t.Logf("lifecycle error: %v", err)
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			},
		})
	}()
	tree, err := ccfixture.Write(t.TempDir(), ccfixture.Options{Rand: rand.New(rand.NewPCG(8, 8)), Projects: 1, SessionsPerProject: 1, Turns: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: tree.Root}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, tree.Sessions[0].ID+".jsonl")
	eventually(t, "the continuous export", func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
	// The session grows: the export follows.
	before, _ := os.ReadFile(path)
	f, err := os.OpenFile(tree.Sessions[0].Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(`{"type":"user","uuid":"ffffffff-0000-4000-8000-000000000001","parentUuid":null,"sessionId":"` + tree.Sessions[0].ID + `","timestamp":"2026-01-06T10:00:00.000Z","message":{"role":"user","content":"one more"}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.ImportSessions(ctx, e, ingest.ImportSessionsOptions{Root: tree.Root}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the export of the grown session", func() bool {
		b, _ := os.ReadFile(path)
		return len(b) > len(before)
	})
	res, err := e.WriteNote(context.Background(), engine.NewNote{Agent: "tmp", Content: "scratch", CreatedAt: time.Now().Add(-2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	id := res.ID
	eventually(t, "the scheduled gc", func() bool {
		_, err := e.GetMessage(ctx, id)
		return errors.Is(err, engine.ErrNotFound)
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("RunLifecycle returned %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 {
		t.Errorf("lifecycle errors: %v", errs)
	}
}

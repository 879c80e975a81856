package ops_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/engine/ingest"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// TestContinuousExportFollowsCommits: with Options.ContinuousExport, every
// committed write and delete re-exports its channel, whichever goroutine
// wrote; by Close every write is in the export, and only the changed
// channels were written.
func TestContinuousExportFollowsCommits(t *testing.T) {
	ctx := context.Background()
	out := t.TempDir()
	var errs []error
	e, err := sqlite.OpenEngine(ctx, t.TempDir(), engine.Options{Observer: ops.NewExporter(ops.ContinuousExport{OutDir: out, Formats: []string{ingest.FormatJSONL},
		OnError: func(err error) { errs = append(errs, err) }})}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	untouched, err := sqlite.OpenEngine(ctx, e.Dir(), engine.Options{}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A write through an engine without the observer exports nothing.
	if _, err := untouched.StoreMessage(ctx, engine.NewMessage{Channel: "quiet", Sender: "ann", Content: "not exported"}); err != nil {
		t.Fatal(err)
	}
	untouched.Close()

	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				if _, err := e.StoreMessage(ctx, engine.NewMessage{Channel: "busy", Sender: "ann", Content: fmt.Sprintf("writer %d message %d", w, i)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	res, err := e.StoreMessage(ctx, engine.NewMessage{Channel: "busy", Sender: "bob", Content: "deleted later"})
	if err != nil {
		t.Fatal(err)
	}
	gone := res.ID
	if err := e.DeleteMessage(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, ingest.MessagesDir, "busy.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for w := range 4 {
		for i := range 10 {
			if !strings.Contains(string(b), fmt.Sprintf("writer %d message %d", w, i)) {
				t.Errorf("export lacks writer %d message %d", w, i)
			}
		}
	}
	if strings.Contains(string(b), "deleted later") {
		t.Error("the deleted message is still in the export")
	}
	if _, err := os.Stat(filepath.Join(out, ingest.MessagesDir, "quiet.jsonl")); err == nil {
		t.Error("a channel no write of this engine changed was exported")
	}
	if len(errs) > 0 {
		t.Errorf("export errors: %v", errs)
	}
}

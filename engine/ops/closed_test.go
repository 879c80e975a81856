package ops_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// TestOperationsAfterClose: every operation refuses a closed engine with
// engine.ErrClosed (the guard of Engine.Use) instead of reaching its
// closed store.
func TestOperationsAfterClose(t *testing.T) {
	ctx := context.Background()
	eng, err := sqlite.OpenEngine(ctx, t.TempDir(), engine.Options{}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := note(t, eng, "", "", "a note written before the close")
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	head := strings.Repeat("a", 40)
	for name, err := range map[string]error{
		"Check":         ops.Check(ctx, eng),
		"Consistency":   second(ops.Consistency(ctx, eng)),
		"Rebuild":       second(ops.Rebuild(ctx, eng, ops.RebuildOptions{})),
		"StoreStats":    second(ops.StoreStats(ctx, eng)),
		"VectorBacklog": second(ops.VectorBacklog(ctx, eng, "")),
		"VectorSets":    second(ops.VectorSets(ctx, eng)),
		"SyncVectors":   ops.SyncVectors(ctx, eng, nil),
		"PutBreadcrumbMarks": ops.PutBreadcrumbMarks(ctx, eng, "/repo", head,
			map[int64][]engine.BreadcrumbMark{id: {{Kind: "file", Ref: "a.go", State: engine.MarkValid}}}),
		"MessagesToMark": second(ops.MessagesToMark(ctx, eng, "/repo", head, 0, 0)),
		"CachedMarks":    second(ops.CachedMarks(ctx, eng, []int64{id})),
	} {
		if !errors.Is(err, engine.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

// second returns the error of a call that also returns a value.
func second[T any](_ T, err error) error { return err }

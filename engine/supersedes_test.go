package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestSupersedes: a message that supersedes an earlier one takes its place
// in search and listings (every mode; include_superseded brings it back),
// reads name the replacement, a bad supersedes is refused naming the
// field with nothing written, a repeat links nothing, and deleting the
// correction makes the original current again.
func TestSupersedes(t *testing.T) {
	ctx := context.Background()
	e := enginetest.OpenDir(t, t.TempDir(), engine.Options{Embedder: enginetest.NewHashEmbedder("hash-s", 32)})
	old := enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: "the deploy script lives in tools/deploy.sh"})
	other := enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: "the deploy window is Tuesday"})
	fix := enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: "the deploy script moved to scripts/deploy.sh", Supersedes: old})
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	m, err := e.GetMessage(ctx, old)
	if err != nil || m.SupersededBy != fix || m.Supersedes != 0 {
		t.Fatalf("old: superseded_by %d supersedes %d (%v)", m.SupersededBy, m.Supersedes, err)
	}
	if m, _ := e.GetMessage(ctx, fix); m.Supersedes != old || m.SupersededBy != 0 {
		t.Fatalf("fix: supersedes %d superseded_by %d", m.Supersedes, m.SupersededBy)
	}
	found := func(req engine.SearchRequest) []int64 {
		t.Helper()
		out := enginetest.ResultIDs(enginetest.Search(t, e, req))
		slices.Sort(out)
		return out
	}
	for _, mode := range []string{"keyword", "semantic", "hybrid", ""} {
		q := "deploy script"
		if mode == "" {
			q = ""
		}
		if got := found(engine.SearchRequest{Query: q, Mode: engine.SearchMode(mode)}); slices.Contains(got, old) || !slices.Contains(got, fix) {
			t.Errorf("%q: %v, want %d and not %d", mode, got, fix, old)
		}
		if got := found(engine.SearchRequest{Query: q, Mode: engine.SearchMode(mode), Filter: engine.Filter{IncludeSuperseded: true}}); !slices.Contains(got, old) {
			t.Errorf("%q include_superseded: %v lacks %d", mode, got, old)
		}
	}
	// A listing of one still fills its limit past the superseded message.
	if got := found(engine.SearchRequest{Limit: 2}); !slices.Equal(got, []int64{other, fix}) {
		t.Errorf("listing of 2: %v", got)
	}

	var inv *engine.InvalidError
	for _, c := range []struct {
		id   int64
		rule string
	}{{9999, "does not exist"}, {old, "already superseded by message"}, {-3, "must be the id"}} {
		_, err := e.WriteNote(ctx, engine.NewNote{Agent: "bob", Content: "another take " + c.rule, Supersedes: c.id})
		if !errors.As(err, &inv) || inv.Field != "supersedes" || !strings.Contains(inv.Rule, c.rule) {
			t.Errorf("supersedes %d: %v", c.id, err)
		}
		_, err = e.StoreMessages(ctx, []engine.NewMessage{{Channel: "agent-notes:bob", Sender: "bob", Content: "batch take " + c.rule, Supersedes: c.id}})
		if !errors.As(err, &inv) || inv.Field != "supersedes" {
			t.Errorf("batch supersedes %d: %v", c.id, err)
		}
	}
	if st, _ := ops.StoreStats(ctx, e); st.Messages != 3 {
		t.Fatalf("%d messages after refused writes, want 3", st.Messages)
	}
	// Writing the correction again is a repeat: its id, nothing linked.
	res, err := e.WriteNote(ctx, engine.NewNote{Agent: "bob", Content: "the deploy script moved to scripts/deploy.sh", Supersedes: old})
	if err != nil || res.Created || res.ID != fix {
		t.Fatalf("repeat: %+v %v", res, err)
	}

	// Deleting the correction makes the original current again.
	if err := e.DeleteMessage(ctx, fix); err != nil {
		t.Fatal(err)
	}
	if m, _ := e.GetMessage(ctx, old); m.SupersededBy != 0 {
		t.Fatalf("after deleting the correction: superseded_by %d", m.SupersededBy)
	}
	if got := found(engine.SearchRequest{Query: "deploy script", Mode: engine.ModeKeyword}); !slices.Contains(got, old) {
		t.Fatalf("original not found after its correction was deleted: %v", got)
	}
	// Deleting the original clears the correction's link.
	fix2 := enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: "scripts/deploy.sh is the deploy script", Supersedes: old})
	if err := e.DeleteMessage(ctx, old); err != nil {
		t.Fatal(err)
	}
	if m, err := e.GetMessage(ctx, fix2); err != nil || m.Supersedes != 0 {
		t.Fatalf("after deleting the original: supersedes %d (%v)", m.Supersedes, err)
	}
}

// TestNearDuplicateWrites: with an embedder, a write saying nearly what
// the same sender already wrote in the same channel stores nothing and
// returns the earlier id; another sender, another channel, unrelated
// content, a correction (supersedes) or the check switched off store it.
func TestNearDuplicateWrites(t *testing.T) {
	ctx := context.Background()
	e := enginetest.OpenDir(t, t.TempDir(), engine.Options{Embedder: enginetest.NewHashEmbedder("hash-d", 64), NearDuplicateCosine: engine.DefaultNearDuplicateCosine})
	first := enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: "the deploy window is Tuesday afternoon"})
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	res, err := e.WriteNote(ctx, engine.NewNote{Agent: "bob", Content: "The deploy window is Tuesday afternoon!"})
	if err != nil || res.Created || !res.NearDuplicate || res.ID != first || res.Similarity < engine.DefaultNearDuplicateCosine {
		t.Fatalf("near-duplicate: %+v %v", res, err)
	}
	// The exact repeat keeps its own rule (no near_duplicate flag).
	if res, err := e.WriteNote(ctx, engine.NewNote{Agent: "bob", Content: "the deploy window is Tuesday afternoon"}); err != nil || res.Created || res.NearDuplicate || res.ID != first {
		t.Fatalf("exact repeat: %+v %v", res, err)
	}
	for _, c := range []struct {
		name string
		note engine.NewNote
	}{
		{"another sender", engine.NewNote{Agent: "ann", Content: "The deploy window is Tuesday afternoon!"}},
		{"another channel", engine.NewNote{Agent: "bob", Project: "web", Content: "The deploy window is Tuesday afternoon!"}},
		{"unrelated", engine.NewNote{Agent: "bob", Content: "the cache is warmed at boot"}},
		{"another number", engine.NewNote{Agent: "bob", Content: "The deploy window is Tuesday afternoon at 3"}},
		{"a correction", engine.NewNote{Agent: "bob", Content: "The deploy window is Tuesday afternoon!!", Supersedes: first}},
	} {
		res, err := e.WriteNote(ctx, c.note)
		if err != nil || !res.Created || res.NearDuplicate {
			t.Errorf("%s: %+v %v", c.name, res, err)
		}
	}
	off := enginetest.OpenDir(t, t.TempDir(), engine.Options{Embedder: enginetest.NewHashEmbedder("hash-d", 64)})
	enginetest.MustNote(t, off, engine.NewNote{Agent: "bob", Content: "the deploy window is Tuesday afternoon"})
	if err := ops.SyncVectors(ctx, off, nil); err != nil {
		t.Fatal(err)
	}
	if res, err := off.WriteNote(ctx, engine.NewNote{Agent: "bob", Content: "The deploy window is Tuesday afternoon!"}); err != nil || !res.Created {
		t.Fatalf("check off: %+v %v", res, err)
	}
}

// TestSupersededShowLineImports: a read of a superseded message (its JSON,
// with supersedes and superseded_by, ids of its own store) imports into
// another store as a plain message.
func TestSupersededShowLineImports(t *testing.T) {
	ctx := context.Background()
	src := enginetest.OpenDir(t, t.TempDir(), engine.Options{})
	old := enginetest.MustNote(t, src, engine.NewNote{Agent: "bob", Content: "the cache is cold at boot"})
	fix := enginetest.MustNote(t, src, engine.NewNote{Agent: "bob", Content: "the cache is warmed at boot", Supersedes: old})
	var lines strings.Builder
	for _, id := range []int64{old, fix} {
		m, err := src.GetMessage(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(m)
		lines.Write(b)
		lines.WriteByte('\n')
	}
	if !strings.Contains(lines.String(), `"superseded_by":`) || !strings.Contains(lines.String(), `"supersedes":`) {
		t.Fatalf("reads lack the links: %s", lines.String())
	}
	dst := enginetest.OpenDir(t, t.TempDir(), engine.Options{})
	rep, err := ingest.ImportMessages(ctx, dst, strings.NewReader(lines.String()), ingest.ImportMessagesOptions{})
	if err != nil || rep.Imported != 2 || rep.Invalid != 0 {
		t.Fatalf("import: %+v %v", rep, err)
	}
}

package engine_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

func TestGetAgentNotes(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	a1 := enginetest.MustNote(t, e, engine.NewNote{Agent: "alice", Content: "global 1"})
	p1 := enginetest.MustNote(t, e, engine.NewNote{Agent: "alice", Project: "cairn", Content: "cairn 1"})
	enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Project: "cairn", Content: "bob's"})
	a2 := enginetest.MustNote(t, e, engine.NewNote{Agent: "alice", Content: "global 2"})
	q1 := enginetest.MustNote(t, e, engine.NewNote{Agent: "alice", Project: "other", Content: "other 1"})
	// A post by alice to a plain channel is not a note.
	if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: "general"}); err != nil {
		t.Fatal(err)
	}
	enginetest.MustStore(t, e, engine.NewMessage{Channel: "general", Sender: "alice", Content: "not a note"})

	for _, tc := range []struct {
		agent, project string
		limit          int
		want           []int64
	}{
		{"alice", "", 0, []int64{q1, a2, p1, a1}},
		{"alice", "", 2, []int64{q1, a2}},
		{"alice", "cairn", 0, []int64{p1}},
		{"alice", "nope", 0, []int64{}},
		{"nobody", "", 0, []int64{}},
	} {
		ms, err := e.GetAgentNotes(ctx, tc.agent, tc.project, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if got := enginetest.IDs(ms); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("GetAgentNotes(%q, %q, %d): got %v, want %v", tc.agent, tc.project, tc.limit, got, tc.want)
		}
	}
	for _, bad := range []struct {
		agent, project string
		limit          int
		field          string
	}{{"", "", 0, "agent"}, {"a b", "", 0, "agent"}, {"a", "x y", 0, "project"}, {"a", "", -1, "limit"}, {"a", "", engine.MaxLimit + 1, "limit"}} {
		var inv *engine.InvalidError
		if _, err := e.GetAgentNotes(ctx, bad.agent, bad.project, bad.limit); !errors.As(err, &inv) || inv.Field != bad.field {
			t.Errorf("GetAgentNotes(%+v): got %v, want InvalidError on %s", bad, err, bad.field)
		}
	}
}

func TestGetChannelMessages(t *testing.T) {
	ctx := context.Background()
	e, clk := enginetest.Open(t, engine.Options{})
	if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: "general"}); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	var all []int64
	for i := range 10 {
		all = append(all, enginetest.MustStore(t, e, engine.NewMessage{Channel: "general", Sender: "bob", Content: "m" + string(rune('a'+i)), CreatedAt: base.Add(time.Duration(i) * time.Hour)}))
	}
	// Same timestamp: newer id first.
	tie := enginetest.MustStore(t, e, engine.NewMessage{Channel: "general", Sender: "bob", Content: "tie", CreatedAt: base.Add(9 * time.Hour)})
	clk.Set(base.Add(10 * time.Hour))

	ms, err := e.GetChannelMessages(ctx, "general", 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := enginetest.IDs(ms), []int64{tie, all[9], all[8]}; !reflect.DeepEqual(got, want) {
		t.Fatalf("newest 3: got %v, want %v", got, want)
	}
	ms, err = e.GetChannelMessages(ctx, "general", 3*time.Hour, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := enginetest.IDs(ms), []int64{tie, all[9], all[8], all[7]}; !reflect.DeepEqual(got, want) {
		t.Fatalf("max age 3h: got %v, want %v", got, want)
	}
	ms, err = e.GetChannelMessages(ctx, "general", 0, 0)
	if err != nil || len(ms) != 11 {
		t.Fatalf("default limit: %d messages, %v", len(ms), err)
	}
	var inv *engine.InvalidError
	if _, err := e.GetChannelMessages(ctx, "general", -time.Second, 0); !errors.As(err, &inv) {
		t.Fatalf("negative max age: %v", err)
	}
	if _, err := e.GetChannelMessages(ctx, "bad channel", 0, 0); !errors.As(err, &inv) {
		t.Fatalf("bad channel: %v", err)
	}
	// Auto-created channels can be read before anyone wrote to them only
	// once they exist.
	if _, err := e.GetChannelMessages(ctx, "agent-notes:zed", 0, 0); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("unwritten notes channel: %v", err)
	}
}

func TestGetMessages(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	a := enginetest.MustNote(t, e, engine.NewNote{Agent: "a", Content: "1"})
	b := enginetest.MustNote(t, e, engine.NewNote{Agent: "a", Content: "2"})
	ms, err := e.GetMessages(ctx, []int64{b, 999, a})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := enginetest.IDs(ms), []int64{b, a}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestListChannelsScopes(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	enginetest.MustNote(t, e, engine.NewNote{Agent: "alice", Content: "x"})
	enginetest.MustNote(t, e, engine.NewNote{Agent: "alice", Project: "cairn", Content: "x"})
	enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Project: "web", Content: "x"})
	for _, c := range []engine.NewChannel{{ID: "general"}, {ID: "cairn-dev", Project: "cairn"}} {
		if _, err := e.CreateChannel(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		scope engine.Scope
		want  []string
	}{
		{engine.Scope{}, []string{"agent-notes:alice", "agent-notes:alice:cairn", "agent-notes:bob:web", "cairn-dev", "general",
			"project:cairn:decisions", "project:cairn:patterns", "project:cairn:policies", "project:web:decisions", "project:web:patterns", "project:web:policies"}},
		{engine.Scope{Kind: "all", Project: "web"}, []string{"agent-notes:bob:web", "project:web:decisions", "project:web:patterns", "project:web:policies"}},
		{engine.Scope{Kind: "notes"}, []string{"agent-notes:alice", "agent-notes:alice:cairn", "agent-notes:bob:web"}},
		{engine.Scope{Kind: "notes", Agent: "alice"}, []string{"agent-notes:alice", "agent-notes:alice:cairn"}},
		{engine.Scope{Kind: "notes", Project: "cairn"}, []string{"agent-notes:alice:cairn"}},
		{engine.Scope{Kind: "project"}, []string{"cairn-dev", "project:cairn:decisions", "project:cairn:patterns", "project:cairn:policies", "project:web:decisions", "project:web:patterns", "project:web:policies"}},
		{engine.Scope{Kind: "project", Project: "cairn"}, []string{"cairn-dev", "project:cairn:decisions", "project:cairn:patterns", "project:cairn:policies"}},
		{engine.Scope{Kind: "project", Project: "none"}, nil},
	} {
		chs, err := e.ListChannels(ctx, tc.scope)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range chs {
			got = append(got, c.ID)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ListChannels(%+v):\n got %q\nwant %q", tc.scope, got, tc.want)
		}
	}
	for _, s := range []engine.Scope{{Kind: "everything"}, {Project: "a b"}, {Kind: "notes", Agent: "a b"}} {
		var inv *engine.InvalidError
		if _, err := e.ListChannels(ctx, s); !errors.As(err, &inv) {
			t.Errorf("ListChannels(%+v): got %v, want InvalidError", s, err)
		}
	}
}

func TestListAgents(t *testing.T) {
	ctx := context.Background()
	e, clk := enginetest.Open(t, engine.Options{})
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	clk.Set(t0)
	enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: "1"})
	enginetest.MustNote(t, e, engine.NewNote{Agent: "alice", Project: "cairn", Content: "2"})
	enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: "3"})
	as, err := e.ListAgents(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.Agent{
		{Name: "alice", ProjectID: "cairn", MessageCount: 1, CreatedAt: t0.Add(time.Second), LastActive: t0.Add(time.Second)},
		{Name: "bob", MessageCount: 2, CreatedAt: t0, LastActive: t0.Add(2 * time.Second)},
	}
	if !reflect.DeepEqual(as, want) {
		t.Fatalf("ListAgents:\n got %+v\nwant %+v", as, want)
	}
	as, err = e.ListAgents(ctx, "cairn")
	if err != nil || len(as) != 1 || as[0].Name != "alice" {
		t.Fatalf("ListAgents(cairn): %+v %v", as, err)
	}
	var inv *engine.InvalidError
	if _, err := e.ListAgents(ctx, "bad project"); !errors.As(err, &inv) {
		t.Fatalf("bad project: %v", err)
	}
}

package engine_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

func TestWriteNoteFields(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	content := "Ask @bob and @carol.  (not mail@example.com) about   @bob's  WAL change."
	res, err := e.WriteNote(ctx, engine.NewNote{
		Agent: "alice", Project: "cairn", Content: content,
		Metadata:    json.RawMessage(`{"source": "test", "n": 12345678901234567890, "breadcrumbs": {"files": ["a.go"]}}`),
		Breadcrumbs: engine.Breadcrumbs{Files: []string{"a.go", "b.go"}, Commits: []string{"abc123"}, Issues: []string{"7"}, PRs: []string{"9"}},
		Confidence:  enginetest.Ptr(0.9),
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(content))
	want := engine.WriteResult{ID: 1, ChannelID: "agent-notes:alice:cairn", Created: true, ContentHash: hex.EncodeToString(sum[:])}
	if res != want {
		t.Fatalf("got %+v, want %+v", res, want)
	}
	m, err := e.GetMessage(ctx, res.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.ChannelID != "agent-notes:alice:cairn" || m.SenderID != "alice" || m.SenderProjectID != "cairn" ||
		m.Content != content || m.ContentHash != want.ContentHash || m.Confidence != 0.9 || m.MessageType != "reflection" ||
		m.WordCount != 10 || !m.HasBreadcrumbs {
		t.Fatalf("message fields: %+v", m)
	}
	if got, want := m.Mentions, []string{"bob", "carol"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("mentions: got %q, want %q", got, want)
	}
	if got, want := string(m.Metadata), `{"breadcrumbs":{"files":["a.go","b.go"],"commits":["abc123"],"issues":["7"],"prs":["9"]},"n":12345678901234567890,"source":"test"}`; got != want {
		t.Fatalf("metadata:\n got %s\nwant %s", got, want)
	}
	if got, want := m.Breadcrumbs(), (engine.Breadcrumbs{Files: []string{"a.go", "b.go"}, Commits: []string{"abc123"}, Issues: []string{"7"}, PRs: []string{"9"}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("breadcrumbs: got %+v, want %+v", got, want)
	}
	if got, want := m.CreatedAt, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC); !got.Equal(want) || got.Location() != time.UTC {
		t.Fatalf("created_at: got %v, want %v UTC", got, want)
	}
}

func TestStoreDefaultsAndPrecision(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: "general"}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 5, 6, 7, 8, 9, 123456789, time.FixedZone("x", 3600))
	id := enginetest.MustStore(t, e, engine.NewMessage{Channel: "general", Sender: "bob", Content: "hello", CreatedAt: at})
	m, err := e.GetMessage(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if m.Confidence != engine.DefaultConfidence || m.MessageType != engine.TypeMessage || string(m.Metadata) != "{}" ||
		len(m.Mentions) != 0 || m.HasBreadcrumbs || m.WordCount != 1 || m.SenderProjectID != "" {
		t.Fatalf("defaults: %+v", m)
	}
	if want := at.Truncate(time.Millisecond).UTC(); !m.CreatedAt.Equal(want) {
		t.Fatalf("created_at: got %v, want %v (ms precision, UTC)", m.CreatedAt, want)
	}
	for _, c := range []float64{0, 1} {
		id := enginetest.MustStore(t, e, engine.NewMessage{Channel: "general", Sender: "bob", Content: "edge " + string(rune('a'+int(c))), Confidence: enginetest.Ptr(c)})
		m, err := e.GetMessage(ctx, id)
		if err != nil || m.Confidence != c {
			t.Fatalf("confidence %v: got %v, %v", c, m.Confidence, err)
		}
	}
}

func TestIdempotentWrite(t *testing.T) {
	ctx := context.Background()
	e, clk := enginetest.Open(t, engine.Options{})
	first, err := e.WriteNote(ctx, engine.NewNote{Agent: "alice", Content: "same", Confidence: enginetest.Ptr(0.2)})
	if err != nil {
		t.Fatal(err)
	}
	clk.Set(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	again, err := e.WriteNote(ctx, engine.NewNote{Agent: "alice", Content: "same", Confidence: enginetest.Ptr(0.9)})
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || again.Created || !first.Created {
		t.Fatalf("first %+v, again %+v: want same id, Created true then false", first, again)
	}
	if n := enginetest.CountMessages(t, e); n != 1 {
		t.Fatalf("%d messages, want 1", n)
	}
	m, _ := e.GetMessage(ctx, first.ID)
	if m.Confidence != 0.2 {
		t.Fatalf("idempotent write changed the message: confidence %v", m.Confidence)
	}
	agents, err := e.ListAgents(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(agents) != 1 || !agents[0].LastActive.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) || agents[0].MessageCount != 1 {
		t.Fatalf("agents after idempotent write: %+v (want last_active updated, count 1)", agents)
	}
	// Other sender, channel or content: new messages.
	if r, _ := e.WriteNote(ctx, engine.NewNote{Agent: "bob", Content: "same"}); !r.Created {
		t.Fatal("same content from another sender was not stored")
	}
	if r, _ := e.WriteNote(ctx, engine.NewNote{Agent: "alice", Project: "p", Content: "same"}); !r.Created {
		t.Fatal("same content in another channel was not stored")
	}
	if r, _ := e.WriteNote(ctx, engine.NewNote{Agent: "alice", Content: "same "}); !r.Created {
		t.Fatal("different content was not stored")
	}
}

func TestBadInputWritesNothing(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{MaxContentBytes: 100})
	if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: "general"}); err != nil {
		t.Fatal(err)
	}
	ok := engine.NewMessage{Channel: "general", Sender: "bob", Content: "fine"}
	with := func(f func(*engine.NewMessage)) engine.NewMessage { m := ok; f(&m); return m }
	cases := []struct {
		name  string
		in    engine.NewMessage
		field string
	}{
		{"empty content", with(func(m *engine.NewMessage) { m.Content = "" }), "content"},
		{"blank content", with(func(m *engine.NewMessage) { m.Content = " \n\t" }), "content"},
		{"content over limit", with(func(m *engine.NewMessage) { m.Content = strings.Repeat("x", 101) }), "content"},
		{"invalid utf-8", with(func(m *engine.NewMessage) { m.Content = "a\xffb" }), "content"},
		{"nul byte", with(func(m *engine.NewMessage) { m.Content = "a\x00b" }), "content"},
		{"confidence above 1", with(func(m *engine.NewMessage) { m.Confidence = enginetest.Ptr(1.01) }), "confidence"},
		{"confidence below 0", with(func(m *engine.NewMessage) { m.Confidence = enginetest.Ptr(-0.1) }), "confidence"},
		{"confidence NaN", with(func(m *engine.NewMessage) { m.Confidence = enginetest.Ptr(math.NaN()) }), "confidence"},
		{"confidence Inf", with(func(m *engine.NewMessage) { m.Confidence = enginetest.Ptr(math.Inf(1)) }), "confidence"},
		{"metadata array", with(func(m *engine.NewMessage) { m.Metadata = json.RawMessage(`[1]`) }), "metadata"},
		{"metadata string", with(func(m *engine.NewMessage) { m.Metadata = json.RawMessage(`"x"`) }), "metadata"},
		{"metadata null", with(func(m *engine.NewMessage) { m.Metadata = json.RawMessage(`null`) }), "metadata"},
		{"metadata broken", with(func(m *engine.NewMessage) { m.Metadata = json.RawMessage(`{"a":`) }), "metadata"},
		{"metadata two objects", with(func(m *engine.NewMessage) { m.Metadata = json.RawMessage(`{} {}`) }), "metadata"},
		{"metadata too big", with(func(m *engine.NewMessage) { m.Metadata = json.RawMessage(`{"a":"` + strings.Repeat("x", 200) + `"}`) }), "metadata"},
		{"breadcrumbs not object", with(func(m *engine.NewMessage) { m.Metadata = json.RawMessage(`{"breadcrumbs": []}`) }), "metadata.breadcrumbs"},
		{"breadcrumb kind not a name", with(func(m *engine.NewMessage) { m.Metadata = json.RawMessage(`{"breadcrumbs": {"my urls": ["x"]}}`) }), "metadata.breadcrumbs.my urls"},
		{"breadcrumb commit not a hash", with(func(m *engine.NewMessage) { m.Breadcrumbs.Commits = []string{"HEAD~1"} }), "breadcrumbs.commits"},
		{"breadcrumb line range backwards", with(func(m *engine.NewMessage) { m.Breadcrumbs.Files = []string{"a.go:89-45"} }), "breadcrumbs.files"},
		{"breadcrumb line 0", with(func(m *engine.NewMessage) { m.Breadcrumbs.Files = []string{"a.go:0"} }), "breadcrumbs.files"},
		{"breadcrumb external ref not a URL", with(func(m *engine.NewMessage) {
			m.Metadata = json.RawMessage(`{"breadcrumbs": {"external_refs": ["see the wiki"]}}`)
		}), "breadcrumbs.external_refs"},
		{"breadcrumb pull request", with(func(m *engine.NewMessage) {
			m.Metadata = json.RawMessage(`{"breadcrumbs": {"pull_requests": ["next week"]}}`)
		}), "breadcrumbs.pull_requests"},
		{"breadcrumb on two lines", with(func(m *engine.NewMessage) {
			m.Metadata = json.RawMessage(`{"breadcrumbs": {"decisions": ["a\nb"]}}`)
		}), "breadcrumbs.decisions"},
		{"breadcrumbs not strings", with(func(m *engine.NewMessage) { m.Metadata = json.RawMessage(`{"breadcrumbs": {"files": [{}]}}`) }), "metadata.breadcrumbs.files"},
		{"breadcrumb empty", with(func(m *engine.NewMessage) { m.Breadcrumbs.Files = []string{" "} }), "breadcrumbs.files"},
		{"channel empty", with(func(m *engine.NewMessage) { m.Channel = "" }), "channel"},
		{"channel spaces", with(func(m *engine.NewMessage) { m.Channel = "a b" }), "channel"},
		{"channel too long", with(func(m *engine.NewMessage) { m.Channel = strings.Repeat("c", 129) }), "channel"},
		{"notes channel bad agent", with(func(m *engine.NewMessage) { m.Channel = "agent-notes:-x" }), "channel"},
		{"notes channel empty project", with(func(m *engine.NewMessage) { m.Channel = "agent-notes:bob:" }), "channel"},
		{"project channel bad name", with(func(m *engine.NewMessage) { m.Channel = "project:cairn:" }), "channel"},
		{"sender empty", with(func(m *engine.NewMessage) { m.Sender = "" }), "sender"},
		{"sender with colon", with(func(m *engine.NewMessage) { m.Sender = "a:b" }), "sender"},
		{"sender too long", with(func(m *engine.NewMessage) { m.Sender = strings.Repeat("a", 65) }), "sender"},
		{"project bad", with(func(m *engine.NewMessage) { m.Project = "has space" }), "project"},
		{"type bad", with(func(m *engine.NewMessage) { m.Type = "two words" }), "message_type"},
		{"created before 1970", with(func(m *engine.NewMessage) { m.CreatedAt = time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC) }), "created_at"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.StoreMessage(ctx, tc.in)
			var inv *engine.InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("got %v, want *InvalidError", err)
			}
			if inv.Field != tc.field || inv.Rule == "" {
				t.Fatalf("got field %q rule %q, want field %q", inv.Field, inv.Rule, tc.field)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("message %q does not name the field", err)
			}
		})
	}
	if n := enginetest.CountMessages(t, e); n != 0 {
		t.Fatalf("%d messages written by bad input", n)
	}
	agents, _ := e.ListAgents(ctx, "")
	if len(agents) != 0 {
		t.Fatalf("agents recorded by bad input: %+v", agents)
	}
	chs, _ := e.ListChannels(ctx, engine.Scope{})
	if len(chs) != 1 {
		t.Fatalf("channels created by bad input: %+v", chs)
	}

	// The limit holds exactly at the boundary.
	enginetest.MustStore(t, e, with(func(m *engine.NewMessage) { m.Content = strings.Repeat("x", 100) }))

	// WriteNote validates its own fields.
	for _, n := range []engine.NewNote{{Agent: "", Content: "x"}, {Agent: "a b", Content: "x"}, {Agent: "a", Project: "-p", Content: "x"}} {
		var inv *engine.InvalidError
		if _, err := e.WriteNote(ctx, n); !errors.As(err, &inv) {
			t.Errorf("WriteNote(%+v): got %v, want InvalidError", n, err)
		}
	}
}

// TestWritingCreatesTheChannel: channels are namespaces, so a write to a
// channel that does not exist creates it, with the type its id says (the
// designs' global:general and project:backend included).
func TestWritingCreatesTheChannel(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	for _, c := range []struct{ id, typ, project string }{
		{"nowhere", engine.ChannelPlain, ""},
		{"global:general", engine.ChannelPlain, ""},
		{"project:backend", engine.ChannelProject, "backend"},
		{"project:backend:incidents", engine.ChannelProject, "backend"},
	} {
		if _, err := e.StoreMessage(ctx, engine.NewMessage{Channel: c.id, Sender: "bob", Content: "x in " + c.id}); err != nil {
			t.Fatalf("post to new channel %s: %v", c.id, err)
		}
		ch, err := e.GetChannel(ctx, c.id)
		if err != nil || ch.ChannelType != c.typ || ch.ProjectID != c.project || ch.MessageCount != 1 {
			t.Errorf("channel %s = %+v, %v; want type %s, project %q, 1 message", c.id, ch, err, c.typ, c.project)
		}
	}
}

func TestUnknownMessage(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	if _, err := e.GetMessage(ctx, 42); !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "42") {
		t.Fatalf("GetMessage(42): got %v", err)
	}
	var inv *engine.InvalidError
	if _, err := e.GetMessage(ctx, 0); !errors.As(err, &inv) || inv.Field != "id" {
		t.Fatalf("GetMessage(0): got %v", err)
	}
	if _, err := e.GetChannelMessages(ctx, "nowhere", 0, 10); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("GetChannelMessages: got %v", err)
	}
	if _, err := e.GetChannel(ctx, "nowhere"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("GetChannel: got %v", err)
	}
	if n := enginetest.CountMessages(t, e); n != 0 {
		t.Fatalf("%d messages", n)
	}
}

func TestAutoCreatedChannels(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	enginetest.MustStore(t, e, engine.NewMessage{Channel: "project:cairn:decisions", Sender: "alice", Project: "cairn", Content: "d1", Type: engine.TypeDecision})
	enginetest.MustStore(t, e, engine.NewMessage{Channel: "agent-notes:bob", Sender: "alice", Content: "written into bob's notes"})
	enginetest.MustNote(t, e, engine.NewNote{Agent: "carol", Project: "org/repo", Content: "n"})
	chs, err := e.ListChannels(ctx, engine.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range chs {
		got = append(got, c.ID+"|"+c.ChannelType+"|"+c.Name+"|"+c.OwnerAgentName+"|"+c.OwnerAgentProjectID+"|"+c.ProjectID)
	}
	want := []string{
		"agent-notes:bob|agent-notes|agent-notes:bob|bob||",
		"agent-notes:carol:org/repo|agent-notes|agent-notes:carol:org/repo|carol|org/repo|org/repo",
		"project:cairn:decisions|project|decisions|||cairn",
		"project:cairn:patterns|project|patterns|||cairn",
		"project:cairn:policies|project|policies|||cairn",
		"project:org/repo:decisions|project|decisions|||org/repo",
		"project:org/repo:patterns|project|patterns|||org/repo",
		"project:org/repo:policies|project|policies|||org/repo",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("channels:\n got %q\nwant %q", got, want)
	}
	c, err := e.GetChannel(ctx, "project:cairn:decisions")
	if err != nil || c.MessageCount != 1 || c.LastMessageAt.IsZero() {
		t.Fatalf("GetChannel: %+v %v", c, err)
	}
}

func TestCreateChannel(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	c, err := e.CreateChannel(ctx, engine.NewChannel{ID: "team/log", Description: "what shipped", Project: "cairn"})
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "team/log" || c.Name != "team/log" || c.ChannelType != engine.ChannelPlain || c.ProjectID != "cairn" || c.Description != "what shipped" {
		t.Fatalf("created %+v", c)
	}
	got, err := e.GetChannel(ctx, "team/log")
	if err != nil || got != c {
		t.Fatalf("GetChannel: got %+v, %v; want %+v", got, err, c)
	}
	if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: "team/log"}); !errors.Is(err, engine.ErrExists) {
		t.Fatalf("second create: got %v, want ErrExists", err)
	}
	for _, id := range []string{"", "agent-notes:bob", "project:cairn:decisions", "bad id", "-x"} {
		var inv *engine.InvalidError
		if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: id}); !errors.As(err, &inv) || inv.Field != "id" {
			t.Errorf("CreateChannel(%q): got %v, want InvalidError on id", id, err)
		}
	}
	var inv *engine.InvalidError
	if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: "ok", Description: strings.Repeat("d", 5000)}); !errors.As(err, &inv) {
		t.Errorf("long description: got %v", err)
	}
	enginetest.MustStore(t, e, engine.NewMessage{Channel: "team/log", Sender: "bob", Content: "shipped"})
}

func TestStoreMessagesBatch(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{})
	batch := []engine.NewMessage{
		{Channel: "agent-notes:a", Sender: "a", Content: "one"},
		{Channel: "agent-notes:a", Sender: "a", Content: "two"},
		{Channel: "agent-notes:a", Sender: "a", Content: "one"},
		{Channel: "project:p:decisions", Sender: "b", Project: "p", Content: "three"},
	}
	res, err := e.StoreMessages(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	got := []bool{res[0].Created, res[1].Created, res[2].Created, res[3].Created}
	if !reflect.DeepEqual(got, []bool{true, true, false, true}) || res[2].ID != res[0].ID {
		t.Fatalf("results %+v", res)
	}
	// All or nothing: a bad element writes nothing.
	bad := append([]engine.NewMessage{{Channel: "agent-notes:a", Sender: "a", Content: "four"}}, engine.NewMessage{Channel: "agent-notes:a", Sender: "a", Content: ""})
	var inv *engine.InvalidError
	var be *engine.BatchError
	if _, err := e.StoreMessages(ctx, bad); !errors.As(err, &be) || be.Index != 1 || !errors.As(err, &inv) || inv.Field != "content" {
		t.Fatalf("bad batch: %v", err)
	}
	if n := enginetest.CountMessages(t, e); n != 3 {
		t.Fatalf("%d messages, want 3", n)
	}
	if _, err := e.StoreMessages(ctx, make([]engine.NewMessage, engine.MaxBatch+1)); !errors.As(err, &inv) {
		t.Fatalf("oversized batch: %v", err)
	}
}

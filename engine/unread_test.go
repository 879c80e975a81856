package engine_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
	"github.com/cairn-dev/cairn/internal/racedetector"
)

func unread(t *testing.T, e *engine.Engine, req engine.UnreadRequest) engine.Unread {
	t.Helper()
	u, err := e.Unread(context.Background(), req)
	if err != nil {
		t.Fatalf("Unread(%+v): %v", req, err)
	}
	return u
}

func markRead(t *testing.T, e *engine.Engine, req engine.MarkReadRequest) engine.ReadCursor {
	t.Helper()
	c, err := e.MarkRead(context.Background(), req)
	if err != nil {
		t.Fatalf("MarkRead(%+v): %v", req, err)
	}
	return c
}

func TestUnreadScopesAndCursors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := enginetest.OpenDir(t, dir, engine.Options{})
	if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: "general"}); err != nil {
		t.Fatal(err)
	}
	gen1 := enginetest.MustStore(t, e, engine.NewMessage{Channel: "general", Sender: "bob", Content: "general one"})
	dec1 := enginetest.MustStore(t, e, engine.NewMessage{Channel: "project:cairn:decisions", Sender: "bob", Project: "cairn", Content: "use WAL"})
	own := enginetest.MustStore(t, e, engine.NewMessage{Channel: "general", Sender: "ann", Content: "ann writes"})
	pat1 := enginetest.MustStore(t, e, engine.NewMessage{Channel: "project:cairn:patterns", Sender: "cy", Project: "cairn", Content: "retry on busy"})
	gen2 := enginetest.MustStore(t, e, engine.NewMessage{Channel: "general", Sender: "cy", Content: "general two"})

	// Nothing read yet: everything but ann's own message, oldest first.
	u := unread(t, e, engine.UnreadRequest{Agent: "ann"})
	if got, want := enginetest.IDs(u.Messages), []int64{gen1, dec1, pat1, gen2}; !slices.Equal(got, want) || u.Count != 4 || u.LastID != gen2 {
		t.Fatalf("all: %v count %d last %d, want %v", got, u.Count, u.LastID, want)
	}
	_ = own
	// A limit lists the oldest; the count still counts them all.
	u = unread(t, e, engine.UnreadRequest{Agent: "ann", Limit: 2})
	if got := enginetest.IDs(u.Messages); !slices.Equal(got, []int64{gen1, dec1}) || u.Count != 4 || u.LastID != dec1 {
		t.Fatalf("limit 2: %v count %d last %d", got, u.Count, u.LastID)
	}
	if got := enginetest.IDs(unread(t, e, engine.UnreadRequest{Agent: "ann", Project: "cairn"}).Messages); !slices.Equal(got, []int64{dec1, pat1}) {
		t.Fatalf("project: %v", got)
	}
	if got := enginetest.IDs(unread(t, e, engine.UnreadRequest{Agent: "ann", Channel: "general"}).Messages); !slices.Equal(got, []int64{gen1, gen2}) {
		t.Fatalf("channel: %v", got)
	}

	// Reading a channel moves that channel's cursor only.
	c := markRead(t, e, engine.MarkReadRequest{Agent: "ann", Channel: "general", UpTo: gen2})
	if c.LastReadID != gen2 || c.Channel != "general" {
		t.Fatalf("cursor: %+v", c)
	}
	if got := enginetest.IDs(unread(t, e, engine.UnreadRequest{Agent: "ann"}).Messages); !slices.Equal(got, []int64{dec1, pat1}) {
		t.Fatalf("after reading general: %v", got)
	}
	// Another agent's cursors are its own.
	if got := unread(t, e, engine.UnreadRequest{Agent: "bob"}).Count; got != 3 {
		t.Fatalf("bob's unread: %d", got)
	}
	// A project cursor covers the project's channels.
	markRead(t, e, engine.MarkReadRequest{Agent: "ann", Project: "cairn", UpTo: dec1})
	if got := enginetest.IDs(unread(t, e, engine.UnreadRequest{Agent: "ann"}).Messages); !slices.Equal(got, []int64{pat1}) {
		t.Fatalf("after reading the project up to %d: %v", dec1, got)
	}
	// Cursors never move back.
	if c := markRead(t, e, engine.MarkReadRequest{Agent: "ann", Channel: "general", UpTo: gen1}); c.LastReadID != gen2 {
		t.Fatalf("cursor moved back: %+v", c)
	}
	// Up to 0 is the newest message; the cursor over everything covers
	// channels that had none.
	if c := markRead(t, e, engine.MarkReadRequest{Agent: "ann"}); c.LastReadID != gen2 {
		t.Fatalf("mark all: %+v", c)
	}
	if u := unread(t, e, engine.UnreadRequest{Agent: "ann"}); u.Count != 0 || len(u.Messages) != 0 || u.LastID != 0 {
		t.Fatalf("after marking everything: %+v", u)
	}
	gen3 := enginetest.MustStore(t, e, engine.NewMessage{Channel: "general", Sender: "bob", Content: "general three"})
	e.Close()

	// Cursors are durable.
	e = enginetest.OpenDir(t, dir, engine.Options{})
	if got := enginetest.IDs(unread(t, e, engine.UnreadRequest{Agent: "ann"}).Messages); !slices.Equal(got, []int64{gen3}) {
		t.Fatalf("after reopening: %v", got)
	}

	// Bad input names the field and writes nothing.
	bad := []struct {
		req   engine.MarkReadRequest
		field string
	}{
		{engine.MarkReadRequest{Agent: "ann", UpTo: gen3 + 1}, "up_to"},
		{engine.MarkReadRequest{Agent: "ann", UpTo: -1}, "up_to"},
		{engine.MarkReadRequest{Agent: "a b"}, "agent"},
		{engine.MarkReadRequest{Agent: "ann", Channel: "general", Project: "cairn"}, "channel/project"},
		{engine.MarkReadRequest{Agent: "ann", Project: "bad project"}, "project"},
	}
	for _, b := range bad {
		_, err := e.MarkRead(ctx, b.req)
		var ie *engine.InvalidError
		if !errors.As(err, &ie) || ie.Field != b.field {
			t.Errorf("MarkRead(%+v) = %v, want invalid %s", b.req, err, b.field)
		}
	}
	if _, err := e.MarkRead(ctx, engine.MarkReadRequest{Agent: "ann", Channel: "nowhere"}); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("mark an unknown channel: %v", err)
	}
	if _, err := e.Unread(ctx, engine.UnreadRequest{Agent: "ann", Channel: "nowhere"}); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("unread of an unknown channel: %v", err)
	}
	if got := enginetest.IDs(unread(t, e, engine.UnreadRequest{Agent: "ann"}).Messages); !slices.Equal(got, []int64{gen3}) {
		t.Fatalf("a refused mark moved a cursor: %v", got)
	}
}

// TestSearchUnreadBy: a search restricted to unread messages, keyword and
// semantic side alike, follows the cursor as it moves (the keyword index
// must not cache the filter).
func TestSearchUnreadBy(t *testing.T) {
	ctx := context.Background()
	e := enginetest.OpenDir(t, t.TempDir(), engine.Options{Embedder: enginetest.NewHashEmbedder("hash-u", 32)})
	var written []int64
	for i := range 6 {
		written = append(written, enginetest.MustNote(t, e, engine.NewNote{Agent: "bob", Content: fmt.Sprintf("sqlite busy timeout note %d", i)}))
	}
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	for i, mode := range []engine.SearchMode{engine.ModeKeyword, engine.ModeSemantic, engine.ModeHybrid, ""} {
		query := "sqlite busy"
		if mode == "" {
			query = "" // a listing
		}
		agent := fmt.Sprintf("reader%d", i) // each mode starts with nothing read
		search := func() []int64 {
			t.Helper()
			rs, err := e.Search(ctx, engine.SearchRequest{Query: query, Mode: mode, Filter: engine.Filter{UnreadBy: agent}})
			if err != nil {
				t.Fatalf("%q: %v", mode, err)
			}
			got := enginetest.ResultIDs(rs)
			slices.Sort(got)
			return got
		}
		if got := search(); !slices.Equal(got, written) {
			t.Fatalf("%q before reading: %v, want %v", mode, got, written)
		}
		markRead(t, e, engine.MarkReadRequest{Agent: agent, UpTo: written[3]})
		if got := search(); !slices.Equal(got, written[4:]) {
			t.Fatalf("%q after reading up to %d: %v, want %v", mode, written[3], got, written[4:])
		}
		markRead(t, e, engine.MarkReadRequest{Agent: agent})
		if got := search(); len(got) != 0 {
			t.Fatalf("%q after reading all: %v", mode, got)
		}
	}
	if err := (engine.SearchRequest{Filter: engine.Filter{UnreadBy: "a b"}}).Validate(); err == nil {
		t.Fatal("a bad unread_by was accepted")
	}
}

// unreadWriterEnv makes the test binary a writer process
// (TestUnreadWriterProcess) writing to the data dir it names.
const unreadWriterEnv = "CAIRN_TEST_UNREAD_WRITER"

// TestUnreadWriterProcess is the writer process of
// TestUnreadNeverSkipsConcurrentWrites; it does nothing in a normal run.
func TestUnreadWriterProcess(t *testing.T) {
	spec := os.Getenv(unreadWriterEnv)
	if spec == "" {
		t.Skip("runs as a child of TestUnreadNeverSkipsConcurrentWrites")
	}
	dir, name, _ := strings.Cut(spec, "|")
	ctx := context.Background()
	e, err := enginetest.OpenEngine(ctx, dir, engine.Options{NoVectorWorker: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for i := range unreadWrites {
		res, err := e.StoreMessage(ctx, engine.NewMessage{Channel: "general", Sender: name, Content: fmt.Sprintf("%s message %d", name, i)})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("id %d\n", res.ID)
	}
}

const unreadWrites = 60

// TestUnreadNeverSkipsConcurrentWrites runs writer processes (the test
// binary itself, each with its own SQLite connections) while a reader
// lists its unread messages and marks them read, again and again: every
// message any writer wrote is listed exactly once, so no id was assigned
// out of commit order and no cursor passed over a message being written.
func TestUnreadNeverSkipsConcurrentWrites(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("spawns writer processes: left to the run without -race")
	}
	ctx := context.Background()
	dir := t.TempDir()
	r := enginetest.OpenDir(t, dir, engine.Options{})
	if _, err := r.CreateChannel(ctx, engine.NewChannel{ID: "general"}); err != nil {
		t.Fatal(err)
	}
	const writers = 3
	type written struct {
		ids []int64
		err error
	}
	results := make(chan written, writers)
	for w := range writers {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUnreadWriterProcess$", "-test.v")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|writer%d", unreadWriterEnv, dir, w))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			var got []int64
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if s, ok := strings.CutPrefix(sc.Text(), "id "); ok {
					id, _ := strconv.ParseInt(s, 10, 64)
					got = append(got, id)
				}
			}
			results <- written{got, cmd.Wait()}
		}()
	}
	var all []int64
	seen := map[int64]int{}
	var cursor int64
	read := func() int {
		u := unread(t, r, engine.UnreadRequest{Agent: "reader", Limit: 7})
		for _, m := range u.Messages {
			if m.ID <= cursor {
				t.Fatalf("listed %d at or below the cursor %d", m.ID, cursor)
			}
			seen[m.ID]++
		}
		if u.LastID > 0 {
			cursor = markRead(t, r, engine.MarkReadRequest{Agent: "reader", UpTo: u.LastID}).LastReadID
		}
		return len(u.Messages)
	}
	for done := 0; done < writers; {
		select {
		case w := <-results:
			if w.err != nil {
				t.Fatalf("writer: %v", w.err)
			}
			all = append(all, w.ids...)
			done++
		default:
			read()
		}
	}
	for read() > 0 {
	}
	if len(all) != writers*unreadWrites {
		t.Fatalf("writers reported %d ids, want %d", len(all), writers*unreadWrites)
	}
	for _, id := range all {
		if seen[id] != 1 {
			t.Errorf("message %d listed %d times", id, seen[id])
		}
	}
	if len(seen) != len(all) {
		t.Errorf("listed %d messages, written %d", len(seen), len(all))
	}
}

// TestUnreadAgreesWithTheSearchFilter checks Unread (cursors as terms of
// its query, or a lookup per message past maxCursorTerms) against the
// search filter unread_by (always a lookup per message) after random
// marks, for every scope.
func TestUnreadAgreesWithTheSearchFilter(t *testing.T) {
	ctx := context.Background()
	seed := int64(1)
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("seed %d", seed)
	e := enginetest.OpenDir(t, t.TempDir(), engine.Options{})
	var channels []string
	for i := range 80 {
		id := fmt.Sprintf("ch%d", i)
		project := ""
		if i%3 == 0 {
			project = fmt.Sprintf("p%d", i%4)
		}
		if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: id, Project: project}); err != nil {
			t.Fatal(err)
		}
		channels = append(channels, id)
	}
	senders := []string{"ann", "bob", "cy"}
	var msgs []engine.NewMessage
	for i := range 600 {
		msgs = append(msgs, engine.NewMessage{Channel: channels[r.IntN(len(channels))], Sender: senders[r.IntN(3)], Content: fmt.Sprintf("message %d", i)})
	}
	if _, err := e.StoreMessages(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	check := func(step int) {
		t.Helper()
		for _, sc := range []engine.UnreadRequest{{}, {Project: "p0"}, {Project: "p3"}, {Channel: channels[r.IntN(len(channels))]}} {
			sc.Agent, sc.Limit = "ann", engine.MaxLimit
			u := unread(t, e, sc)
			f := engine.Filter{UnreadBy: "ann"}
			switch {
			case sc.Channel != "":
				f.ChannelIDs = []string{sc.Channel}
			case sc.Project != "":
				f.ChannelIDs = nil
				var ids []string
				for i, ch := range channels {
					if i%3 == 0 && fmt.Sprintf("p%d", i%4) == sc.Project {
						ids = append(ids, ch)
					}
				}
				f.ChannelIDs = ids
			}
			rs, err := e.Search(ctx, engine.SearchRequest{Filter: f, Limit: engine.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			want := enginetest.ResultIDs(rs)
			slices.Sort(want)
			if got := enginetest.IDs(u.Messages); !slices.Equal(got, want) || u.Count != int64(len(want)) {
				t.Fatalf("step %d scope %+v: unread %v (count %d), search %v", step, sc, got, u.Count, want)
			}
		}
	}
	check(0)
	for step := 1; step <= 100; step++ {
		req := engine.MarkReadRequest{Agent: "ann", UpTo: int64(1 + r.IntN(600))}
		switch r.IntN(10) {
		case 0:
			req.UpTo = int64(1 + r.IntN(300)) // keeps channel cursors above it
		case 1, 2:
			req.Project = fmt.Sprintf("p%d", r.IntN(4))
		default:
			req.Channel = channels[r.IntN(len(channels))]
		}
		markRead(t, e, req)
		if step%10 == 0 {
			check(step)
		}
	}
	// More cursors above the floor than Unread writes as terms.
	for _, ch := range channels {
		markRead(t, e, engine.MarkReadRequest{Agent: "ann", Channel: ch, UpTo: int64(301 + r.IntN(300))})
	}
	check(101)
}

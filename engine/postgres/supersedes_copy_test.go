package postgres_test

import (
	"context"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/pgtest"
)

// Corrections survive every way a store is copied to or from PostgreSQL:
// an export of the embedded store imported into PostgreSQL, an export of
// PostgreSQL imported into a new data dir, and a whole-store copy
// (TransferTo, cairn migrate) each way. On every copy each superseded
// message names its replacement and stays out of search.
func TestSupersedesSurviveCopies(t *testing.T) {
	ctx := context.Background()
	opts := engine.Options{Now: clock(), NoVectorWorker: true}
	src := openDirEngine(t, opts)
	old := note(t, src, engine.NewNote{Agent: "bob", Content: "the deploy script lives in tools/deploy.sh"})
	fix := note(t, src, engine.NewNote{Agent: "bob", Content: "the deploy script moved to bin/deploy.sh", Supersedes: old})
	note(t, src, engine.NewNote{Agent: "bob", Content: "the deploy script moved to scripts/deploy.sh", Supersedes: fix})
	window, err := src.StoreMessage(ctx, engine.NewMessage{Channel: "team-log", Sender: "ann", Content: "the release window is Tuesday"})
	if err != nil {
		t.Fatal(err)
	}
	note(t, src, engine.NewNote{Agent: "claude", Project: "cairn", Content: "the release window moved to Wednesday", Supersedes: window.ID})
	want := supersedesShape(t, src)
	if len(want) != 3 {
		t.Fatalf("source links: %v", want)
	}

	viaExport := func(from, to *engine.Engine) {
		t.Helper()
		files, err := ingest.ExportMessages(ctx, from, ingest.MessageExportOptions{OutDir: t.TempDir(), Formats: []string{ingest.FormatJSONL}})
		if err != nil {
			t.Fatal(err)
		}
		// The superseded messages' channels first: the cross-channel
		// correction is in agent-notes:claude:cairn.
		slices.SortFunc(files, func(a, b ingest.ExportedFile) int { return len(a.Channel) - len(b.Channel) })
		for _, f := range files {
			r, err := os.Open(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := ingest.ImportMessages(ctx, to, r, ingest.ImportMessagesOptions{})
			r.Close()
			if err != nil || rep.LinksDropped != 0 {
				t.Fatalf("import %s: %+v %v %v", f.Channel, rep, err, rep.Dropped)
			}
		}
	}
	pgImported := openPG(t, pgtest.Database(t), opts)
	viaExport(src, pgImported)
	dirImported := openDirEngine(t, opts)
	viaExport(pgImported, dirImported)
	pgCopied := openPG(t, pgtest.Database(t), opts)
	if _, err := ingest.TransferTo(ctx, src, pgCopied, nil); err != nil {
		t.Fatal(err)
	}
	dirCopied := openDirEngine(t, opts)
	if _, err := ingest.TransferTo(ctx, pgCopied, dirCopied, nil); err != nil {
		t.Fatal(err)
	}
	for name, e := range map[string]*engine.Engine{"export to PostgreSQL": pgImported, "export from PostgreSQL": dirImported,
		"copy to PostgreSQL": pgCopied, "copy from PostgreSQL": dirCopied} {
		if got := supersedesShape(t, e); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: links %v, want %v", name, got, want)
		}
		for q, current := range map[string]string{"deploy script": "the deploy script moved to scripts/deploy.sh", "release window": "the release window moved to Wednesday"} {
			rs, err := e.Search(ctx, engine.SearchRequest{Query: q, Mode: engine.ModeKeyword})
			if err != nil || len(rs) != 1 || rs[0].Message.Content != current {
				t.Errorf("%s: search %q: %d results (%v), want only %q", name, q, len(rs), err, current)
			}
		}
	}
}

// supersedesShape maps each superseded message's content to its
// replacement's, read from the superseded side (superseded_by).
func supersedesShape(t *testing.T, e *engine.Engine) map[string]string {
	t.Helper()
	ctx := context.Background()
	chans, err := e.ListChannels(ctx, engine.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range chans {
		ms, err := e.GetChannelMessages(ctx, c.ID, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.SupersededBy == 0 {
				continue
			}
			by, err := e.GetMessage(ctx, m.SupersededBy)
			if err != nil || by.Supersedes != m.ID {
				t.Fatalf("message %d superseded by %d, which supersedes %d (%v)", m.ID, m.SupersededBy, by.Supersedes, err)
			}
			out[m.Content] = by.Content
		}
	}
	return out
}

func openDirEngine(t *testing.T, opts engine.Options) *engine.Engine {
	t.Helper()
	e, err := sqlite.OpenEngine(context.Background(), t.TempDir(), opts, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func note(t *testing.T, e *engine.Engine, n engine.NewNote) int64 {
	t.Helper()
	r, err := e.WriteNote(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	return r.ID
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/embed/builtin"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// storeWithoutVectors writes n messages into a new data dir with no
// embedding model, as a store written before any model existed.
func storeWithoutVectors(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	eng, err := sqlite.OpenEngine(context.Background(), dir, engine.Options{}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	msgs := make([]engine.NewMessage, n)
	for i := range msgs {
		msgs[i] = engine.NewMessage{Channel: "agent-notes:ann", Sender: "ann", Content: fmt.Sprintf("note %d: the checkpoint of the write-ahead log ran after %d pages", i, 100+i)}
	}
	if _, err := eng.StoreMessages(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func statsVectors(t *testing.T, getenv func(string) string) engine.VectorBacklog {
	t.Helper()
	out, errOut, code := runCLI(t, getenv, "", "stats", "--json")
	var st engine.StoreStats
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
		t.Fatalf("stats: exit %d %v %q", code, err, errOut)
	}
	return st.Vectors
}

func TestBacklogIsToldAndFilledOnce(t *testing.T) {
	const n = 40 // more than a one-shot search catches up
	data := storeWithoutVectors(t, n)
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data})
	if b := statsVectors(t, getenv); b.Queued != n || b.Messages != n || b.Set != 0 {
		t.Fatalf("stats before any model: %+v", b)
	}

	// A one-shot search does not embed the backlog: it says so and how
	// to finish, and keyword search still finds the messages.
	out, errOut, code := runCLI(t, getenv, "", "search", "checkpoint")
	if code != 0 || !strings.Contains(out, "checkpoint") {
		t.Fatalf("search: exit %d %q %q", code, out, errOut)
	}
	for _, want := range []string{fmt.Sprintf("%d of %d messages are not embedded yet with %s", n, n, builtin.ModelID()), "cairn rebuild --vectors", "cairn serve", fmt.Sprintf("%d messages are still queued", n)} {
		if !strings.Contains(errOut, want) {
			t.Errorf("search stderr lacks %q: %q", want, errOut)
		}
	}
	// Semantic search says why it finds nothing.
	out, errOut, code = runCLI(t, getenv, "", "search", "--mode", "semantic", "database logging")
	if code != 0 || !strings.Contains(out, "no results") || !strings.Contains(errOut, fmt.Sprintf("%d messages are still queued", n)) {
		t.Fatalf("semantic search with vectors pending: exit %d %q %q", code, out, errOut)
	}
	b := statsVectors(t, getenv)
	if b.Queued != n || b.Set == 0 || b.Model != builtin.ModelID() {
		t.Fatalf("stats after the searches: %+v", b)
	}

	// rebuild --vectors embeds each message once.
	out, errOut, code = runCLI(t, getenv, "", "rebuild", "--vectors", "--json")
	var rep ops.RebuildReport
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("rebuild: exit %d %v %q %q", code, err, out, errOut)
	}
	if rep.Embedded != n || rep.FTSRebuilt || rep.Set.ID != b.Set || rep.Set.State != engine.SetActive {
		t.Fatalf("rebuild --vectors of %d queued messages: %+v", n, rep)
	}
	if b := statsVectors(t, getenv); b.Queued != 0 {
		t.Fatalf("stats after rebuild: %+v", b)
	}
	out, errOut, code = runCLI(t, getenv, "", "search", "--mode", "semantic", "--limit", "1", "database logging")
	if code != 0 || !strings.Contains(out, "write-ahead log") || errOut != "" {
		t.Fatalf("semantic search after rebuild: exit %d %q %q", code, out, errOut)
	}
}

func TestWritesEmbedAFewQueuedNotes(t *testing.T) {
	data := storeWithoutVectors(t, 3)
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data})
	// The first search with the model finds the 3 messages by keyword and
	// says that they are not embedded yet: a read embeds nothing.
	out, errOut, code := runCLI(t, getenv, "", "search", "--json", "checkpoint")
	if code != 0 || !strings.Contains(errOut, "not embedded yet") || strings.Count(out, "\n") != 3 {
		t.Fatalf("search: exit %d %q %q", code, out, errOut)
	}
	// A note embeds itself and the small backlog before it returns, so the
	// next search finds it by meaning and has nothing to tell.
	if _, errOut, code = runCLI(t, getenv, "", "note", "--agent", "bob", "the cat sat on the mat"); code != 0 {
		t.Fatalf("note: %q", errOut)
	}
	out, errOut, code = runCLI(t, getenv, "", "search", "--mode", "semantic", "--limit", "1", "--json", "a kitten resting on a rug")
	if code != 0 || errOut != "" || !strings.Contains(out, "the cat sat on the mat") {
		t.Fatalf("semantic search for the new note: exit %d %q %q", code, out, errOut)
	}
	if b := statsVectors(t, getenv); b.Queued != 0 {
		t.Fatalf("stats after the note: %+v", b)
	}
}

func TestModelImportSaysWhatBecomesOfStoredMessages(t *testing.T) {
	model := tinyModel(t)
	data := storeWithoutVectors(t, 5)
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data})
	_, errOut, code := runCLI(t, getenv, "", "model", "import", model, "--name", "tiny")
	if code != 0 || !strings.Contains(errOut, "5 of 5 stored messages are queued for vectors of tiny") || !strings.Contains(errOut, "cairn rebuild --vectors") {
		t.Fatalf("import into a store without vectors: exit %d %q", code, errOut)
	}

	// A store whose vectors are the built-in model's: a rebuild switches.
	data = storeWithoutVectors(t, 5)
	getenv = envMap(map[string]string{"CAIRN_DATA_DIR": data})
	if _, errOut, code = runCLI(t, getenv, "", "rebuild", "--vectors"); code != 0 {
		t.Fatalf("rebuild: %q", errOut)
	}
	_, errOut, code = runCLI(t, getenv, "", "model", "import", model, "--name", "tiny")
	if code != 0 || !strings.Contains(errOut, "this store's vectors are of "+builtin.ModelID()) || !strings.Contains(errOut, "'cairn rebuild --vectors' re-embeds its 5 messages with it") {
		t.Fatalf("import into a store with vectors: exit %d %q", code, errOut)
	}
}

func TestModelNoneIsKeywordOnly(t *testing.T) {
	data := storeWithoutVectors(t, 3)
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data, "CAIRN_MODEL": "none"})
	out, errOut, code := runCLI(t, getenv, "", "search", "checkpoint")
	if code != 0 || !strings.Contains(out, "checkpoint") || !strings.Contains(errOut, "keyword search only: no embedding model is configured") {
		t.Fatalf("search with CAIRN_MODEL=none: exit %d %q %q", code, out, errOut)
	}
	if b := statsVectors(t, getenv); b.Set != 0 || b.Queued != 3 {
		t.Fatalf("a keyword-only search queued vectors: %+v", b)
	}
	_, errOut, code = runCLI(t, getenv, "", "search", "--mode", "semantic", "checkpoint")
	if code != 2 || !strings.Contains(errOut, "no embedding model") || strings.Contains(errOut, "mismatch") {
		t.Fatalf("semantic search with no model: exit %d %q", code, errOut)
	}
	_, errOut, code = runCLI(t, getenv, "", "embed", "x")
	if code != 2 || !strings.Contains(errOut, "no embedding model") {
		t.Fatalf("embed with no model: exit %d %q", code, errOut)
	}
}

// serve and mcp open the engine with its worker on: it fills the backlog
// while the process answers.
func TestServingProcessFillsTheBacklog(t *testing.T) {
	const n = 40
	data := storeWithoutVectors(t, n)
	var stderr strings.Builder
	e := &env{stdout: &strings.Builder{}, stderr: &stderr, getenv: envMap(map[string]string{"CAIRN_DATA_DIR": data})}
	ctx := context.Background()
	eng, closeModel, err := e.openWithModel(ctx, "", forServe)
	if err != nil {
		t.Fatal(err)
	}
	defer closeModel()
	defer eng.Close()
	if want := fmt.Sprintf("embedding %d queued messages with %s in the background", n, builtin.ModelID()); !strings.Contains(stderr.String(), want) {
		t.Fatalf("stderr %q lacks %q", stderr.String(), want)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, err := ops.VectorBacklog(ctx, eng, "")
		if err != nil {
			t.Fatal(err)
		}
		if b.Queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker left %d of %d messages queued", b.Queued, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

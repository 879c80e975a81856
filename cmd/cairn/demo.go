package main

import (
	"context"
	"fmt"
	"os"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

func demoCommand() *command {
	return &command{
		name:    "demo",
		summary: "a guided tour: store a few notes and find them again (in a throwaway data dir)",
		usage:   "[--keep] [--data-dir DIR]",
		examples: []string{
			`cairn demo`,
			`cairn demo --data-dir /tmp/cairn-demo --keep   # then: cairn --data-dir /tmp/cairn-demo search wal`,
		},
		run: runDemo,
	}
}

type demoNote struct {
	agent, project, typ, text string
	confidence                float64
	files                     []string
}

func runDemo(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	keep := fs.Bool("keep", false, "keep the data dir afterwards (always kept with --data-dir)")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	dir := e.dataDir
	if dir == "" {
		dir, err = os.MkdirTemp("", "cairn-demo-*")
		if err != nil {
			return err
		}
		if !*keep {
			defer os.RemoveAll(dir)
		}
	}
	w := e.stdout
	say := func(format string, args ...any) {
		if !e.json {
			fmt.Fprintf(w, format+"\n", args...)
		}
	}
	opts := engine.Options{Now: e.now, NoVectorWorker: true}
	if choice, err := e.resolveModel(""); err == nil && !choice.none {
		if m, err := choice.open(ctx, embed.Options{}); err == nil {
			defer m.Close()
			opts.Embedder = m
		}
	}
	eng, err := sqlite.OpenEngine(ctx, dir, opts, sqlite.Options{})
	if err != nil {
		return err
	}
	defer eng.Close()
	say("cairn demo: a knowledge store for AI agents, in %s\n", dir)
	if err := demoNotes(ctx, e, eng, say); err != nil {
		return err
	}
	if opts.Embedder != nil {
		if err := ops.SyncVectors(ctx, eng, nil); err != nil {
			return err
		}
	}
	if err := demoSearches(ctx, e, eng, say, opts.Embedder != nil); err != nil {
		return err
	}
	chs, err := eng.ListChannels(ctx, engine.Scope{})
	if err != nil {
		return err
	}
	say("4. Channels (notes channels and the project's decisions/patterns/policies were created on first write):")
	for _, ch := range chs {
		say("   %-28s %-12s %d messages", ch.ID, ch.ChannelType, ch.MessageCount)
	}
	if *keep || e.dataDir != "" {
		say("\nThe data dir is kept: try  cairn --data-dir %s search sqlite", dir)
	}
	return nil
}

// demoNotes is the demo's first two steps: two agents write notes, then one
// note is written again.
func demoNotes(ctx context.Context, e *env, eng *engine.Engine, say func(string, ...any)) error {
	say("1. Two agents write what they learned (cairn note --agent NAME --project ID TEXT):")
	notes := []demoNote{
		{"claude", "cairn", engine.TypeDecision, "SQLite is the source of truth; use WAL mode and a busy_timeout so several agents can write.", 0.9, []string{"engine/engine.go"}},
		{"claude", "cairn", engine.TypePattern, "Table-driven tests with t.TempDir databases catch migration bugs early.", 0.7, nil},
		{"gemini", "cairn", engine.TypeReflection, "The FTS5 porter tokenizer matches 'journaling' when you search for 'journal'.", 0.6, nil},
		{"gemini", "", engine.TypeReflection, "Ask @claude before changing the database schema: migrations are frozen once released.", 0.8, nil},
	}
	for _, n := range notes {
		conf := n.confidence
		res, err := eng.WriteNote(ctx, engine.NewNote{Agent: n.agent, Project: n.project, Type: n.typ, Content: n.text,
			Confidence: &conf, Breadcrumbs: engine.Breadcrumbs{Files: n.files}})
		if err != nil {
			return err
		}
		if e.json {
			if err := e.printJSON(res); err != nil {
				return err
			}
		}
		say("   #%d %-8s -> %-28s %q", res.ID, n.agent, res.ChannelID, n.text)
	}
	res, err := eng.WriteNote(ctx, engine.NewNote{Agent: "claude", Project: "cairn", Content: notes[0].text})
	if err != nil {
		return err
	}
	say("\n2. Writing the same note again is idempotent: id %d, created=%v.\n", res.ID, res.Created)
	return nil
}

// demoQuery is one search of the demo and why it is shown.
type demoQuery struct {
	query, why string
	filter     engine.Filter
	mode       engine.SearchMode
	limit      int
}

// demoSearches is the demo's third step: keyword searches, and one by
// meaning when semantic (an embedding model is loaded).
func demoSearches(ctx context.Context, e *env, eng *engine.Engine, say func(string, ...any), semantic bool) error {
	queries := []demoQuery{
		{"journal", "keyword search with stemming (BM25, matched terms marked):", engine.Filter{}, engine.ModeKeyword, 5},
		{`schema OR "migrations" (NOT`, "any text is plain terms: OR, quotes and parentheses are just words/punctuation:", engine.Filter{}, engine.ModeKeyword, 5},
		{"sqlite tests", "filtered to confidence >= 0.8:", engine.Filter{MinConfidence: 0.8}, engine.ModeKeyword, 5},
	}
	if semantic {
		queries = append(queries, demoQuery{"letting many processes update one file simultaneously",
			"by meaning (the built-in all-MiniLM-L6-v2): the best match shares no word with the query:", engine.Filter{}, engine.ModeSemantic, 1})
	} else {
		say("(no embedding model: the search by meaning is left out)\n")
	}
	for i, q := range queries {
		say("3%c. cairn search %q  -- %s", 'a'+rune(i), q.query, q.why)
		req := engine.SearchRequest{Query: q.query, Filter: q.filter, Limit: q.limit, Mode: q.mode}
		if q.mode == engine.ModeSemantic {
			// The search by meaning shows the nearest note however
			// unlikely relevant the handful of demo notes make it
			// (--min-score 0).
			req.MinScore = new(float64)
		}
		hits, err := eng.Search(ctx, req)
		if err != nil {
			return err
		}
		if e.json {
			if err := e.printResults(hits); err != nil {
				return err
			}
			continue
		}
		for _, h := range hits {
			text := h.Snippet
			if text == "" {
				text = h.Message.Content
			}
			say("   #%d %s  %s: %s", h.Message.ID, scoreText(h), h.Message.SenderID, text)
		}
		say("")
	}
	return nil
}

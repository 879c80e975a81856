package main

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/engine"
)

func rebuildCommand() *command {
	return &command{
		name:    "rebuild",
		summary: "regenerate the keyword index and the vectors from SQLite (resumable; switches the embedding model)",
		usage:   "[--model DIR] [--skip-fts] [--skip-vectors] [--json]",
		examples: []string{
			`cairn rebuild`,
			`cairn rebuild --model ~/models/bge-small-en-v1.5   # re-embed with another model, then switch`,
			`cairn rebuild --skip-vectors                       # keyword index only`,
		},
		run: runRebuild,
	}
}

func runRebuild(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	model := fs.String("model", "", "embedding model `DIR` (default: $CAIRN_MODEL, else the data dir's models/)")
	skipFTS := fs.Bool("skip-fts", false, "keep the keyword index")
	skipVec := fs.Bool("skip-vectors", false, "keep the vectors")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	return e.withModelEngine(ctx, *model, !*skipVec, func(eng *engine.Engine) error {
		bar := e.progress("rebuild")
		rep, err := eng.Rebuild(ctx, engine.RebuildOptions{SkipFTS: *skipFTS, SkipVectors: *skipVec, Progress: bar.update})
		bar.done()
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(rep)
		}
		if rep.FTSRebuilt {
			fmt.Fprintln(e.stdout, "keyword index rebuilt")
		}
		if rep.Set.ID != 0 {
			how := "built"
			if rep.Resumed {
				how = "resumed and finished"
			}
			fmt.Fprintf(e.stdout, "vectors %s: set %d, model %s (dim %d), %d embedded by this run, now %s\n", how, rep.Set.ID, rep.Set.ModelID, rep.Set.Dim, rep.Embedded, rep.Set.State)
		}
		return nil
	})
}

package main

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

func rebuildCommand() *command {
	return &command{
		name:    "rebuild",
		summary: "regenerate the keyword index and the vectors from SQLite (resumable; switches the embedding model)",
		usage:   "[--model MODEL] [--vectors | --skip-fts] [--skip-vectors] [--json]",
		examples: []string{
			`cairn rebuild`,
			`cairn rebuild --model ~/models/bge-small-en-v1.5   # re-embed with another model, then switch`,
			`cairn rebuild --skip-vectors                       # keyword index only`,
			`cairn rebuild --vectors                            # vectors only: embeds the messages still queued`,
		},
		run: runRebuild,
	}
}

func runRebuild(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	model := fs.String("model", "", modelUsage)
	vectorsOnly := fs.Bool("vectors", false, "vectors only (the same as --skip-fts): fill the queue of the model's vectors, or build them anew when none is queued")
	skipFTS := fs.Bool("skip-fts", false, "keep the keyword index")
	skipVec := fs.Bool("skip-vectors", false, "keep the vectors")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	if *vectorsOnly && *skipVec {
		return usagef(c.name, "--vectors and --skip-vectors leave nothing to do")
	}
	return e.withModelEngine(ctx, *model, forSelf, func(eng *engine.Engine) error {
		bar := e.progress("rebuild")
		rep, err := ops.Rebuild(ctx, eng, ops.RebuildOptions{SkipFTS: *skipFTS || *vectorsOnly, SkipVectors: *skipVec, Progress: bar.update})
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
				how = "filled"
			}
			fmt.Fprintf(e.stdout, "vectors %s: set %d, model %s (dim %d), %d embedded by this run, now %s\n", how, rep.Set.ID, rep.Set.ModelID, rep.Set.Dim, rep.Embedded, rep.Set.State)
		}
		return nil
	})
}

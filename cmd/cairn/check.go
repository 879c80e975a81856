package main

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

func checkCommand() *command {
	return &command{
		name:    "check",
		summary: "compare SQLite, the keyword index and the vectors (counts, ids, model) and print the differences",
		usage:   "[--model DIR] [--breadcrumbs [--repo DIR]] [--json]",
		examples: []string{
			`cairn check`,
			`cairn check --json`,
			`cairn check --breadcrumbs --repo ~/src/cairn`,
		},
		readOnly: true,
		run:      runCheck,
	}
}

func runCheck(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	model := fs.String("model", "", modelUsage)
	breadcrumbs := fs.Bool("breadcrumbs", false, "check every breadcrumb against the git repository it was written in instead")
	repo := fs.String("repo", "", "with --breadcrumbs: a directory in the git repository `DIR` that notes recording no repository are tried in (default: config breadcrumbs.repo, else the working directory's)")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	if *breadcrumbs {
		return runCheckBreadcrumbs(ctx, e, *repo)
	}
	if flagSet(fs, "repo") {
		return usagef(c.name, "--repo goes with --breadcrumbs")
	}
	return e.withModelEngine(ctx, *model, forSelf, func(eng *engine.Engine) error {
		rep, err := ops.Consistency(ctx, eng)
		if err != nil {
			return err
		}
		if e.json {
			if err := e.printJSON(rep); err != nil {
				return err
			}
		} else {
			w := e.stdout
			fmt.Fprintf(w, "messages      %d\n", rep.Messages)
			fmt.Fprintf(w, "keyword index %d rows, %d missing, %d extra, integrity %s\n", rep.FTSRows, rep.FTSMissing, rep.FTSExtra, rep.FTSIntegrity)
			if len(rep.Sets) == 0 {
				fmt.Fprintln(w, "vectors       none (no embedding model has been used)")
			}
			for _, s := range rep.Sets {
				fmt.Fprintf(w, "vectors       set %d %s: model %s dim %d (collection %s records %q dim %d)\n", s.ID, s.State, s.ModelID, s.Dim, s.Collection, s.CollectionModel, s.CollectionDim)
				fmt.Fprintf(w, "              %d vectors, %d queued to embed, %d queued to delete, %d missing, %d extra\n", s.Vectors, s.PendingUpserts, s.PendingDeletes, s.Missing, s.Extra)
			}
			if rep.Embedder != "" {
				fmt.Fprintf(w, "embedder      %s\n", rep.Embedder)
			}
			if p := rep.Parts; p != nil {
				fmt.Fprintf(w, "sessions      %d with %d records, %d contents in %d chunks, %d imported files\n", p.Sessions, p.Records, p.Contents, p.Chunks, p.Files)
				fmt.Fprintf(w, "read cursors  %d, breadcrumb marks %d\n", p.Cursors, p.Marks)
			}
			for _, w := range rep.Warnings {
				fmt.Fprintf(e.stdout, "WARNING: %s\n", w)
			}
			for _, p := range rep.Problems {
				fmt.Fprintf(w, "DIFFERENCE: %s\n", p)
			}
			if rep.OK() {
				fmt.Fprintln(w, "ok")
			}
		}
		if !rep.OK() {
			return exitError{code: 1}
		}
		return nil
	})
}

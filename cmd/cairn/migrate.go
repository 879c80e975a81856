package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/postgres"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

func migrateCommand() *command {
	return &command{
		name:    "migrate",
		summary: "copy a whole store (messages, channels, imported sessions, read cursors, breadcrumb marks) between a data dir and PostgreSQL, either way (resumable: run it again)",
		usage:   "--from DIR|URL --to DIR|URL [--json]",
		examples: []string{
			`cairn migrate --from ~/.local/share/cairn --to postgres://cairn@db.internal:5432/cairn`,
			`cairn migrate --from postgres://cairn@db.internal:5432/cairn --to ./cairn-copy`,
		},
		run: runMigrate,
	}
}

func runMigrate(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	from := fs.String("from", "", "copy from data dir `DIR` or PostgreSQL `URL`")
	to := fs.String("to", "", "copy to data dir `DIR` or PostgreSQL `URL`")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	if *from == "" || *to == "" {
		return usagef(c.name, "give both --from and --to")
	}
	if *from == *to {
		return usagef(c.name, "--from and --to name the same store")
	}
	src, err := openLocation(ctx, *from, engine.Options{Now: e.now, NoVectorWorker: true, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("--from %s: %w", postgres.Redact(*from), err)
	}
	defer src.Close()
	dst, err := openLocation(ctx, *to, engine.Options{Now: e.now, NoVectorWorker: true})
	if err != nil {
		return fmt.Errorf("--to %s: %w", postgres.Redact(*to), err)
	}
	defer dst.Close()
	bar := e.progress("migrate")
	rep, err := ingest.TransferTo(ctx, src, dst, bar.update)
	bar.done()
	if err != nil {
		return err
	}
	if rep.Target < rep.Source {
		return fmt.Errorf("%w: the target holds %d messages, fewer than the source's %d", engine.ErrCorrupt, rep.Target, rep.Source)
	}
	// Both sides pass cairn check's comparison before the copy counts as done.
	for _, side := range []struct {
		name string
		eng  *engine.Engine
	}{{"source", src}, {"target", dst}} {
		chk, err := ops.Consistency(ctx, side.eng)
		if err != nil {
			return fmt.Errorf("check the %s: %w", side.name, err)
		}
		if !chk.OK() {
			return fmt.Errorf("%w: the %s differs: %s", engine.ErrCorrupt, side.name, strings.Join(chk.Problems, "; "))
		}
	}
	if e.json {
		return e.printJSON(rep)
	}
	p := rep.TargetParts
	fmt.Fprintf(e.stdout, "copied %d messages, %d were there already; the source holds %d, the target %d; %d channels created with their descriptions\n",
		rep.Copied, rep.Present, rep.Source, rep.Target, rep.ChannelsCreated)
	fmt.Fprintf(e.stdout, "the target holds %d sessions (%d copied now) with %d records, %d session contents (%d copied now) in %d chunks, %d imported files, %d read cursors, %d breadcrumb marks\n",
		p.Sessions, rep.SessionsCopied, p.Records, p.Contents, rep.ContentsCopied, p.Chunks, p.Files, p.Cursors, p.Marks)
	fmt.Fprintln(e.stdout, "every part matches the source, and both pass cairn check")
	return nil
}

// openLocation opens a data dir or, for a postgres:// URL, a PostgreSQL
// store, with opts (no configuration file, no model: messages are copied
// as stored, and vectors are made by the target's own processes).
func openLocation(ctx context.Context, loc string, opts engine.Options) (*engine.Engine, error) {
	if !postgres.IsDSN(loc) {
		return sqlite.OpenEngine(ctx, loc, opts, sqlite.Options{})
	}
	return openPostgres(ctx, loc, "", postgres.Options{}, opts)
}

package main

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/engine"
)

func exportCommand() *command {
	return &command{
		name:    "export",
		summary: "export sessions as JSONL (round-trips) and Markdown (for people)",
		usage:   "(--session ID... | --all) [--format jsonl|md]... [--out DIR] [--json]",
		examples: []string{
			`cairn export --session 0a1b2c3d-1111-4222-8333-444455556666 --format md`,
			`cairn export --all --out ./sessions`,
		},
		run: runExport,
	}
}

func runExport(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	var sessions, formats stringList
	fs.Var(&sessions, "session", "session `ID` (a UUID; repeatable)")
	all := fs.Bool("all", false, "export every session")
	fs.Var(&formats, "format", "`FORMAT` jsonl or md (repeatable; default: export.formats)")
	out := fs.String("out", "", "output `DIR` (default: export.dir, else ./cairn-export)")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	if len(sessions) == 0 && !*all {
		return usagef(c.name, "give --session ID or --all")
	}
	cfg, _, err := e.loadConfig()
	if err != nil {
		return err
	}
	if len(formats) == 0 {
		formats = cfg.Export.Formats
	}
	dir := *out
	if dir == "" {
		dir = cfg.Export.Dir
	}
	if dir == "" {
		dir = "cairn-export"
	}
	bar := e.progress("export")
	return e.withEngine(ctx, func(eng *engine.Engine) error {
		files, err := eng.Sessions().Export(ctx, engine.ExportOptions{Sessions: sessions, All: *all, Formats: formats, OutDir: dir, Progress: bar.update})
		bar.done()
		if err != nil {
			return err
		}
		for _, f := range files {
			if e.json {
				if err := e.printJSON(f); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(e.stdout, "%s  %s  %d bytes\n", f.Session, f.Path, f.Bytes)
		}
		return nil
	})
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
)

func exportCommand() *command {
	return &command{
		name:    "export",
		summary: "export messages and sessions as JSONL (imports back) and Markdown (for people)",
		usage:   "(--all | --messages | --channel ID... | --session ID...) [--format jsonl|md]... [--out DIR] [--json]",
		examples: []string{
			`cairn export --all --out ./backup-text`,
			`cairn export --channel team-log --format md`,
			`cairn export --session a0b1c2d3-1111-4222-8333-444455556666 --format md`,
			`cairn import messages ./cairn-export/messages/team-log.jsonl   # reads an export back`,
		},
		run: runExport,
	}
}

func runExport(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	var sessions, channels, formats stringList
	fs.Var(&sessions, "session", "export the session `ID` (a UUID)")
	fs.Var(&channels, "channel", "export the messages of channel `ID`")
	messages := fs.Bool("messages", false, "export the messages of every channel")
	all := fs.Bool("all", false, "export every channel's messages and every imported session")
	fs.Var(&formats, "format", "`FORMAT` jsonl or md (default: export.formats, else both)")
	out := fs.String("out", "", "output `DIR` (default: export.dir, else ./cairn-export)")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	if len(sessions) == 0 && len(channels) == 0 && !*messages && !*all {
		return usagef(c.name, "give --all, --messages, --channel ID or --session ID")
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
		var files []ingest.ExportedFile
		if *all || *messages || len(channels) > 0 {
			got, err := ingest.ExportMessages(ctx, eng, ingest.MessageExportOptions{Channels: channels, Formats: formats, OutDir: dir, Progress: bar.update})
			files = append(files, got...)
			if err != nil {
				bar.done()
				return err
			}
		}
		if *all || len(sessions) > 0 {
			got, err := ingest.ExportSessions(ctx, eng, ingest.ExportSessionsOptions{Sessions: sessions, All: *all, Formats: formats, OutDir: dir, Progress: bar.update})
			files = append(files, got...)
			if err != nil {
				bar.done()
				return err
			}
		}
		bar.done()
		if len(files) == 0 {
			fmt.Fprintln(e.stderr, "cairn export: nothing to export: the store has no messages, channel descriptions or imported sessions")
		}
		for _, f := range files {
			if e.json {
				if err := e.printJSON(f); err != nil {
					return err
				}
				continue
			}
			what := f.Session
			if f.Channel != "" {
				what = f.Channel
			}
			fmt.Fprintf(e.stdout, "%s  %s  %d bytes\n", what, f.Path, f.Bytes)
		}
		return nil
	})
}

// keepExports re-exports the messages of channels (every channel when
// none is named) when export.continuous is configured, after a purge (the
// engine's own observer re-exports after message writes and deletes, see
// ops.ContinuousExport). The purge itself is already durable: a failed
// export is reported as a warning, not as the command's failure.
func (e *env) keepExports(ctx context.Context, eng *engine.Engine, channels ...string) {
	cfg, _, err := e.loadConfig()
	if err != nil || !cfg.Export.Continuous {
		return
	}
	lo := cfg.LifecycleOptions(eng.Dir())
	if _, err := ingest.ExportMessages(ctx, eng, ingest.MessageExportOptions{Channels: channels, Formats: lo.Export.Formats, OutDir: lo.Export.OutDir}); err != nil {
		fmt.Fprintf(e.stderr, "cairn: warning: continuous export: %v\n", err)
	}
}

// dropChannelExports removes a purged channel's continuous export files.
func (e *env) dropChannelExports(eng *engine.Engine, channel string) {
	cfg, _, err := e.loadConfig()
	if err != nil || !cfg.Export.Continuous {
		return
	}
	dir := filepath.Join(cfg.LifecycleOptions(eng.Dir()).Export.OutDir, ingest.MessagesDir)
	for _, f := range []string{ingest.FormatJSONL, ingest.FormatMarkdown} {
		if err := os.Remove(filepath.Join(dir, ingest.ChannelFileName(channel)+"."+f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(e.stderr, "cairn: warning: continuous export: %v\n", err)
		}
	}
}

package main

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/cmd/cairn/config"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

func gcCommand() *command {
	return &command{
		name:    "gc",
		summary: "forget what the retention policies say to forget, and reclaim the space",
		usage:   "[--dry-run] [--session-max-age DURATION] [--no-vacuum] [--json]",
		examples: []string{
			`cairn gc --dry-run`,
			`cairn gc`,
			`cairn gc --session-max-age 90d --json`,
		},
		run: runGC,
	}
}

func runGC(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	dry := fs.Bool("dry-run", false, "print what would go and why; change nothing")
	sessionAge := fs.String("session-max-age", "", "delete sessions older than `DURATION` (36h, 90d; overrides retention.session_max_age)")
	noVacuum := fs.Bool("no-vacuum", false, "do not reclaim disk space (overrides gc.vacuum)")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	cfg, _, err := e.loadConfig()
	if err != nil {
		return err
	}
	if *sessionAge != "" {
		d, err := config.ParseDuration(*sessionAge)
		if err != nil {
			return usagef(c.name, "--session-max-age: %v", err)
		}
		cfg.Retention.SessionMaxAge = d
	}
	if *noVacuum {
		cfg.GC.Vacuum = false
	}
	bar := e.progress("gc")
	return e.withEngine(ctx, func(eng *engine.Engine) error {
		opts := cfg.GCOptions()
		opts.DryRun, opts.Progress = *dry, bar.update
		rep, err := ops.GC(ctx, eng, opts)
		bar.done()
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(rep)
		}
		w := e.stdout
		verb := "deleted"
		if rep.DryRun {
			verb = "would delete"
		}
		for _, m := range rep.Messages {
			fmt.Fprintf(w, "%s #%d  %s  %s  %s  confidence %.2f: %s [%s]\n", verb, m.ID, formatTime(m.CreatedAt), m.ChannelID, m.MessageType, m.Confidence, m.Reason, m.Policy)
		}
		for _, s := range rep.Sessions {
			fmt.Fprintf(w, "%s session %s (last record %s): %s\n", verb, s.ID, formatTime(s.LastAt), s.Reason)
		}
		fmt.Fprintf(w, "%s %d messages, %d sessions, %d session contents; %d kept forever (pinned, decisions, policies)\n",
			verb, len(rep.Messages), len(rep.Sessions), rep.ContentsDeleted, rep.KeptForever)
		if !rep.DryRun {
			fmt.Fprintf(w, "disk: %d -> %d bytes\n", rep.BytesBefore, rep.BytesAfter)
		}
		for _, n := range rep.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
		return nil
	})
}

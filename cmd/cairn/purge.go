package main

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

func purgeCommand() *command {
	return &command{
		name:    "purge",
		summary: "delete everything of one channel, agent or imported session (--dry-run first; --yes deletes)",
		usage:   "(--channel ID | --agent NAME | --session ID) (--dry-run | --yes) [--no-vacuum] [--json]",
		examples: []string{
			`cairn purge --channel team-log --dry-run`,
			`cairn purge --channel team-log --yes`,
			`cairn purge --agent old-bot --yes --json`,
			`cairn purge --session a0b1c2d3-1111-4222-8333-444455556666 --yes`,
		},
		run: runPurge,
	}
}

func runPurge(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	var opts ops.PurgeOptions
	fs.StringVar(&opts.Channel, "channel", "", "delete every message of channel `ID`, and the channel")
	fs.StringVar(&opts.Agent, "agent", "", "delete every message agent `NAME` sent")
	fs.StringVar(&opts.Session, "session", "", "delete imported session `ID` and what only it holds")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "print what would go; change nothing")
	yes := fs.Bool("yes", false, "delete (required unless --dry-run)")
	fs.BoolVar(&opts.NoVacuum, "no-vacuum", false, "do not reclaim the space now (the next gc does)")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	set := 0
	for _, s := range []string{opts.Channel, opts.Agent, opts.Session} {
		if s != "" {
			set++
		}
	}
	if set != 1 {
		return usagef(c.name, "give exactly one of --channel, --agent and --session")
	}
	if *yes == opts.DryRun {
		return usagef(c.name, "give --dry-run to see what would go, or --yes to delete it")
	}
	return e.withEngine(ctx, func(eng *engine.Engine) error {
		rep, err := ops.Purge(ctx, eng, opts)
		if err != nil {
			return err
		}
		switch {
		case rep.DryRun:
		case opts.Channel != "":
			e.dropChannelExports(eng, opts.Channel)
		default:
			e.keepExports(ctx, eng)
		}
		if e.json {
			return e.printJSON(rep)
		}
		verb := "deleted"
		if rep.DryRun {
			verb = "would delete"
		}
		fmt.Fprintf(e.stdout, "%s %d messages", verb, rep.Messages)
		for _, ch := range rep.Channels {
			fmt.Fprintf(e.stdout, ", channel %s", ch)
		}
		for _, s := range rep.Sessions {
			fmt.Fprintf(e.stdout, ", session %s (%d contents only it held)", s, rep.ContentsDeleted)
		}
		fmt.Fprintln(e.stdout)
		if !rep.DryRun {
			fmt.Fprintf(e.stdout, "disk: %d -> %d bytes\n", rep.BytesBefore, rep.BytesAfter)
		}
		return nil
	})
}

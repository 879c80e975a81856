package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/cairn-dev/cairn/engine"
)

func channelsCommand() *command {
	return &command{
		name:    "channels",
		summary: "list channels; 'channels create ID' makes one, 'channels read ID' shows its messages",
		usage:   "[list] [--scope all|notes|project] [--project ID] [--agent NAME]\n  cairn channels create ID [--name NAME] [--description TEXT] [--project ID]\n  cairn channels read ID [--max-age-days N] [--limit N]",
		examples: []string{
			`cairn channels`,
			`cairn channels --scope notes --agent claude --json`,
			`cairn channels create team-log --description "what we shipped"`,
			`cairn channels read project:cairn:decisions --limit 10`,
		},
		run: runChannels,
	}
}

func runChannels(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	scope := fs.String("scope", "all", "which channels: all, notes or project")
	project := fs.String("project", "", "only channels of project `ID`")
	agent := fs.String("agent", "", "only the notes channels of agent `NAME`")
	name := fs.String("name", "", "create: display `NAME` (default: the id)")
	desc := fs.String("description", "", "create: what the channel is for")
	var maxAge optFloat
	fs.Var(&maxAge, "max-age-days", "read: only messages at most `N` days old")
	limit := fs.Int("limit", engine.DefaultLimit, "read: at most `N` messages")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	verb := "list"
	if len(pos) > 0 {
		verb, pos = pos[0], pos[1:]
	}
	switch verb {
	case "list":
		if err := noArgs(c, pos); err != nil {
			return err
		}
		return e.withEngine(ctx, func(eng *engine.Engine) error {
			chs, err := eng.ListChannels(ctx, engine.Scope{Kind: *scope, Project: *project, Agent: *agent})
			if err != nil {
				return err
			}
			if e.json {
				for _, ch := range chs {
					if err := e.printJSON(ch); err != nil {
						return err
					}
				}
				return nil
			}
			if len(chs) == 0 {
				fmt.Fprintln(e.stdout, "no channels")
			}
			for _, ch := range chs {
				fmt.Fprintf(e.stdout, "%-40s %-12s %6d messages  last %s\n", ch.ID, ch.ChannelType, ch.MessageCount, formatTime(ch.LastMessageAt))
			}
			return nil
		})
	case "create":
		if len(pos) != 1 {
			return usagef(c.name, "create takes exactly one channel ID")
		}
		return e.withEngine(ctx, func(eng *engine.Engine) error {
			ch, err := eng.CreateChannel(ctx, engine.NewChannel{ID: pos[0], Name: *name, Description: *desc, Project: *project})
			if err != nil {
				return err
			}
			if e.json {
				return e.printJSON(ch)
			}
			fmt.Fprintf(e.stdout, "created channel %s\n", ch.ID)
			return nil
		})
	case "read":
		if len(pos) != 1 {
			return usagef(c.name, "read takes exactly one channel ID")
		}
		if *limit <= 0 {
			return usagef(c.name, "--limit must be at least 1")
		}
		var age time.Duration
		if maxAge.set {
			if math.IsNaN(maxAge.v) || maxAge.v <= 0 || maxAge.v > 1e6 {
				return &engine.InvalidError{Field: "max-age-days", Rule: fmt.Sprintf("must be a number of days above 0 and at most 1000000, got %v", maxAge.v)}
			}
			age = time.Duration(maxAge.v * 24 * float64(time.Hour))
		}
		return e.withEngine(ctx, func(eng *engine.Engine) error {
			ms, err := eng.GetChannelMessages(ctx, pos[0], age, *limit)
			if err != nil {
				return err
			}
			return e.printMessages(ms)
		})
	}
	return usagef(c.name, "unknown action %q: use list, create or read", verb)
}

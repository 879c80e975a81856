package main

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/engine"
)

func agentsCommand() *command {
	return &command{
		name:     "agents",
		summary:  "list the agents that wrote, with their last activity",
		usage:    "[--project ID] [--json]",
		examples: []string{`cairn agents`, `cairn agents --project cairn --json`},
		readOnly: true,
		run:      runAgents,
	}
}

func runAgents(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	project := fs.String("project", "", "only agents of project `ID`")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	return e.withEngine(ctx, func(eng *engine.Engine) error {
		as, err := eng.ListAgents(ctx, *project)
		if err != nil {
			return err
		}
		if e.json {
			for _, a := range as {
				if err := e.printJSON(a); err != nil {
					return err
				}
			}
			return nil
		}
		if len(as) == 0 {
			fmt.Fprintln(e.stdout, "no agents")
		}
		for _, a := range as {
			p := a.ProjectID
			if p == "" {
				p = "-"
			}
			fmt.Fprintf(e.stdout, "%-24s %-24s %6d messages  last active %s\n", a.Name, p, a.MessageCount, formatTime(a.LastActive))
		}
		return nil
	})
}

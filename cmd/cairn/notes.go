package main

import (
	"context"

	"github.com/cairn-dev/cairn/engine"
)

func notesCommand() *command {
	return &command{
		name:    "notes",
		summary: "list an agent's notes, newest first",
		usage:   "--agent NAME [--project ID] [--limit N] [--json]",
		examples: []string{
			`cairn notes --agent claude`,
			`cairn notes --agent claude --project cairn --limit 10 --json`,
		},
		readOnly: true,
		run:      runNotes,
	}
}

func runNotes(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	agent := fs.String("agent", "", "the agent's `NAME` (required)")
	project := fs.String("project", "", "only the notes of project `ID` (default: all the agent's notes)")
	limit := fs.Int("limit", engine.DefaultLimit, "at most `N` notes")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	if *agent == "" {
		return usagef(c.name, "--agent is required")
	}
	if *limit <= 0 {
		return usagef(c.name, "--limit must be at least 1")
	}
	return e.withEngine(ctx, func(eng *engine.Engine) error {
		ms, err := eng.GetAgentNotes(ctx, *agent, *project, *limit)
		if err != nil {
			return err
		}
		return e.printMessages(ms)
	})
}

package main

import (
	"context"

	"github.com/cairn-dev/cairn/engine"
)

func noteCommand() *command {
	return &command{
		name:    "note",
		summary: "write a note to an agent's notes channel",
		usage:   "--agent NAME [--project ID] [--confidence X] [--type T] [--meta JSON | --meta-file FILE] [--file F]... [--commit C]... [--issue I]... [--pr P]... [--supersedes ID] [TEXT]",
		examples: []string{
			`cairn note --agent claude "prefer table-driven tests in this repo"`,
			`cairn note --agent claude --project cairn --type decision --confidence 0.9 --file engine/store.go "writes go through one connection"`,
			`git log -1 --format=%B | cairn note --agent claude --commit $(git rev-parse HEAD) --json`,
		},
		run: runNote,
	}
}

func runNote(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	agent := fs.String("agent", "", "the writing agent's `NAME` (required)")
	var w writeFlags
	w.add(fs)
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if *agent == "" {
		return usagef(c.name, "--agent is required")
	}
	md, err := w.metadata(c)
	if err != nil {
		return err
	}
	text, err := e.text(c, pos)
	if err != nil {
		return err
	}
	return e.withModelEngine(ctx, "", forWrite, func(eng *engine.Engine) error {
		res, err := eng.WriteNote(ctx, engine.NewNote{
			Agent: *agent, Project: w.project, Content: text, Metadata: md,
			Breadcrumbs: w.breadcrumbs(), Confidence: w.conf(), Type: w.typ, Supersedes: w.supersedes,
		})
		if err != nil {
			return err
		}
		return e.printWrite(res)
	})
}

package main

import (
	"context"

	"github.com/cairn-dev/cairn/engine"
)

func postCommand() *command {
	return &command{
		name:    "post",
		summary: "post a message to a channel",
		usage:   "--channel ID --sender NAME [--project ID] [--confidence X] [--type T] [--meta JSON | --meta-file FILE] [--file F]... [--commit C]... [--issue I]... [--pr P]... [--supersedes ID] [TEXT]",
		examples: []string{
			`cairn post --channel project:cairn:decisions --sender claude --type decision "use SQLite as the source of truth"`,
			`cairn channels create team-log && cairn post --channel team-log --sender bob "deployed v1.2"`,
			`echo "long text" | cairn post --channel team-log --sender bob --meta '{"source":"ci"}' --json`,
		},
		run: runPost,
	}
}

func runPost(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	channel := fs.String("channel", "", "channel `ID` (required)")
	sender := fs.String("sender", "", "sender agent `NAME` (required)")
	var w writeFlags
	w.add(fs)
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if *channel == "" {
		return usagef(c.name, "--channel is required")
	}
	if *sender == "" {
		return usagef(c.name, "--sender is required")
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
		res, err := eng.StoreMessage(ctx, engine.NewMessage{
			Channel: *channel, Sender: *sender, Project: w.project, Content: text, Metadata: md,
			Breadcrumbs: w.breadcrumbs(), Confidence: w.conf(), Type: w.typ, Supersedes: w.supersedes,
		})
		if err != nil {
			return err
		}
		return e.printWrite(res)
	})
}

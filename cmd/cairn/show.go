package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/cairn-dev/cairn/engine"
)

func showCommand() *command {
	return &command{
		name:     "show",
		summary:  "show one message with its metadata",
		usage:    "ID [--json]",
		examples: []string{`cairn show 42`, `cairn show 42 --json`},
		readOnly: true,
		run:      runShow,
	}
}

func runShow(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	id, err := messageIDArg(c, pos)
	if err != nil {
		return err
	}
	return e.withEngine(ctx, func(eng *engine.Engine) error {
		m, err := eng.GetMessage(ctx, id)
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(m)
		}
		w := e.stdout
		fmt.Fprintf(w, "id:           %d\n", m.ID)
		fmt.Fprintf(w, "channel:      %s\n", m.ChannelID)
		fmt.Fprintf(w, "sender:       %s\n", m.SenderID)
		if m.SenderProjectID != "" {
			fmt.Fprintf(w, "project:      %s\n", m.SenderProjectID)
		}
		fmt.Fprintf(w, "type:         %s\n", m.MessageType)
		fmt.Fprintf(w, "confidence:   %s\n", strconv.FormatFloat(m.Confidence, 'f', -1, 64))
		fmt.Fprintf(w, "created:      %s\n", formatTime(m.CreatedAt))
		fmt.Fprintf(w, "words:        %d\n", m.WordCount)
		if len(m.Mentions) > 0 {
			fmt.Fprintf(w, "mentions:     %v\n", m.Mentions)
		}
		fmt.Fprintf(w, "metadata:     %s\n", m.Metadata)
		if m.Supersedes != 0 {
			fmt.Fprintf(w, "supersedes:   %d\n", m.Supersedes)
		}
		if m.SupersededBy != 0 {
			fmt.Fprintf(w, "superseded:   by %d (cairn show %d)\n", m.SupersededBy, m.SupersededBy)
		}
		for _, l := range checkLines(m.BreadcrumbCheck) {
			fmt.Fprintf(w, "breadcrumbs:  %s\n", l)
		}
		fmt.Fprintf(w, "content hash: %s\n\n%s\n", m.ContentHash, m.Content)
		return nil
	})
}

// messageIDArg is the one message ID argument of commands like show.
func messageIDArg(c *command, pos []string) (int64, error) {
	if len(pos) != 1 {
		return 0, usagef(c.name, "expected one message ID")
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil || id <= 0 {
		return 0, &engine.InvalidError{Field: "id", Rule: fmt.Sprintf("must be a positive integer, got %q", pos[0])}
	}
	return id, nil
}

package main

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/engine"
)

func deleteCommand() *command {
	return &command{
		name:    "delete",
		summary: "delete one message for good (shows it first; --yes deletes)",
		usage:   "ID [--yes] [--json]",
		examples: []string{
			`cairn delete 42          # shows message 42 and deletes nothing`,
			`cairn delete 42 --yes`,
		},
		run: runDelete,
	}
}

// runDelete is guarded as the MCP memory_delete tool is: nothing goes
// without an explicit confirmation. Without --yes it shows the message and
// exits 2, so a script that forgot the flag does not take "nothing
// deleted" for success.
func runDelete(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	yes := fs.Bool("yes", false, "delete without asking (default: show the message, delete nothing)")
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
		out := struct {
			ID      int64  `json:"id"`
			Channel string `json:"channel_id"`
			Deleted bool   `json:"deleted"`
		}{m.ID, m.ChannelID, false}
		if !*yes {
			if e.json {
				if err := e.printJSON(out); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(e.stdout, "would delete message %d in %s from %s (%s, %s):\n%s\n", m.ID, m.ChannelID, m.SenderID, m.MessageType, formatTime(m.CreatedAt), preview(m.Content, 200))
			}
			return usagef(c.name, "nothing deleted: add --yes to delete message %d", id)
		}
		if err := eng.DeleteMessage(ctx, id); err != nil {
			return err
		}
		out.Deleted = true
		if e.json {
			return e.printJSON(out)
		}
		fmt.Fprintf(e.stdout, "deleted message %d from %s (cairn gc reclaims its space)\n", id, m.ChannelID)
		return nil
	})
}

// preview is s cut to at most n runes, with "..." when cut.
func preview(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}

package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/cairn-dev/cairn/engine"
)

func unreadCommand() *command {
	return &command{
		name:    "unread",
		summary: "list what an agent has not read yet, or mark it read",
		usage:   "--agent NAME [--channel ID | --project ID] [--limit N] [--mark | --mark-read ID|latest] [--json]",
		examples: []string{
			`cairn unread --agent claude`,
			`cairn unread --agent claude --project cairn --mark`,
			`cairn unread --agent claude --channel general --mark-read 120`,
			`cairn unread --agent claude --mark-read latest --json`,
		},
		run: runUnread,
	}
}

func runUnread(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	agent := fs.String("agent", "", "the reading agent's `NAME` (required)")
	channel := fs.String("channel", "", "only channel `ID`")
	project := fs.String("project", "", "only the channels of project `ID`")
	limit := fs.Int("limit", engine.DefaultLimit, "list at most `N` messages, oldest first")
	mark := fs.Bool("mark", false, "mark the listed messages read")
	markRead := fs.String("mark-read", "", "list nothing; mark read up to message `ID` (or latest)")
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
	if *mark && *markRead != "" {
		return usagef(c.name, "give --mark or --mark-read, not both")
	}
	if *markRead != "" {
		upTo, err := parseUpTo(*markRead)
		if err != nil {
			return err
		}
		return e.withEngine(ctx, func(eng *engine.Engine) error {
			cur, err := eng.MarkRead(ctx, engine.MarkReadRequest{Agent: *agent, Channel: *channel, Project: *project, UpTo: upTo})
			if err != nil {
				return err
			}
			return e.printCursor(cur)
		})
	}
	return e.withEngine(ctx, func(eng *engine.Engine) error {
		u, err := eng.Unread(ctx, engine.UnreadRequest{Agent: *agent, Channel: *channel, Project: *project, Limit: *limit})
		if err != nil {
			return err
		}
		if *mark && u.LastID > 0 {
			if _, err := eng.MarkRead(ctx, engine.MarkReadRequest{Agent: *agent, Channel: *channel, Project: *project, UpTo: u.LastID}); err != nil {
				return err
			}
		}
		if e.json {
			return e.printJSON(u)
		}
		fmt.Fprintf(e.stdout, "%d unread for %s%s", u.Count, *agent, scopeText(*channel, *project))
		if int64(len(u.Messages)) < u.Count {
			fmt.Fprintf(e.stdout, " (the oldest %d below)", len(u.Messages))
		}
		fmt.Fprintln(e.stdout)
		if len(u.Messages) == 0 {
			return nil
		}
		fmt.Fprintln(e.stdout)
		if err := e.printMessages(u.Messages); err != nil {
			return err
		}
		if *mark {
			fmt.Fprintf(e.stdout, "marked read up to #%d\n", u.LastID)
		} else {
			fmt.Fprintf(e.stdout, "mark them read: cairn unread --agent %s%s --mark-read %d\n", *agent, scopeFlags(*channel, *project), u.LastID)
		}
		return nil
	})
}

// parseUpTo reads --mark-read: a message id, or latest (0: the newest).
func parseUpTo(s string) (int64, error) {
	if s == "latest" {
		return 0, nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, &engine.InvalidError{Field: "mark-read", Rule: fmt.Sprintf("must be a message id or latest, got %q", s)}
	}
	return id, nil
}

func (e *env) printCursor(cur engine.ReadCursor) error {
	if e.json {
		return e.printJSON(cur)
	}
	fmt.Fprintf(e.stdout, "%s has read up to #%d%s\n", cur.Agent, cur.LastReadID, scopeText(cur.Channel, cur.Project))
	return nil
}

func scopeText(channel, project string) string {
	switch {
	case channel != "":
		return " in " + channel
	case project != "":
		return " in project " + project
	}
	return ""
}

func scopeFlags(channel, project string) string {
	switch {
	case channel != "":
		return " --channel " + channel
	case project != "":
		return " --project " + project
	}
	return ""
}

package main

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
)

func sessionsCommand() *command {
	return &command{
		name:    "sessions",
		summary: "list imported sessions, or print one session's records in order",
		usage:   "[ID] [--hit MESSAGE_ID] [--json]",
		examples: []string{
			`cairn sessions`,
			`cairn sessions --hit 42   # which session records hold search hit #42`,
			`cairn sessions a0b1c2d3-1111-4222-8333-444455556666 --json`,
		},
		readOnly: true,
		run:      runSessions,
	}
}

func runSessions(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	hit := fs.Int64("hit", 0, "list the session records that hold the chunk stored as message `ID` (a search hit)")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef(c.name, "expected at most one session ID")
	}
	return e.withEngine(ctx, func(eng *engine.Engine) error {
		if *hit != 0 {
			refs, err := ingest.SessionRefs(ctx, eng, *hit)
			if err != nil {
				return err
			}
			for _, r := range refs {
				if e.json {
					if err := e.printJSON(r); err != nil {
						return err
					}
					continue
				}
				fmt.Fprintf(e.stdout, "%s  #%d  %s  chunk %d (bytes %d-%d)\n", r.SessionID, r.Seq, r.UUID, r.Chunk, r.Start, r.End)
			}
			if len(refs) == 0 && !e.json {
				fmt.Fprintln(e.stdout, "not a session chunk")
			}
			return nil
		}
		if len(pos) == 0 {
			ss, err := ingest.ListSessions(ctx, eng)
			if err != nil {
				return err
			}
			for _, s := range ss {
				if e.json {
					if err := e.printJSON(s); err != nil {
						return err
					}
					continue
				}
				fmt.Fprintf(e.stdout, "%s  %s  %4d records  %s\n", s.ID, formatTime(s.LastAt), s.MessageCount, s.Project)
			}
			if len(ss) == 0 && !e.json {
				fmt.Fprintln(e.stdout, "no sessions")
			}
			return nil
		}
		recs, err := ingest.SessionRecords(ctx, eng, pos[0])
		if err != nil {
			return err
		}
		for _, r := range recs {
			if e.json {
				if err := e.printJSON(r); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(e.stdout, "#%d  %s  %s\n%s\n\n", r.Seq, formatTime(r.CreatedAt), r.Role, indent(r.Text))
		}
		return nil
	})
}

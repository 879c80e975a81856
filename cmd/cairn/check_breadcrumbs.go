package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/cairn-dev/cairn/cmd/cairn/gitcrumbs"
	"github.com/cairn-dev/cairn/engine"
)

// runCheckBreadcrumbs is cairn check --breadcrumbs: every breadcrumb of
// every message against the repository at repo's HEAD.
func runCheckBreadcrumbs(ctx context.Context, e *env, repo string) error {
	chk, err := gitcrumbs.Open(repo)
	if errors.Is(err, gitcrumbs.ErrNoRepo) {
		return &engine.InvalidError{Field: "repo", Rule: "must be a directory in a git repository: " + err.Error()}
	}
	if err != nil {
		return err
	}
	rep := gitcrumbs.Report{Repo: repo, Head: chk.Head(), Stale: []gitcrumbs.Result{}, States: map[gitcrumbs.State]int{}}
	err = e.withEngine(ctx, func(eng *engine.Engine) error {
		var after int64
		for {
			ms, err := eng.MessagesWithBreadcrumbs(ctx, after, 1000)
			if err != nil {
				return err
			}
			for _, m := range ms {
				rs, err := chk.Check(ctx, m)
				if err != nil {
					return err
				}
				rep.Add(rs)
				after = m.ID
			}
			if len(ms) < 1000 {
				return nil
			}
		}
	})
	if err != nil {
		return err
	}
	if rep.Messages == 0 {
		rep.Rate = 1
	}
	if e.json {
		return e.printJSON(rep)
	}
	w := e.stdout
	fmt.Fprintf(w, "repository    %s at %s\n", rep.Repo, rep.Head[:12])
	fmt.Fprintf(w, "messages      %d with breadcrumbs\n", rep.Messages)
	fmt.Fprintf(w, "checked       %d files and commits, %d valid (%.1f%%)\n", rep.Checked, rep.Valid, 100*rep.Rate)
	if n := rep.States[gitcrumbs.Form]; n > 0 {
		fmt.Fprintf(w, "form only     %d (issues, pull requests, URLs and other kinds)\n", n)
	}
	for _, r := range rep.Stale {
		fmt.Fprintf(w, "%-8s #%d %s %s", r.State, r.MessageID, r.Kind, r.Ref)
		if r.MovedTo != "" {
			fmt.Fprintf(w, " -> %s", r.MovedTo)
		}
		if r.Reason != "" {
			fmt.Fprintf(w, " (%s)", r.Reason)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

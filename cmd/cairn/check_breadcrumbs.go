package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"github.com/cairn-dev/cairn/cmd/cairn/gitcrumbs"
	"github.com/cairn-dev/cairn/engine"
)

// breadcrumbRepoDir is the directory whose repository breadcrumbs are
// checked against: config breadcrumbs.repo (CAIRN_BREADCRUMBS_REPO), else
// the working directory.
func breadcrumbRepoDir(configured string) string {
	if configured != "" {
		return configured
	}
	return "."
}

// findBreadcrumbRepo is the HEAD reader of the breadcrumb repository, nil
// when there is none: reads then attach no marks.
func findBreadcrumbRepo(configured string) *gitcrumbs.HeadFile {
	hf, err := gitcrumbs.FindRepo(breadcrumbRepoDir(configured))
	if err != nil {
		return nil
	}
	return hf
}

// startBreadcrumbRefresh starts keeping eng's marks cache at the HEAD of
// the breadcrumb repository (cairn serve, cairn mcp); nil without one.
func (e *env) startBreadcrumbRefresh(ctx context.Context, eng *engine.Engine, logger *slog.Logger) *gitcrumbs.Refresher {
	conf, _, err := e.loadConfig()
	if err != nil {
		return nil
	}
	hf := findBreadcrumbRepo(conf.Breadcrumbs.Repo)
	if hf == nil {
		return nil
	}
	return gitcrumbs.StartRefresher(ctx, eng, hf.Root(), gitcrumbs.RefresherOptions{Logger: logger})
}

// runCheckBreadcrumbs is cairn check --breadcrumbs: every breadcrumb of
// every message against the repository at repo's HEAD ("" = the
// configured one). The marks go to the cache searches and reads attach.
func runCheckBreadcrumbs(ctx context.Context, e *env, repo string) error {
	if repo == "" {
		conf, _, err := e.loadConfig()
		if err != nil {
			return err
		}
		repo = breadcrumbRepoDir(conf.Breadcrumbs.Repo)
	}
	chk, err := gitcrumbs.Open(repo)
	if errors.Is(err, gitcrumbs.ErrNoRepo) {
		return &engine.InvalidError{Field: "repo", Rule: "must be a directory in a git repository: " + err.Error()}
	}
	if err != nil {
		return err
	}
	rep := gitcrumbs.Report{Repo: repo, Head: chk.Head(), Stale: []gitcrumbs.Result{}, States: map[gitcrumbs.State]int{}}
	cacheFailed := false
	// The check fills the marks cache: the engine opens for writing.
	e.readOnly = false
	err = e.withEngine(ctx, func(eng *engine.Engine) error {
		var after int64
		for {
			ms, err := eng.MessagesWithBreadcrumbs(ctx, after, 1000)
			if err != nil {
				return err
			}
			marks := make(map[int64][]engine.BreadcrumbMark, len(ms))
			for _, m := range ms {
				rs, err := chk.Check(ctx, m)
				if err != nil {
					return err
				}
				rep.Add(rs)
				marks[m.ID] = gitcrumbs.Marks(rs)
				after = m.ID
			}
			if err := eng.PutBreadcrumbMarks(ctx, chk.Head(), marks); err != nil && !cacheFailed {
				// The report stands without the cache (a full disk, a
				// read-only medium): say so once.
				cacheFailed = true
				fmt.Fprintf(e.stderr, "warning: breadcrumb marks not cached: %v\n", err)
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

// checkLines renders a message's cached breadcrumb check, one line a
// breadcrumb ("valid files a.go:3-9", "moved files a.go -> b.go"), or one
// line saying the cache is of another commit.
func checkLines(c *engine.BreadcrumbCheck) []string {
	if c == nil {
		return nil
	}
	if c.Status != engine.CheckCurrent {
		return []string{fmt.Sprintf("unknown: checked at %.12s, HEAD is now %.12s (cairn check --breadcrumbs refreshes)", c.CheckedAt, c.Head)}
	}
	out := make([]string, 0, len(c.Marks))
	for _, m := range c.Marks {
		l := fmt.Sprintf("%s %s %s", m.State, m.Kind, m.Ref)
		if m.MovedTo != "" {
			l += " -> " + m.MovedTo
		}
		if m.Reason != "" {
			l += " (" + m.Reason + ")"
		}
		out = append(out, l)
	}
	return out
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

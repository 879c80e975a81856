package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"slices"

	"github.com/cairn-dev/cairn/cmd/cairn/gitcrumbs"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

// breadcrumbRepoDir is the directory of the repository this process
// writes breadcrumbs in: config breadcrumbs.repo (CAIRN_BREADCRUMBS_REPO),
// else the working directory.
func breadcrumbRepoDir(configured string) string {
	if configured != "" {
		return configured
	}
	return "."
}

// findBreadcrumbRepo is the HEAD reader of the repository this process
// writes breadcrumbs in, nil when there is none: writes then record no
// repository.
func findBreadcrumbRepo(configured string) *gitcrumbs.HeadFile {
	hf, err := gitcrumbs.FindRepo(breadcrumbRepoDir(configured))
	if err != nil {
		return nil
	}
	return hf
}

// startBreadcrumbRefresh starts keeping eng's marks cache at the HEAD of
// the repository this process runs in, for that repository's messages
// (cairn serve, cairn mcp); nil without one.
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
// every message against the repository it was written in, at that
// repository's HEAD. Messages that recorded no repository are tried in the
// one containing repo ("" = the configured one, else the working
// directory's; none is fine). The marks go to the cache searches and reads
// attach.
func runCheckBreadcrumbs(ctx context.Context, e *env, repo string) error {
	explicit := repo != ""
	if repo == "" {
		conf, _, err := e.loadConfig()
		if err != nil {
			return err
		}
		repo = breadcrumbRepoDir(conf.Breadcrumbs.Repo)
	}
	rep := gitcrumbs.Report{Repos: map[string]string{}, Stale: []gitcrumbs.Result{}, States: map[gitcrumbs.State]int{}}
	hf, err := gitcrumbs.FindRepo(repo)
	switch {
	case err == nil:
		rep.Repo = hf.Root()
		rep.Head, _ = hf.Head()
	case explicit:
		return &engine.InvalidError{Field: "repo", Rule: "must be a directory in a git repository: " + err.Error()}
	}
	mk := gitcrumbs.NewMarker(rep.Repo)
	// The check fills the marks cache: the engine opens for writing.
	e.readOnly = false
	err = e.withEngine(ctx, func(eng *engine.Engine) error {
		var after int64
		for {
			ms, err := ops.MessagesWithBreadcrumbs(ctx, eng, after, 1000)
			if err != nil {
				return err
			}
			if len(ms) == 0 {
				return nil
			}
			if err := mk.Mark(ctx, eng, ms, &rep); err != nil {
				return err
			}
			after = ms[len(ms)-1].ID
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
	roots := make([]string, 0, len(rep.Repos))
	for r := range rep.Repos {
		roots = append(roots, r)
	}
	slices.Sort(roots)
	for _, r := range roots {
		fmt.Fprintf(w, "repository    %s at %.12s\n", r, rep.Repos[r])
	}
	fmt.Fprintf(w, "messages      %d checked in their repository\n", rep.Messages)
	if rep.Unreachable > 0 {
		fmt.Fprintf(w, "unreachable   %d whose repository is not on this machine (last marks kept)\n", rep.Unreachable)
	}
	if rep.Unscoped > 0 {
		fmt.Fprintf(w, "unscoped      %d that recorded no repository and are not in this one (no mark)\n", rep.Unscoped)
	}
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
	var out []string
	switch c.Status {
	case engine.CheckStale:
		return []string{fmt.Sprintf("unknown: checked at %.12s, HEAD of %s is now %.12s (cairn check --breadcrumbs refreshes)", c.CheckedAt, c.Repo, c.Head)}
	case engine.CheckUnreachable:
		out = append(out, fmt.Sprintf("unreachable: %s is not on this machine; marks of its check at %.12s:", c.Repo, c.CheckedAt))
	}
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

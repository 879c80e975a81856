package gitcrumbs

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

// Mark is r as the engine's marks cache stores it.
func (r Result) Mark() engine.BreadcrumbMark {
	return engine.BreadcrumbMark{Kind: r.Kind, Ref: r.Ref, State: engine.MarkState(r.State), MovedTo: r.MovedTo, Reason: r.Reason}
}

// Marks are rs as the engine's marks cache stores them.
func Marks(rs []Result) []engine.BreadcrumbMark {
	out := make([]engine.BreadcrumbMark, len(rs))
	for i, r := range rs {
		out[i] = r.Mark()
	}
	return out
}

// refreshPage is how many messages a refresh checks and stores at once
// (one write transaction each).
const refreshPage = 500

// Refresh brings eng's marks cache up to the HEAD of the repository
// containing dir, for the messages of that repository (and those that
// recorded none, which it may adopt: Marker): every such message with no
// marks at HEAD is checked and its marks stored. Messages of other
// repositories are left to checks there, so a process never changes the
// marks of a repository it does not run in. It returns the HEAD and how
// many messages it checked; git is opened only when there is something to
// check.
func Refresh(ctx context.Context, eng *engine.Engine, dir string) (head string, checked int, err error) {
	hf, err := FindRepo(dir)
	if err != nil {
		return "", 0, err
	}
	if head, err = hf.Head(); err != nil {
		return "", 0, err
	}
	mk := NewMarker(hf.Root())
	var after int64
	for {
		ms, err := ops.MessagesToMark(ctx, eng, hf.Root(), head, after, refreshPage)
		if err != nil || len(ms) == 0 {
			return head, checked, err
		}
		c, err := mk.checker(hf.Root())
		if err != nil || c == nil {
			return head, checked, err
		}
		if c.Head() != head {
			// HEAD moved between the two reads: the next refresh
			// checks at the new one.
			return c.Head(), checked, nil
		}
		var rep Report
		if err := mk.Mark(ctx, eng, ms, &rep); err != nil {
			return head, checked, err
		}
		checked += len(ms)
		after = ms[len(ms)-1].ID
	}
}

// RefresherOptions configure a Refresher.
type RefresherOptions struct {
	// Every is how often HEAD and new notes are looked for; 0 means 10 s.
	Every time.Duration
	// Logger receives what each refresh did; nil discards it.
	Logger *slog.Logger
}

// Refresher keeps a long-running process's marks cache at the
// repository's HEAD: a goroutine that runs Refresh at start and then
// every Options.Every (a refresh with nothing to check is one indexed
// query). Searches never wait for it: until it has checked a message at
// the new HEAD, reads mark that message's breadcrumbs stale.
type Refresher struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// StartRefresher starts refreshing eng's cache against the repository
// containing dir until Stop (or ctx ends).
func StartRefresher(ctx context.Context, eng *engine.Engine, dir string, opts RefresherOptions) *Refresher {
	if opts.Every <= 0 {
		opts.Every = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Refresher{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		t := time.NewTicker(opts.Every)
		defer t.Stop()
		for {
			start := time.Now()
			head, n, err := Refresh(ctx, eng, dir)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil && !errors.Is(err, errNoHead):
				opts.Logger.Warn("breadcrumb marks refresh failed", "repo", dir, "err", err)
			case n > 0:
				opts.Logger.Info("breadcrumb marks refreshed", "repo", dir, "head", head, "messages", n, "took", time.Since(start))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return r
}

// Stop ends the refresh and waits for it; it may be called more than
// once, and on a nil Refresher (none was started).
func (r *Refresher) Stop() {
	if r == nil {
		return
	}
	r.once.Do(r.cancel)
	<-r.done
}

package ops

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
)

// LifecycleOptions configure RunLifecycle. Zero intervals turn a job off.
type LifecycleOptions struct {
	// GCEvery runs GC with GC (DryRun is ignored) this often.
	GCEvery time.Duration
	GC      GCOptions
	// ExportEvery re-exports the channels and sessions that changed since
	// the last export into Export.OutDir this often (the JSONL and Markdown copies
	// stay current; the database stays the source). Export.Sessions and
	// Export.All are ignored: every changed session is exported.
	ExportEvery time.Duration
	Export      ingest.ExportSessionsOptions
	// OnGC, OnExport and OnError, when set, see each run's outcome.
	OnGC     func(*GCReport)
	OnExport func([]ingest.ExportedFile)
	OnError  func(error)
}

// RunLifecycle runs the scheduled lifecycle jobs of a long-running process
// (cairn serve) until ctx ends: retention (GC) and continuous export of
// channels (ExportMessages) and sessions. The first export runs at once and
// exports everything; later ones export the channels and sessions that
// changed since they were last exported
// (sessions deleted by GC are not removed from the export folder). It
// returns ctx's error.
func RunLifecycle(ctx context.Context, e *engine.Engine, opts LifecycleOptions) error {
	report := func(err error) {
		if err != nil && opts.OnError != nil && ctx.Err() == nil {
			opts.OnError(err)
		}
	}
	var gcTick, exTick <-chan time.Time
	if opts.GCEvery > 0 {
		t := time.NewTicker(opts.GCEvery)
		defer t.Stop()
		gcTick = t.C
	}
	// Changes are detected by state, not by time: a session is exported
	// when its (updated_at, message_count) differs from the last export's.
	exported := map[string]stamp{}
	channelsExported := map[string]stamp{}
	export := func() {
		files, err := exportChangedChannels(ctx, e, opts.Export, channelsExported)
		if err != nil {
			report(err)
		} else if len(files) > 0 && opts.OnExport != nil {
			opts.OnExport(files)
		}
		ss, err := ingest.ListSessions(ctx, e)
		if err != nil {
			report(err)
			return
		}
		var ids []string
		stamps := map[string]stamp{}
		for _, s := range ss {
			st := stamp{updated: s.UpdatedAt, count: s.MessageCount}
			if exported[s.ID] != st {
				ids = append(ids, s.ID)
				stamps[s.ID] = st
			}
		}
		if len(ids) == 0 {
			return
		}
		eo := opts.Export
		eo.All, eo.Sessions = false, ids
		files, err = ingest.ExportSessions(ctx, e, eo)
		if err != nil {
			report(err)
			return
		}
		for id, st := range stamps {
			exported[id] = st
		}
		if opts.OnExport != nil {
			opts.OnExport(files)
		}
	}
	if opts.ExportEvery > 0 {
		t := time.NewTicker(opts.ExportEvery)
		defer t.Stop()
		exTick = t.C
		export()
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-gcTick:
			g := opts.GC
			g.DryRun = false
			rep, err := GC(ctx, e, g)
			if err != nil {
				report(err)
				continue
			}
			if opts.OnGC != nil {
				opts.OnGC(rep)
			}
		case <-exTick:
			export()
		}
	}
}

// exportChangedChannels exports the channels whose (last message time,
// message count, description) differ from done's, and records them there.
func exportChangedChannels(ctx context.Context, e *engine.Engine, eo ingest.ExportSessionsOptions, done map[string]stamp) ([]ingest.ExportedFile, error) {
	chans, err := e.ListChannels(ctx, engine.Scope{})
	if err != nil {
		return nil, err
	}
	var ids []string
	now := map[string]stamp{}
	for _, c := range chans {
		st := stamp{c.LastMessageAt, int(c.MessageCount), c.Description}
		if (c.MessageCount > 0 || c.Description != "") && done[c.ID] != st {
			ids = append(ids, c.ID)
			now[c.ID] = st
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	files, err := ingest.ExportMessages(ctx, e, ingest.MessageExportOptions{Channels: ids, Formats: eo.Formats, OutDir: eo.OutDir})
	if err != nil {
		return files, err
	}
	for id, st := range now {
		done[id] = st
	}
	return files, nil
}

// stamp is the state of an exported channel or session: it is exported
// again when this changes.
type stamp struct {
	updated time.Time
	count   int
	desc    string
}

// Lifecycle is RunLifecycle running in the background (StartLifecycle).
type Lifecycle struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// StartLifecycle runs RunLifecycle(ctx, opts) in a goroutine the returned
// Lifecycle owns until ctx ends or Stop. ctx's values are kept; its
// cancellation ends the jobs too.
func StartLifecycle(ctx context.Context, e *engine.Engine, opts LifecycleOptions) *Lifecycle {
	ctx, cancel := context.WithCancel(ctx)
	l := &Lifecycle{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		_ = RunLifecycle(ctx, e, opts)
	}()
	return l
}

// Stop ends the jobs and waits for a running one to finish. It is safe to
// call more than once.
func (l *Lifecycle) Stop() {
	l.cancel()
	<-l.done
}

package ops

import (
	"context"
	"sync"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ingest"
)

// ContinuousExport keeps the JSONL and Markdown copies of the channels in
// step with the store (config export.continuous): after every committed
// write or delete of a message, the channels it changed are exported
// again, whichever surface wrote (CLI, cairn serve, cairn mcp). The zero
// value (OutDir "") is off.
type ContinuousExport struct {
	// OutDir and Formats are ExportMessages' (files go to OutDir/messages/).
	OutDir  string
	Formats []string
	// OnError sees each failed export. The write itself is already
	// committed and durable, so a failed export is never the write's
	// failure; nil drops it (the engine's Logger still gets it).
	OnError func(error)
}

// Exporter is the commit observer (engine.CommitObserver, installed as
// engine.Options.Observer) behind ContinuousExport: commits mark channels
// dirty, and one goroutine per engine exports them, coalescing the commits
// that arrive while it works. The engine's Close exports what is still
// dirty and waits, so a one-shot command's write is exported before the
// process exits. An engine that only reads (Options.ReadOnly) exports
// nothing. Safe for concurrent use.
type Exporter struct {
	opts ContinuousExport
	mu   struct {
		sync.Mutex
		runs map[*engine.Engine]*exportRun
	}
}

// NewExporter returns the observer of ContinuousExport opts (with
// OutDir "" it exports nothing).
func NewExporter(opts ContinuousExport) *Exporter {
	x := &Exporter{opts: opts}
	x.mu.runs = map[*engine.Engine]*exportRun{}
	return x
}

// exportRun is the export of one engine's commits. It stays in runs after
// Closing (stopped), so that a commit racing Close starts nothing.
type exportRun struct {
	x    *Exporter
	eng  *engine.Engine
	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	mu struct {
		sync.Mutex
		all     bool            // every channel is dirty
		dirty   map[string]bool // channel ids
		stopped bool            // by Closing: a commit racing Close exports nothing
	}
}

// Committed marks channels dirty (none: every channel) and wakes e's
// export.
func (x *Exporter) Committed(e *engine.Engine, channels []string) {
	if x.opts.OutDir == "" || e.Options().ReadOnly {
		return
	}
	x.mu.Lock()
	r := x.mu.runs[e]
	if r == nil {
		r = &exportRun{x: x, eng: e, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
		r.mu.dirty = map[string]bool{}
		x.mu.runs[e] = r
		go r.run()
	}
	x.mu.Unlock()
	r.mu.Lock()
	if r.mu.stopped {
		r.mu.Unlock()
		return
	}
	if len(channels) == 0 {
		r.mu.all = true
	}
	for _, c := range channels {
		r.mu.dirty[c] = true
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Closing exports what is still dirty of e and stops its export;
// idempotent.
func (x *Exporter) Closing(e *engine.Engine) {
	x.mu.Lock()
	r := x.mu.runs[e]
	if r == nil { // nothing was committed: nothing is started later either
		r = &exportRun{x: x, eng: e, done: make(chan struct{})}
		r.mu.stopped = true
		close(r.done)
		x.mu.runs[e] = r
	}
	x.mu.Unlock()
	r.mu.Lock()
	stopped := r.mu.stopped
	r.mu.stopped = true
	r.mu.Unlock()
	if !stopped {
		close(r.stop)
	}
	<-r.done
}

// run exports dirty channels until Closing, then once more.
func (r *exportRun) run() {
	defer close(r.done)
	for {
		select {
		case <-r.wake:
			r.exportDirty()
		case <-r.stop:
			r.exportDirty()
			return
		}
	}
}

// exportDirty exports the channels marked dirty since the last call.
func (r *exportRun) exportDirty() {
	r.mu.Lock()
	all, dirty := r.mu.all, r.mu.dirty
	r.mu.all, r.mu.dirty = false, map[string]bool{}
	r.mu.Unlock()
	if !all && len(dirty) == 0 {
		return
	}
	opts := ingest.MessageExportOptions{OutDir: r.x.opts.OutDir, Formats: r.x.opts.Formats}
	if !all {
		for c := range dirty {
			opts.Channels = append(opts.Channels, c)
		}
	}
	// Not the writer's context: the write returned long ago, and Close
	// waits for this export to finish.
	if _, err := ingest.ExportMessages(context.Background(), r.eng, opts); err != nil {
		r.eng.Options().Logger.Warn("continuous export failed", "err", err)
		if r.x.opts.OnError != nil {
			r.x.opts.OnError(err)
		}
	}
}

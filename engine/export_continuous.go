package engine

import (
	"context"
	"sync"
)

// ContinuousExport keeps the JSONL and Markdown copies of the channels in
// step with the store (config export.continuous): after every committed
// write or delete of a message, the engine re-exports the channels it
// changed, whichever surface wrote (CLI, cairn serve, cairn mcp). The zero
// value (OutDir "") is off.
type ContinuousExport struct {
	// OutDir and Formats are ExportMessages' (files go to OutDir/messages/).
	OutDir  string
	Formats []string
	// OnError sees each failed export. The write itself is already
	// committed and durable, so a failed export is never the write's
	// failure; nil drops it (the Logger still gets it).
	OnError func(error)
}

// exporter is the post-commit observer behind ContinuousExport: commits
// mark channels dirty, and one goroutine exports them, coalescing the
// commits that arrive while it works. Close (finish) exports what is still
// dirty and waits, so a one-shot command's write is exported before the
// process exits.
type exporter struct {
	opts ContinuousExport
	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	startOnce, stopOnce sync.Once

	mu struct {
		sync.Mutex
		all   bool            // every channel is dirty
		dirty map[string]bool // channel ids
	}
}

// exporterFor returns the engine's exporter, or nil when continuous export
// is off or the engine only reads.
func (e *Engine) exporterFor() *exporter {
	if e.opts.ContinuousExport.OutDir == "" || e.opts.ReadOnly {
		return nil
	}
	e.exportOnce.Do(func() {
		e.export = &exporter{opts: e.opts.ContinuousExport, wake: make(chan struct{}, 1),
			stop: make(chan struct{}), done: make(chan struct{})}
		e.export.mu.dirty = map[string]bool{}
	})
	return e.export
}

// committed tells the observer that a commit changed the messages of
// channels (none: any channel). Called after the commit, never inside a
// transaction.
func (e *Engine) committed(channels ...string) {
	x := e.exporterFor()
	if x == nil {
		return
	}
	x.mu.Lock()
	if len(channels) == 0 {
		x.mu.all = true
	}
	for _, c := range channels {
		x.mu.dirty[c] = true
	}
	x.mu.Unlock()
	x.startOnce.Do(func() { go x.run(e) })
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// run exports dirty channels until finish, then once more.
func (x *exporter) run(e *Engine) {
	defer close(x.done)
	for {
		select {
		case <-x.wake:
			x.exportDirty(e)
		case <-x.stop:
			x.exportDirty(e)
			return
		}
	}
}

// exportDirty exports the channels marked dirty since the last call.
func (x *exporter) exportDirty(e *Engine) {
	x.mu.Lock()
	all, dirty := x.mu.all, x.mu.dirty
	x.mu.all, x.mu.dirty = false, map[string]bool{}
	x.mu.Unlock()
	if !all && len(dirty) == 0 {
		return
	}
	opts := MessageExportOptions{OutDir: x.opts.OutDir, Formats: x.opts.Formats}
	if !all {
		for c := range dirty {
			opts.Channels = append(opts.Channels, c)
		}
	}
	// Not the writer's context: the write returned long ago, and Close
	// waits for this export to finish.
	if _, err := e.ExportMessages(context.Background(), opts); err != nil {
		e.opts.Logger.Warn("continuous export failed", "err", err)
		if x.opts.OnError != nil {
			x.opts.OnError(err)
		}
	}
}

// finishExport exports what is still dirty and stops the observer. Called
// by Close before the store closes; idempotent.
func (e *Engine) finishExport() {
	x := e.exporterFor()
	if x == nil {
		return
	}
	x.stopOnce.Do(func() {
		close(x.stop)
		x.startOnce.Do(func() { close(x.done) }) // never started: nothing is dirty
		<-x.done
	})
}

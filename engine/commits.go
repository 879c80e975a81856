package engine

// CommitObserver sees the writes an Engine commits (Options.Observer), so
// that a side effect of every write (the continuous export of
// engine/ops) happens whichever surface wrote: the CLI, cairn serve or
// cairn mcp.
type CommitObserver interface {
	// Committed is called after a commit changed the messages of channels
	// (a write or a delete); no channels means any channel. It runs in
	// the writer's goroutine after the commit, never inside a
	// transaction, so it must return quickly and may not write through e.
	Committed(e *Engine, channels []string)
	// Closing is called by e's Close, before the store closes: the
	// observer finishes what it still has to do for e (it may read
	// through e) and returns when done. A second Close calls it again.
	Closing(e *Engine)
}

// committed tells the observer that a commit changed the messages of
// channels (none: any channel). Called after the commit, never inside a
// transaction.
func (e *Engine) committed(channels ...string) {
	if e.opts.Observer != nil {
		e.opts.Observer.Committed(e, channels)
	}
}

// closeObserver lets the observer finish before the store closes. Called
// by Close.
func (e *Engine) closeObserver() {
	if e.opts.Observer != nil {
		e.opts.Observer.Closing(e)
	}
}

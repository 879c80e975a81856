package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// modelUse says who embeds the messages still queued for vectors when a
// command opens the engine with its model.
type modelUse int

const (
	// forQuery: a one-shot search or listing. A read never writes, so it
	// leaves any backlog queued and says on stderr how to finish it.
	forQuery modelUse = iota
	// forWrite: a one-shot write (note, post). After its write it embeds
	// a small backlog (its own message and a few more), so that a search
	// right after a note finds it by meaning; a larger backlog is left to
	// serve, mcp or rebuild, with a note on stderr.
	forWrite
	// forSelf: a one-shot command that deals with the backlog itself:
	// rebuild and import embed it with a progress bar, check reports it
	// as it is.
	forSelf
	// forServe: a long-running process (serve, mcp): its background
	// worker embeds the backlog while it answers.
	forServe
)

// catchUp is the largest backlog a one-shot write embeds after it has
// written (about one forward pass of the encoder), and catchUpTime the
// longest it waits for it.
const (
	catchUp     = 32
	catchUpTime = 3 * time.Second
)

// openWithModel opens the engine as open does (config.toml, CAIRN_*) with
// the embedding model resolveModel chooses. A binary built without the
// built-in model and with no model imported or asked for opens a
// keyword-only engine. The returned func closes the model after the engine.
func (e *env) openWithModel(ctx context.Context, flagModel string, use modelUse) (*engine.Engine, func() error, error) {
	return e.openWithModelVectors(ctx, flagModel, use, sqlite.VectorStoreOptions{})
}

// openWithModelVectors is openWithModel with the vector store's options.
func (e *env) openWithModelVectors(ctx context.Context, flagModel string, use modelUse, vs sqlite.VectorStoreOptions) (*engine.Engine, func() error, error) {
	dataDir, err := e.resolveDataDir()
	if err != nil {
		return nil, nil, err
	}
	opts, err := e.engineOptions(dataDir)
	if err != nil {
		return nil, nil, err
	}
	choice, err := e.resolveModel(flagModel)
	if err != nil {
		return nil, nil, err
	}
	closeModel := func() error { return nil }
	_, hasBuiltin := builtinModel()
	if !choice.none && (choice.dir != "" || hasBuiltin || flagModel != "" || e.getenv("CAIRN_MODEL") != "") {
		m, err := choice.open(ctx, embed.Options{})
		if err != nil {
			return nil, nil, err
		}
		opts.Embedder, closeModel = m, m.Close
	}
	// A read-only process (a data dir it may not write) embeds nothing.
	opts.NoVectorWorker = use != forServe || opts.ReadOnly
	eng, err := e.openEngine(ctx, dataDir, opts, vs)
	if err != nil {
		_ = closeModel()
		return nil, nil, err
	}
	if use == forWrite || use == forQuery {
		return eng, closeModel, nil // withModelEngine deals with its backlog
	}
	if err := e.backlog(ctx, eng, use); err != nil {
		_ = eng.Close()
		_ = closeModel()
		return nil, nil, err
	}
	return eng, closeModel, nil
}

// backlog deals with the messages still queued for this model's vectors
// as use says.
func (e *env) backlog(ctx context.Context, eng *engine.Engine, use modelUse) error {
	b, err := ops.VectorBacklog(ctx, eng, "")
	if err != nil {
		return err
	}
	return e.reportBacklog(ctx, eng, use, b)
}

// reportBacklog is backlog once the backlog b is counted.
func (e *env) reportBacklog(ctx context.Context, eng *engine.Engine, use modelUse, b engine.VectorBacklog) error {
	if b.Queued == 0 || b.Set == 0 {
		return nil
	}
	switch use {
	case forServe:
		if e.readOnly {
			fmt.Fprintf(e.stderr, "cairn: %d messages are not embedded yet with %s: semantic search does not see them, and this read-only process cannot embed them\n", b.Queued, b.Model)
			return nil
		}
		fmt.Fprintf(e.stderr, "cairn: embedding %d queued messages with %s in the background (semantic search sees them as they are done)\n", b.Queued, b.Model)
	case forWrite:
		if b.Queued <= catchUp {
			cctx, cancel := context.WithTimeout(ctx, catchUpTime)
			defer cancel()
			if err := ops.SyncVectors(cctx, eng, nil); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return nil
		}
		fallthrough
	case forQuery:
		fmt.Fprintf(e.stderr, "cairn: %d of %d messages are not embedded yet with %s: semantic search does not see them, keyword search does.\n"+
			"       Embed them now with 'cairn rebuild --vectors', or keep 'cairn serve' or 'cairn mcp' running (they embed in the background).\n",
			b.Queued, b.Messages, b.Model)
	}
	return nil
}

// withModelEngine opens the engine with its embedding model
// (openWithModel), runs f and closes both.
func (e *env) withModelEngine(ctx context.Context, flagModel string, use modelUse, f func(*engine.Engine) error) error {
	eng, closeModel, err := e.openWithModel(ctx, flagModel, use)
	if err != nil {
		return err
	}
	// A query counts the backlog (a count over the messages table) while
	// it searches, on another core, and reports it after.
	type counted struct {
		b   engine.VectorBacklog
		err error
	}
	var backlog chan counted
	if use == forQuery {
		backlog = make(chan counted, 1)
		go func() {
			b, err := ops.VectorBacklog(ctx, eng, "")
			backlog <- counted{b, err}
		}()
	}
	err = f(eng)
	switch {
	case backlog != nil:
		c := <-backlog
		if err == nil && c.err == nil {
			err = e.reportBacklog(ctx, eng, use, c.b)
		} else if err == nil {
			err = c.err
		}
	case err == nil && use == forWrite:
		err = e.backlog(ctx, eng, use)
	}
	if cerr := eng.Close(); err == nil {
		err = cerr
	}
	if cerr := closeModel(); err == nil {
		err = cerr
	}
	return err
}

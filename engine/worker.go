package engine

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The Engine's one vector worker: it asks the store to fill its vectors
// (Store.FillVectors) after each local write and every second, and
// ops.SyncVectors does the same work in the caller's goroutine.

// embedBatch is the number of messages the background worker claims,
// embeds and writes per round: large enough that the SQLite and bbolt
// commits are a small share of the encoder's time, small enough that a
// round ends well within outboxLease on a busy machine.
const embedBatch = 256

// vectorWorker is the Engine's one background worker: it fills the
// store's vectors (Store.FillVectors). Guarded by the Engine's own
// lifetime: Close stops it before the store closes.
type vectorWorker struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	wake   chan struct{}
}

// vectorizer is what the store fills vectors with: the embedder, the text
// of a message (Options.EmbedContext) and the clock.
func (e *Engine) vectorizer() Vectorizer {
	return Vectorizer{Embedder: e.opts.Embedder, Text: func(q QueuedMessage) string {
		return embedText(e.opts.EmbedContext, q)
	}, Now: e.opts.Now}
}

// startVectors readies the store's vectors (Store.OpenVectors) and, when
// it has vectors to fill and Options.NoVectorWorker is not set, starts
// the worker.
func (e *Engine) startVectors(ctx context.Context) error {
	fills, err := e.store.OpenVectors(ctx, e.vectorizer())
	if err != nil || !fills || e.opts.NoVectorWorker {
		return err
	}
	wctx, cancel := context.WithCancel(context.Background())
	e.worker.cancel = cancel
	e.worker.wg.Add(1)
	go e.runVectorWorker(wctx)
	return nil
}

// stopVectors stops the worker and waits for it. Called by Close.
func (e *Engine) stopVectors() {
	if e.worker.cancel != nil {
		e.worker.cancel()
	}
	e.worker.wg.Wait()
}

// wakeVectors tells the worker that new outbox rows may be waiting.
func (e *Engine) wakeVectors() {
	select {
	case e.worker.wake <- struct{}{}:
	default:
	}
}

// runVectorWorker fills the store's vectors until ctx ends: right after a
// local write (wakeVectors) and every second for other processes' writes;
// after a failure it waits, longer each time up to a minute.
func (e *Engine) runVectorWorker(ctx context.Context) {
	defer e.worker.wg.Done()
	if err := e.store.PrepareVectors(ctx); err != nil && ctx.Err() == nil {
		e.opts.Logger.Warn("vector worker: preparing the vectors", "err", err)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	backoff := time.Duration(0)
	for {
		n, err := e.store.FillVectors(ctx, embedBatch)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			e.opts.Logger.Warn("vector worker", "err", err)
			backoff = min(max(2*backoff, time.Second), time.Minute)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		if n > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-e.worker.wake:
		case <-tick.C:
		}
	}
}

// backlogNote says that semantic results over s miss the messages still
// queued for their vector (s.Pending, as servingSet counts them); ok is
// false when none are.
func backlogNote(s VectorSet) (SearchNote, bool) {
	switch {
	case s.Pending == 0 && s.State != SetBuilding:
		return SearchNote{}, false
	case s.State == SetBuilding:
		return SearchNote{Kind: NoteVectorsBuilding, Message: fmt.Sprintf("vectors of %s are still being built (%d messages to go): messages not embedded yet are found by keyword only (vector_missing)", s.ModelID, s.Pending)}, true
	}
	return SearchNote{Kind: NoteVectorsBuilding, Message: fmt.Sprintf("%d messages are still queued for vectors of %s: semantic search does not see them yet, keyword search does (vector_missing)", s.Pending, s.ModelID)}, true
}

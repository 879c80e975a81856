package engine

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/cairn-dev/cairn/vecstore"
)

// The data dir's extras, reached through the Engine while the embedded
// store is part of package engine: each is the data dir store's own
// method (sqliteStore), and answers nothing over another store.

// dataDir is e's store when it is the data dir's, else nil.
func (e *Engine) dataDir() *sqliteStore {
	s, _ := e.store.(*sqliteStore)
	return s
}

// openLocalVectors opens DIR/vectors beside a store other than the data
// dir's when Options.VectorStore.Open asks for it (OpenBackend).
func (e *Engine) openLocalVectors(ctx context.Context) error {
	if e.backend == "" || !e.opts.VectorStore.Open || e.dir == "" {
		return nil
	}
	st, err := vecstore.Open(ctx, filepath.Join(e.dir, VectorsDir),
		vecstore.Options{Logger: e.opts.Logger, AllowReset: e.opts.VectorStore.AllowReset})
	if err != nil {
		return fmt.Errorf("engine: open vectors: %w", err)
	}
	e.localVectors = st
	return nil
}

// VectorStore returns the data dir's vector store (sqliteStore.VectorStore),
// or over another store the DIR/vectors Options.VectorStore.Open opened;
// nil when none is open. The engine owns it: Close closes it, callers
// must not.
func (e *Engine) VectorStore() *vecstore.Store {
	if s := e.dataDir(); s != nil {
		return s.VectorStore()
	}
	return e.localVectors
}

// RemovedLeftovers returns the temporary files and folders of killed
// backups and restores that Open removed (sqliteStore.RemovedLeftovers).
func (e *Engine) RemovedLeftovers() []string {
	if s := e.dataDir(); s != nil {
		return s.RemovedLeftovers()
	}
	return nil
}

// KeywordIndexReady reports whether the data dir's in-memory keyword
// index answers keyword searches (sqliteStore.KeywordIndexReady).
func (e *Engine) KeywordIndexReady() bool {
	s := e.dataDir()
	return s != nil && s.KeywordIndexReady()
}

// ConvertVectors converts the data dir's message collections of an older
// vector code (sqliteStore.ConvertVectors).
func (e *Engine) ConvertVectors(ctx context.Context, progress ConvertProgress) error {
	if s := e.dataDir(); s != nil {
		return s.ConvertVectors(ctx, progress)
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/postgres"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/vecstore"
)

// storeURL is where this command's messages are kept: --store, else
// CAIRN_STORE or config.toml's store (applyConfig), else "" (the data dir).
func (e *env) storeURL() string {
	if e.store != "" {
		return e.store
	}
	return e.configStore
}

// openEngine opens the engine over the store the command names: the data
// dir dir (SQLite), or a PostgreSQL database (engine/postgres), where dir still
// holds config.toml and the models. vs opens the data dir's vector store
// (DIR/vectors), beside a PostgreSQL store too.
func (e *env) openEngine(ctx context.Context, dir string, opts engine.Options, vs sqlite.VectorStoreOptions) (*engine.Engine, error) {
	store := e.storeURL()
	if store == "" {
		if e.readOnly {
			// A read creates nothing: a mistyped --data-dir is reported,
			// not answered from a new empty store.
			if _, err := os.Stat(filepath.Join(dir, sqlite.DBFile)); errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("no cairn store in %s (nothing was ever written there: check --data-dir or CAIRN_DATA_DIR): %w", dir, engine.ErrNotFound)
			}
		}
		eng, st, err := sqlite.OpenEngineStore(ctx, dir, opts, sqlite.Options{VectorStore: vs})
		if err != nil {
			return nil, err
		}
		for _, p := range st.RemovedLeftovers() {
			e.leftover(p)
		}
		e.dataStore = st
		return eng, nil
	}
	if !postgres.IsDSN(store) {
		return nil, usagef("", "--store: want a postgres://user@host:port/database URL, got %q", postgres.Redact(store))
	}
	eng, err := openPostgres(ctx, store, dir, e.pgOptions, opts)
	if err != nil || !vs.Open || dir == "" {
		return eng, err
	}
	// The collections a process serves besides messages stay in the data
	// dir beside a PostgreSQL store (DIR/vectors).
	local, err := vecstore.Open(ctx, filepath.Join(dir, sqlite.VectorsDir),
		vecstore.Options{Logger: opts.Logger, AllowReset: vs.AllowReset})
	if err != nil {
		eng.Close()
		return nil, fmt.Errorf("engine: open vectors: %w", err)
	}
	e.localVectors = local
	return eng, nil
}

// vectorStore is the vector store of the engine openEngine opened: the
// data dir's (nil until it opens it), or DIR/vectors beside a PostgreSQL
// store; nil when none is open.
func (e *env) vectorStore() *vecstore.Store {
	if e.dataStore != nil {
		return e.dataStore.VectorStore()
	}
	return e.localVectors
}

// closeLocalVectors closes the DIR/vectors openEngine opened beside a
// PostgreSQL store, after the engine.
func (e *env) closeLocalVectors() {
	if e.localVectors != nil {
		e.localVectors.Close()
		e.localVectors = nil
	}
}

// openPostgres opens the engine over the PostgreSQL store at url with
// pgOpts, with dir as the data dir of config.toml and the models ("" for
// none).
func openPostgres(ctx context.Context, url, dir string, pgOpts postgres.Options, opts engine.Options) (*engine.Engine, error) {
	st, err := postgres.Open(ctx, url, pgOpts)
	if err != nil {
		return nil, err
	}
	eng, err := engine.OpenBackend(ctx, st, postgres.Kind, dir, opts)
	if err != nil {
		st.Close()
		return nil, err
	}
	return eng, nil
}

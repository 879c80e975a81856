package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/cairn-dev/cairn/cmd/cairn/chromaapi"
	"github.com/cairn-dev/cairn/engine/postgres"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/pgcollections"
	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
)

// openChromaCollections opens the PostgreSQL collections of the store
// named by dsn (the command's --store) for the Chroma API; with dsn empty
// it returns nil (the engine's vector store in the data dir serves them).
// The returned func closes what was opened.
func openChromaCollections(ctx context.Context, dsn string, allowReset bool, logger *slog.Logger) (chroma.Store, func(), error) {
	if dsn == "" {
		return nil, func() {}, nil
	}
	if !postgres.IsDSN(dsn) {
		return nil, nil, usagef("serve", "--store must be a postgres:// connection string")
	}
	pg, err := pgcollections.Open(ctx, dsn, pgcollections.Options{AllowReset: allowReset, Logger: logger})
	if err != nil {
		return nil, nil, fmt.Errorf("opening the Chroma collections in PostgreSQL: %w", err)
	}
	logger.Info("chroma collections in postgresql", "pgvector", pg.PgvectorVersion(), "iterative_scans", pg.IterativeScans())
	return pg, func() { _ = pg.Close() }, nil
}

// chromaCollections is what the Chroma API serves: cfg.chroma when set,
// else the data dir's vector store (cfg.vectors), whose database of
// message vectors is read-only (the second result).
func chromaCollections(cfg serveConfig) (chroma.Store, []chromaapi.ReadOnlyDatabase) {
	if cfg.chroma != nil {
		return cfg.chroma, nil
	}
	var vs *vecstore.Store
	if cfg.vectors != nil {
		vs = cfg.vectors()
	}
	return vs, []chromaapi.ReadOnlyDatabase{{
		Database: sqlite.VectorDatabase,
		Reason:   "it holds cairn's message vectors, which follow its messages; change the messages through cairn instead",
	}}
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cairn-dev/cairn/cmd/cairn/chromaapi"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/pgcollections"
)

// chromaStoreEnv names the environment variable that puts the Chroma API's
// collections in PostgreSQL: a postgres:// connection string. Unset, they
// live in the engine's vector store (the data directory).
const chromaStoreEnv = "CAIRN_CHROMA_STORE"

// isPostgresDSN reports whether dsn names a PostgreSQL database.
func isPostgresDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// openChromaCollections opens the PostgreSQL collections named by dsn for
// the Chroma API; with dsn empty it returns nil (the engine's vector store
// serves them). The returned func closes what was opened.
func openChromaCollections(ctx context.Context, dsn string, allowReset bool, logger *slog.Logger) (chromaapi.Collections, func(), error) {
	if dsn == "" {
		return nil, func() {}, nil
	}
	if !isPostgresDSN(dsn) {
		return nil, nil, usagef("serve", "%s must be a postgres:// connection string", chromaStoreEnv)
	}
	pg, err := pgcollections.Open(ctx, dsn, pgcollections.Options{AllowReset: allowReset, Logger: logger})
	if err != nil {
		return nil, nil, fmt.Errorf("opening the Chroma collections in PostgreSQL: %w", err)
	}
	logger.Info("chroma collections in postgresql", "pgvector", pg.PgvectorVersion(), "iterative_scans", pg.IterativeScans())
	return pg, func() { _ = pg.Close() }, nil
}

// chromaCollections is what the Chroma API serves: cfg.chroma when set,
// else the engine's vector store.
func chromaCollections(eng *engine.Engine, cfg serveConfig) chromaapi.Collections {
	if cfg.chroma != nil {
		return cfg.chroma
	}
	return eng.VectorStore()
}

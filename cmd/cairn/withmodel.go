package main

import (
	"context"
	"errors"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/engine"
)

// withModelEngine opens the engine with the embedding model chosen by
// --model, $CAIRN_MODEL or the data dir's models/ (resolveModel), runs f
// and closes both. Without any model it opens a keyword-only engine,
// unless the model was asked for explicitly (flagModel != "" or required).
func (e *env) withModelEngine(ctx context.Context, flagModel string, required bool, f func(*engine.Engine) error) error {
	dataDir, err := e.resolveDataDir()
	if err != nil {
		return err
	}
	opts := engine.Options{Now: e.now}
	dir, err := e.resolveModel(flagModel)
	switch {
	case err == nil:
		m, err := embed.Open(ctx, dir, embed.Options{})
		if err != nil {
			return err
		}
		defer m.Close()
		opts.Embedder = m
	case errors.Is(err, embed.ErrNoModel) && flagModel == "" && !required && e.getenv("CAIRN_MODEL") == "":
		// keyword only
	default:
		return err
	}
	eng, err := engine.Open(ctx, dataDir, opts)
	if err != nil {
		return err
	}
	err = f(eng)
	if cerr := eng.Close(); err == nil {
		err = cerr
	}
	return err
}

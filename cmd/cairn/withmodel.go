package main

import (
	"context"
	"errors"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/engine"
)

// openWithModel opens the engine as open does (config.toml, CAIRN_*) with
// the embedding model chosen by --model, $CAIRN_MODEL or the data dir's
// models/ (resolveModel). Without any model it opens a keyword-only engine,
// unless the model was asked for explicitly (flagModel != "", CAIRN_MODEL,
// or required). The returned func closes the model after the engine.
func (e *env) openWithModel(ctx context.Context, flagModel string, required bool) (*engine.Engine, func() error, error) {
	dataDir, err := e.resolveDataDir()
	if err != nil {
		return nil, nil, err
	}
	opts, err := e.engineOptions(dataDir)
	if err != nil {
		return nil, nil, err
	}
	closeModel := func() error { return nil }
	dir, err := e.resolveModel(flagModel)
	switch {
	case err == nil:
		m, err := openModel(ctx, dir, embed.Options{})
		if err != nil {
			return nil, nil, err
		}
		closeModel = m.Close
		opts.Embedder = m
	case errors.Is(err, embed.ErrNoModel) && flagModel == "" && !required && e.getenv("CAIRN_MODEL") == "":
		// keyword only
	default:
		return nil, nil, err
	}
	eng, err := engine.Open(ctx, dataDir, opts)
	if err != nil {
		_ = closeModel()
		return nil, nil, err
	}
	return eng, closeModel, nil
}

// builtinModelRef is what resolveModel returns for the model compiled into
// the binary; it names no directory.
const builtinModelRef = "(built-in)"

// openModel opens the model resolveModel chose: a directory or the built-in model.
func openModel(ctx context.Context, ref string, opts embed.Options) (*embed.Model, error) {
	if ref == builtinModelRef {
		return openBuiltinModel(ctx, opts)
	}
	return embed.Open(ctx, ref, opts)
}

// withModelEngine opens the engine with its embedding model
// (openWithModel), runs f and closes both.
func (e *env) withModelEngine(ctx context.Context, flagModel string, required bool, f func(*engine.Engine) error) error {
	eng, closeModel, err := e.openWithModel(ctx, flagModel, required)
	if err != nil {
		return err
	}
	err = f(eng)
	if cerr := eng.Close(); err == nil {
		err = cerr
	}
	if cerr := closeModel(); err == nil {
		err = cerr
	}
	return err
}

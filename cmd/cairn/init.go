package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

func initCommand() *command {
	return &command{
		name:     "init",
		summary:  "create the data dir and its database (other commands do it on first use too)",
		usage:    "[--data-dir DIR] [--json]",
		examples: []string{`cairn init`, `cairn init --data-dir ./kb --json`},
		run:      runInit,
	}
}

func runInit(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(c, pos); err != nil {
		return err
	}
	dir, err := e.resolveDataDir()
	if err != nil {
		return err
	}
	_, statErr := os.Stat(filepath.Join(dir, sqlite.DBFile))
	existed := statErr == nil
	if statErr != nil && !errors.Is(statErr, os.ErrNotExist) {
		return fmt.Errorf("data dir %s: %w", dir, statErr)
	}
	return e.withEngine(ctx, func(eng *engine.Engine) error {
		out := struct {
			DataDir  string `json:"data_dir"`
			Created  bool   `json:"created"`
			DBFormat int    `json:"db_format"`
		}{eng.Dir(), !existed, sqlite.FormatVersion()}
		if e.json {
			return e.printJSON(out)
		}
		if existed {
			fmt.Fprintf(e.stdout, "cairn data dir %s is ready (already initialized, format %d)\n", out.DataDir, out.DBFormat)
		} else {
			fmt.Fprintf(e.stdout, "initialized cairn data dir %s (format %d)\n", out.DataDir, out.DBFormat)
		}
		return nil
	})
}

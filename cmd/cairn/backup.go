package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

func backupCommand() *command {
	return &command{
		name:     "backup",
		summary:  "write a consistent online snapshot of the data dir (zstd archive, manifest, SHA-256)",
		usage:    "FILE [--force] [--skip-vectors] [--json]",
		examples: []string{`cairn backup /backups/cairn-$(date +%F).cairn.zst`, `cairn backup --skip-vectors b.cairn.zst   # then: cairn rebuild after restoring`},
		run:      runBackup,
	}
}

func runBackup(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	skipVectors := fs.Bool("skip-vectors", false, "leave the vector store out (derived data: run cairn rebuild after restoring)")
	force := fs.Bool("force", false, "replace FILE if it exists")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef(c.name, "expected the backup FILE")
	}
	bar := e.progress("backup")
	return e.withEngine(ctx, func(eng *engine.Engine) error {
		m, err := ops.Backup(ctx, eng, pos[0], engine.BackupOptions{SkipVectors: *skipVectors, Overwrite: *force, Progress: bar.update, Leftover: e.leftover})
		bar.done()
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, engine.ErrDiskFull) {
			// A backup writes only beside FILE (its snapshot, then the
			// archive), so a full disk is the backup's, not the data dir's.
			dir, _ := filepath.Abs(filepath.Dir(pos[0]))
			return fmt.Errorf("backup: no space left on the device holding %s; free some space there or choose another FILE", dir)
		}
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(map[string]any{"file": pos[0], "manifest": m})
		}
		var total int64
		for _, f := range m.Files {
			fmt.Fprintf(e.stdout, "%s  %d bytes  sha256 %s\n", f.Path, f.Size, f.SHA256)
			total += f.Size
		}
		fmt.Fprintf(e.stdout, "wrote %s: %d files, %d bytes before compression\n", pos[0], len(m.Files), total)
		if m.VectorsSkipped {
			fmt.Fprintln(e.stdout, "vectors left out: run cairn rebuild after restoring")
		}
		return nil
	})
}

package main

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

func restoreCommand() *command {
	return &command{
		name:    "restore",
		summary: "verify a backup, then restore it into an empty folder",
		usage:   "FILE DIR [--config] [--verify-only] [--json]",
		examples: []string{
			`cairn restore /backups/cairn-2026-01-05.cairn.zst ~/.local/share/cairn-restored`,
			`cairn restore --verify-only /backups/cairn-2026-01-05.cairn.zst`,
		},
		run: runRestore,
	}
}

func runRestore(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(e, c)
	verifyOnly := fs.Bool("verify-only", false, "only verify the archive; write nothing")
	withConfig := fs.Bool("config", false, "restore the backup's config.toml too (by default it is left out: a configuration can turn redaction off)")
	pos, err := parse(e, c, fs, args)
	if err != nil {
		return err
	}
	var m *engine.BackupManifest
	switch {
	case *verifyOnly && len(pos) == 1:
		m, err = sqlite.VerifyBackup(ctx, pos[0])
	case !*verifyOnly && len(pos) == 2:
		bar := e.progress("restore")
		m, err = sqlite.Restore(ctx, pos[0], pos[1], sqlite.RestoreOptions{Progress: bar.update, Config: *withConfig, Leftover: e.leftover})
		bar.done()
	default:
		return usagef(c.name, "expected FILE DIR (or --verify-only FILE)")
	}
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(m)
	}
	fmt.Fprintf(e.stdout, "backup of %s, format %d: %d files verified\n", formatTime(m.CreatedAt), m.Version, len(m.Files))
	if !*verifyOnly {
		fmt.Fprintf(e.stdout, "restored into %s\n", pos[1])
		if m.HasConfig() && !*withConfig {
			fmt.Fprintln(e.stdout, "config.toml in the backup was not restored (defaults apply); restore it with --config")
		}
	}
	if m.VectorsSkipped {
		fmt.Fprintln(e.stdout, "the backup has no vectors: run cairn rebuild (with the same embedding model) to regenerate them")
	}
	return nil
}

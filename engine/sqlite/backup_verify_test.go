package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// TestFaultBackupStructure: a crafted archive is not trusted. Without
// cairn.db, with an entry cairn never writes, or with a cairn.db that is
// not a sound database it is refused by verify and restore alike, and
// nothing is written; a backup's config.toml is restored only when asked.
func TestFaultBackupStructure(t *testing.T) {
	ctx := context.Background()
	cfg := "[redaction]\nenabled = false\n"
	cases := map[string][]byte{
		"config only, no cairn.db": craftArchive(t, []engine.BackupFile{{Path: "config.toml", Size: int64(len(cfg))}}, map[string]string{"config.toml": cfg}),
		"unexpected entry": craftArchive(t, []engine.BackupFile{{Path: "cairn.db", Size: 4}, {Path: "hooks/run.sh", Size: 4}},
			map[string]string{"cairn.db": "evil", "hooks/run.sh": "evil"}),
		"cairn.db not a database": craftArchive(t, []engine.BackupFile{{Path: "cairn.db", Size: 12}}, map[string]string{"cairn.db": "not a sqlite"}),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "crafted.zst")
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := sqlite.VerifyBackup(ctx, p); !errors.Is(err, engine.ErrCorrupt) {
				t.Errorf("verify: %v, want ErrCorrupt", err)
			}
			parent := t.TempDir()
			if _, err := sqlite.Restore(ctx, p, filepath.Join(parent, "r"), sqlite.RestoreOptions{Config: true}); !errors.Is(err, engine.ErrCorrupt) {
				t.Errorf("restore: %v, want ErrCorrupt", err)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("restore wrote %v", ents)
			}
		})
	}

	e := enginetest.OpenIn(t, "", engine.Options{})
	enginetest.AgedNote(t, e, "a", "a note to keep", time.Hour, 0.7, "", "")
	if err := os.WriteFile(filepath.Join(e.Dir(), "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "b.zst")
	m, err := ops.Backup(ctx, e, archive, engine.BackupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !m.HasConfig() {
		t.Fatal("the backup lacks config.toml")
	}
	plain := filepath.Join(t.TempDir(), "plain")
	if _, err := sqlite.Restore(ctx, archive, plain, sqlite.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(plain, "config.toml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("config.toml restored without being asked (stat: %v)", err)
	}
	withCfg := filepath.Join(t.TempDir(), "with")
	if _, err := sqlite.Restore(ctx, archive, withCfg, sqlite.RestoreOptions{Config: true}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(withCfg, "config.toml")); err != nil || string(b) != cfg {
		t.Errorf("config.toml with Config: %q, %v", b, err)
	}
}

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyOnlyWithBuiltinModel: a backup of a store whose messages have
// vectors from the built-in model verifies clean (exit 0), as does the
// restore made from it, and the restored dir passes `cairn check`.
func TestVerifyOnlyWithBuiltinModel(t *testing.T) {
	if _, ok := builtinModel(); !ok {
		t.Skip("binary built without the built-in model")
	}
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data, "HOME": t.TempDir()})
	cli := cliExpect(t, getenv)
	cli(0, "note", "--agent", "ann", "the parser is flaky on empty input")
	if out := cli(0, "check"); !strings.Contains(out, "1 vectors") {
		t.Fatalf("the note has no vector from the built-in model: %s", out)
	}
	archive := filepath.Join(t.TempDir(), "b.cairn.zst")
	cli(0, "backup", archive)
	cli(0, "restore", "--verify-only", archive)
	restored := filepath.Join(t.TempDir(), "r")
	cli(0, "restore", archive, restored)
	cli(0, "--data-dir", restored, "check")
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFaultBackupCLI: `cairn backup FILE` refuses an existing FILE (exit 2,
// the file untouched) unless --force; `cairn restore` leaves the backup's
// config.toml out unless --config.
func TestFaultBackupCLI(t *testing.T) {
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data})
	if _, errOut, code := runCLI(t, getenv, "", "note", "--agent", "a", "keep me"); code != 0 {
		t.Fatalf("note: %d %s", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(data, "config.toml"), []byte("[redaction]\nenabled = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "b.zst")
	if err := os.WriteFile(file, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI(t, getenv, "", "backup", file)
	if code != 2 || !strings.Contains(errOut, "--force") {
		t.Fatalf("backup over a file: exit %d, %s", code, errOut)
	}
	if b, _ := os.ReadFile(file); string(b) != "precious" {
		t.Fatal("backup replaced an existing file without --force")
	}
	if _, errOut, code := runCLI(t, getenv, "", "backup", "--force", file); code != 0 {
		t.Fatalf("backup --force: %d %s", code, errOut)
	}
	dst := filepath.Join(t.TempDir(), "r")
	out, errOut, code := runCLI(t, getenv, "", "restore", file, dst)
	if code != 0 || !strings.Contains(out, "--config") {
		t.Fatalf("restore: %d %s %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dst, "config.toml")); err == nil {
		t.Error("restore wrote the backup's config.toml without --config")
	}
	dst2 := filepath.Join(t.TempDir(), "r2")
	if _, errOut, code := runCLI(t, getenv, "", "restore", "--config", file, dst2); code != 0 {
		t.Fatalf("restore --config: %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dst2, "config.toml")); err != nil {
		t.Errorf("restore --config: %v", err)
	}
}

// TestFaultImportMessagesLineCap: `cairn import messages` stops at a line
// longer than 16 MiB with exit 2 and an error naming the line, and imports
// nothing (before, the whole line was buffered: 300 MB took 1.46 GB).
func TestFaultImportMessagesLineCap(t *testing.T) {
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data})
	file := filepath.Join(t.TempDir(), "m.jsonl")
	long := `{"channel":"general","sender":"a","content":"` + strings.Repeat("x", 17<<20) + `"}`
	body := `{"channel":"general","sender":"a","content":"fine"}` + "\n" + long + "\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI(t, getenv, "", "import", "messages", file)
	if code != 2 || !strings.Contains(errOut, "line 2") || !strings.Contains(errOut, "longer than") {
		t.Fatalf("import of a 17 MiB line: exit %d, %s", code, errOut)
	}
	out, _, _ := runCLI(t, getenv, "", "stats", "--json")
	if !strings.Contains(out, `"messages": 0`) && !strings.Contains(out, `"messages":0`) {
		t.Errorf("something was imported: %s", out)
	}
}

// TestFaultMetaRedactedCLI: `cairn note --meta` and breadcrumb flags are
// redacted like the content.
func TestFaultMetaRedactedCLI(t *testing.T) {
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data})
	aws := "AKIA" + "IOSFODNN7EXAMPLE"
	gh := "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a"
	if _, errOut, code := runCLI(t, getenv, "", "note", "--agent", "a", "--meta", `{"aws":"`+aws+`"}`, "--file", "x/"+gh, "rotated keys"); code != 0 {
		t.Fatalf("note: %d %s", code, errOut)
	}
	out, _, code := runCLI(t, getenv, "", "show", "1", "--json")
	if code != 0 || strings.Contains(out, aws) || strings.Contains(out, gh) || !strings.Contains(out, "REDACTED") {
		t.Errorf("show: %d %s", code, out)
	}
	raw, err := os.ReadFile(filepath.Join(data, "cairn.db"))
	if err != nil {
		t.Fatal(err)
	}
	if wal, err := os.ReadFile(filepath.Join(data, "cairn.db-wal")); err == nil {
		raw = append(raw, wal...)
	}
	if strings.Contains(string(raw), aws) || strings.Contains(string(raw), gh) {
		t.Error("a secret given in metadata is in the database file")
	}
}

// TestFaultGCCollapseCLI: `cairn gc` collapses near-duplicates from the
// command line (it used to say "skipped: no vectors available" because it
// opens the engine without the model; the stored vectors are enough).
func TestFaultGCCollapseCLI(t *testing.T) {
	if _, ok := builtinModel(); !ok {
		t.Skip("built without the built-in model")
	}
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data})
	// Imported: a live write of the second would be refused as a
	// near-duplicate of the first.
	lines := `{"channel":"agent-notes:a","sender":"a","content":"The build uses make and go test."}` + "\n" +
		`{"channel":"agent-notes:a","sender":"a","content":"The build uses make and go test!"}` + "\n"
	in := filepath.Join(t.TempDir(), "notes.jsonl")
	if err := os.WriteFile(in, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI(t, getenv, "", "import", "messages", in); code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	cfg := "[retention]\n[[retention.policy]]\nname = \"dedup\"\nchannels = [\"agent-notes:*\"]\ncollapse_threshold = 0.9\n"
	if err := os.WriteFile(filepath.Join(data, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, getenv, "", "gc", "--dry-run")
	if code != 0 || strings.Contains(out, "skipped") || !strings.Contains(out, "near-duplicate") {
		t.Fatalf("gc --dry-run: exit %d\n%s\n%s", code, out, errOut)
	}
}

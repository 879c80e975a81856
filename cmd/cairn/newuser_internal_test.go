package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewUserSurprises: what a new user meets in the first hour reads
// right: a mistyped data dir is reported and not created by a read, a
// negative --max-age-days names the flag, no message carries an internal
// "engine:" prefix, config show --json has snake_case keys, and the help
// says cairn finds messages by keyword and by meaning.
func TestNewUserSurprises(t *testing.T) {
	home := t.TempDir()
	data := t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": data, "HOME": home, "CAIRN_MODEL": "none"})
	cli := cliExpect(t, getenv)
	missing := filepath.Join(t.TempDir(), "nonexistent", "deep", "dir")
	for _, args := range [][]string{{"search", "parser"}, {"stats"}, {"show", "1"}} {
		out := cli(2, append([]string{"--data-dir", missing}, args...)...)
		if !strings.Contains(out, "no cairn store") || !strings.Contains(out, missing) {
			t.Errorf("%v on a missing data dir: %s", args, out)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a read created %s (%v)", missing, err)
	}
	cli(0, "note", "--agent", "ann", "the parser is flaky")
	if out := cli(2, "search", "--max-age-days", "-1", "parser"); !strings.Contains(out, "--max-age-days") || strings.Contains(out, "max_age_hours") {
		t.Errorf("negative --max-age-days: %s", out)
	}
	ro := filepath.Join(t.TempDir(), "file")
	os.WriteFile(ro, []byte("x"), 0o600)
	for _, args := range [][]string{{"--data-dir", ro, "note", "--agent", "a", "x"}, {"restore", "--verify-only", ro}} {
		out, errOut, _ := runCLI(t, getenv, "", args...)
		if strings.Contains(out+errOut, "engine:") {
			t.Errorf("%v: internal prefix in %q", args, errOut)
		}
	}
	var cfg struct {
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal([]byte(cli(0, "config", "show", "--json")), &cfg); err != nil {
		t.Fatal(err)
	}
	for k, v := range cfg.Config {
		if k != strings.ToLower(k) {
			t.Errorf("config show --json key %q is not snake_case", k)
		}
		if m, ok := v.(map[string]any); ok {
			for k2 := range m {
				if k2 != strings.ToLower(k2) {
					t.Errorf("config show --json key %s.%s is not snake_case", k, k2)
				}
			}
		}
	}
	if len(cfg.Config) == 0 {
		t.Error("config show --json: empty config")
	}
	if out := cli(0, "--help"); !strings.Contains(out, "by keyword and by meaning") {
		t.Errorf("help: %s", out)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/pgtest"
)

// postgres.ef_search comes from config.toml or CAIRN_POSTGRES_EF_SEARCH;
// a value out of range is a usage error naming the key and the rule
// (exit 2) and nothing is written.
func TestPostgresEfSearchSetting(t *testing.T) {
	dsn := pgtest.Database(t)
	data := t.TempDir()
	run := func(env map[string]string, want int, args ...string) (string, string) {
		t.Helper()
		env["CAIRN_MODEL"] = "none"
		out, errOut, code := runCLI(t, envMap(env), "", append([]string{"--store", dsn, "--data-dir", data}, args...)...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, out, errOut)
		}
		return out, errOut
	}
	run(map[string]string{"CAIRN_POSTGRES_EF_SEARCH": "400"}, 0, "post", "--channel", "c", "--sender", "a", "the outbox drains in batches")
	if out, _ := run(map[string]string{"CAIRN_POSTGRES_EF_SEARCH": "400"}, 0, "search", "--mode", "keyword", "outbox"); !strings.Contains(out, "outbox") {
		t.Fatalf("search with ef_search 400: %s", out)
	}
	if _, errOut := run(map[string]string{"CAIRN_POSTGRES_EF_SEARCH": "5000"}, 2, "post", "--channel", "c", "--sender", "a", "not stored"); !strings.Contains(errOut, "postgres.ef_search: must be 1..1000") {
		t.Fatalf("ef_search 5000: %s", errOut)
	}
	if err := os.WriteFile(filepath.Join(data, "config.toml"), []byte("[postgres]\nef_search = 0.5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut := run(map[string]string{}, 2, "post", "--channel", "c", "--sender", "a", "not stored either"); !strings.Contains(errOut, "Postgres.EfSearch") {
		t.Fatalf("ef_search 0.5: %s", errOut)
	}
	if err := os.WriteFile(filepath.Join(data, "config.toml"), []byte("[postgres]\nef_search = 800\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _ := run(map[string]string{}, 0, "stats", "--json"); !strings.Contains(out, `"messages":1,`) {
		t.Fatalf("stats: %s", out)
	}
}

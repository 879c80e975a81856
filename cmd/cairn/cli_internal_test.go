package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

func runCLI(t *testing.T, getenv func(string) string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	en := &env{stdin: strings.NewReader(stdin), stdout: &o, stderr: &e, getenv: getenv, stdinIsTerminal: func() bool { return stdin == "" }}
	code = report(&e, run(context.Background(), en, args))
	return o.String(), e.String(), code
}

func envMap(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDataDirResolution(t *testing.T) {
	flagDir, envDir, home := t.TempDir(), t.TempDir(), t.TempDir()
	getenv := envMap(map[string]string{"CAIRN_DATA_DIR": envDir, "HOME": home})
	for _, tc := range []struct {
		name   string
		getenv func(string) string
		args   []string
		want   string
	}{
		{"flag wins", getenv, []string{"--data-dir", flagDir, "init", "--json"}, flagDir},
		{"flag after command", getenv, []string{"init", "--json", "--data-dir", flagDir}, flagDir},
		{"env", getenv, []string{"init", "--json"}, envDir},
		{"default", envMap(map[string]string{"HOME": home}), []string{"init", "--json"}, filepath.Join(home, ".local", "share", "cairn")},
		{"xdg", envMap(map[string]string{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "xdg")}), []string{"init", "--json"}, filepath.Join(home, "xdg", "cairn")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, tc.getenv, "", tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !strings.Contains(out, `"data_dir":"`+tc.want+`"`) {
				t.Fatalf("got %s, want data dir %s", out, tc.want)
			}
		})
	}
	_, errOut, code := runCLI(t, envMap(nil), "", "init")
	if code != 1 || !strings.Contains(errOut, "CAIRN_DATA_DIR") {
		t.Fatalf("no HOME: exit %d %q", code, errOut)
	}
}

func TestUserDataDir(t *testing.T) {
	for _, tc := range []struct {
		goos string
		env  map[string]string
		want string
	}{
		{"linux", map[string]string{"HOME": "/h"}, "/h/.local/share"},
		{"linux", map[string]string{"HOME": "/h", "XDG_DATA_HOME": "/x"}, "/x"},
		{"linux", map[string]string{"HOME": "/h", "XDG_DATA_HOME": "relative"}, "/h/.local/share"},
		{"darwin", map[string]string{"HOME": "/Users/a"}, "/Users/a/Library/Application Support"},
		{"windows", map[string]string{"LocalAppData": `C:\Users\a\AppData\Local`}, `C:\Users\a\AppData\Local`},
	} {
		got, err := userDataDir(envMap(tc.env), tc.goos)
		if err != nil || got != filepath.FromSlash(tc.want) && got != tc.want {
			t.Errorf("userDataDir(%s, %v) = %q, %v; want %q", tc.goos, tc.env, got, err, tc.want)
		}
	}
	for _, goos := range []string{"linux", "darwin", "windows", "plan9"} {
		if _, err := userDataDir(envMap(nil), goos); err == nil {
			t.Errorf("%s without env: no error", goos)
		}
	}
}

func TestBadDataDirs(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("x"), 0o644)

	corrupt := filepath.Join(base, "corrupt")
	os.Mkdir(corrupt, 0o755)
	os.WriteFile(filepath.Join(corrupt, sqlite.DBFile), bytes.Repeat([]byte("garbage!"), 1000), 0o644)

	newer := filepath.Join(base, "newer")
	e, err := sqlite.OpenEngine(context.Background(), newer, engine.Options{}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	db, err := sql.Open("sqlite", filepath.Join(newer, sqlite.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 4242"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	for _, tc := range []struct {
		name, dir, want string
	}{
		{"data dir is a file", file, "data dir"},
		{"corrupt database", corrupt, "corrupt"},
		{"newer database", newer, "version 4242"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, args := range [][]string{{"init"}, {"note", "--agent", "a", "x"}, {"search", "x"}, {"show", "1"}} {
				_, errOut, code := runCLI(t, envMap(nil), "", append([]string{"--data-dir", tc.dir}, args...)...)
				if code != 1 || !strings.Contains(errOut, tc.want) {
					t.Errorf("%v: exit %d, stderr %q; want exit 1 mentioning %q", args, code, errOut, tc.want)
				}
			}
		})
	}
}

func TestParseInterleaved(t *testing.T) {
	e := &env{stdout: &bytes.Buffer{}}
	c := &command{name: "x"}
	fs := newFlagSet(e, c)
	limit := fs.Int("limit", 0, "")
	var chans stringList
	fs.Var(&chans, "channel", "")
	pos, err := parse(e, c, fs, []string{"--limit", "5", "hello", "--channel", "a", "world", "--json", "--channel=b", "--", "--limit", "-x"})
	if err != nil {
		t.Fatal(err)
	}
	if *limit != 5 || !e.json || !reflect.DeepEqual([]string(chans), []string{"a", "b"}) || !reflect.DeepEqual(pos, []string{"hello", "world", "--limit", "-x"}) {
		t.Fatalf("limit %d json %v channels %q pos %q", *limit, e.json, chans, pos)
	}
}

func TestTextFromStdinLimit(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", engine.DefaultMaxContentBytes+10)
	_, errOut, code := runCLI(t, envMap(map[string]string{"CAIRN_DATA_DIR": dir}), big, "note", "--agent", "a")
	if code != 2 || !strings.Contains(errOut, "content") || !strings.Contains(errOut, "at most 1048576 bytes") {
		t.Fatalf("exit %d %q", code, errOut)
	}
	out, _, code := runCLI(t, envMap(map[string]string{"CAIRN_DATA_DIR": dir}), "", "search", "--json")
	if code != 0 || out != "" {
		t.Fatalf("something was written: %q", out)
	}
}

// TestExitCodesCoverEveryClass: every engine error class has its row in
// exitCodes, and report prints the error's own text (without the engine's
// "engine: " prefixes).
func TestExitCodesCoverEveryClass(t *testing.T) {
	for _, class := range engine.ErrorClasses() {
		found := false
		for _, c := range exitCodes() {
			found = found || c.class == class
		}
		if !found {
			t.Errorf("%v has no exit code", class)
		}
	}
	var buf bytes.Buffer
	err := fmt.Errorf("message id 7: %w", engine.ErrNotFound)
	if code := report(&buf, err); code != 2 || buf.String() != "cairn: message id 7: not found\n" {
		t.Errorf("not found: %d %q", code, buf.String())
	}
	buf.Reset()
	if code := report(&buf, fmt.Errorf("x: %w", engine.ErrNoModel)); code != 2 {
		t.Errorf("no model: %d %q", code, buf.String())
	}
	buf.Reset()
	if code := report(&buf, fmt.Errorf("x: %w", engine.ErrCorrupt)); code != 1 {
		t.Errorf("corrupt: %d %q", code, buf.String())
	}
}

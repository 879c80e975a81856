package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/config"
)

func noEnv(string) string { return "" }

func TestDefaultsRoundTrip(t *testing.T) {
	def := config.Default()
	if err := def.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	b, err := config.Encode(def)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[import]", "claude_code_dir", "[redaction]", "enabled = true", "[retention]", "session_max_age = '0'", "[gc]", "schedule = '1d'", "[export]", "# Sessions never stored"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("encoded defaults lack %q:\n%s", want, b)
		}
	}
	got := config.Config{}
	if err := config.Decode(b, &got); err != nil {
		t.Fatalf("decode of encoded defaults: %v\n%s", err, b)
	}
	if !reflect.DeepEqual(got, def) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, def)
	}
}

const sample = `
[import]
claude_code_dir = "/data/claude"
exclude = ["-home-me-secret*", "agent-*"]

[redaction]
enable = ["email"]
disable = ["jwt"]
[[redaction.custom]]
name = "ticket"
pattern = 'INTERNAL-(\d+)'
group = 1

[retention]
session_max_age = "180d"

[[retention.policy]]
name = "notes"
channels = ["agent-notes:*"]
max_age = "90d"
max_items = 500
collapse_threshold = 0.95
collapse_min_age = "7d"

[[retention.policy]]
name = "chunks"
types = ["session"]
max_age = "36h"
forget_decisions = true
`

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, config.FileName)
	if err := os.WriteFile(p, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CAIRN_IMPORT_EXCLUDE": "a*, b*", "CAIRN_GC_VACUUM": "false", "CAIRN_EXPORT_DIR": "/out"}
	cfg, err := config.Load(p, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Import.ClaudeCodeDir != "/data/claude" || !reflect.DeepEqual(cfg.Import.Exclude, []string{"a*", "b*"}) || cfg.GC.Vacuum || cfg.Export.Dir != "/out" {
		t.Errorf("loaded %+v", cfg)
	}
	if time.Duration(cfg.Retention.SessionMaxAge) != 180*24*time.Hour {
		t.Errorf("session max age %v", cfg.Retention.SessionMaxAge)
	}
	pols := cfg.Policies()
	if len(pols) != 2 || pols[0].MaxAge != 90*24*time.Hour || pols[0].MaxItems != 500 || pols[0].CollapseThreshold != 0.95 ||
		pols[0].CollapseMinAge != 7*24*time.Hour || pols[1].MaxAge != 36*time.Hour || !pols[1].ForgetDecisions || pols[1].Types[0] != "session" {
		t.Errorf("policies %+v", pols)
	}
	red, err := cfg.Redactor()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := red.Redact("mail a@b.example.org about INTERNAL-42")
	if out != "mail [REDACTED:email] about INTERNAL-[REDACTED:ticket]" {
		t.Errorf("redactor: %q", out)
	}
	// A missing file means defaults (plus environment).
	cfg, err = config.Load(filepath.Join(dir, "nope.toml"), noEnv)
	if err != nil || !reflect.DeepEqual(cfg, config.Default()) {
		t.Errorf("missing file: %v", err)
	}
	opts, err := cfg.ImportOptions("", func(k string) string { return map[string]string{"HOME": "/home/u"}[k] })
	if err != nil || opts.Root != "/home/u/.claude/projects" || opts.Redactor == nil {
		t.Errorf("import options %+v %v", opts, err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"unknown key":       "[retention]\nsesion_max_age = \"1d\"\n",
		"unknown section":   "[nope]\nx = 1\n",
		"bad duration":      "[retention]\nsession_max_age = \"soon\"\n",
		"bad syntax":        "[import\n",
		"bad rule":          "[redaction]\nenable = [\"nope\"]\n",
		"bad glob":          "[import]\nexclude = [\"[x\"]\n",
		"unnamed policy":    "[[retention.policy]]\nmax_age = \"1d\"\n",
		"duplicate policy":  "[[retention.policy]]\nname = \"a\"\n[[retention.policy]]\nname = \"a\"\n",
		"bad threshold":     "[[retention.policy]]\nname = \"a\"\ncollapse_threshold = 2.0\n",
		"bad export format": "[export]\nformats = [\"pdf\"]\n",
		"wrong type":        "[import]\nmax_line_bytes = \"big\"\n",
		"zero limit":        "[server]\nmax_ids = 0\n",
		"budget below body": "[server]\nmax_body_bytes = 2000\nbody_budget_bytes = 1000\n",
		"origin with path":  "[server]\nallowed_origins = [\"http://a.example/app\"]\n",
		"origin no scheme":  "[server]\nallowed_origins = [\"a.example:3000\"]\n",
		"negative gate":     "[recall]\nprompt_min_evidence = -0.1\n",
	}
	for name, body := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".toml")
		os.WriteFile(p, []byte(body), 0o644)
		_, err := config.Load(p, noEnv)
		if !errors.Is(err, config.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	p := filepath.Join(dir, "unknown_key.toml")
	_, err := config.Load(p, noEnv)
	if err == nil || !strings.Contains(err.Error(), "sesion_max_age") || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("unknown key error does not name the key and line: %v", err)
	}
	_, err = config.Load(filepath.Join(dir, "none.toml"), func(k string) string {
		return map[string]string{"CAIRN_GC_VACUUM": "maybe"}[k]
	})
	if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "CAIRN_GC_VACUUM") {
		t.Errorf("bad env: %v", err)
	}
}

func TestEnvVarsAndDurations(t *testing.T) {
	vars := config.EnvVars()
	for _, want := range []string{"CAIRN_IMPORT_CLAUDE_CODE_DIR", "CAIRN_IMPORT_EXCLUDE", "CAIRN_REDACTION_ENABLED", "CAIRN_RETENTION_SESSION_MAX_AGE", "CAIRN_GC_SCHEDULE", "CAIRN_EXPORT_FORMATS"} {
		found := false
		for _, v := range vars {
			found = found || v == want
		}
		if !found {
			t.Errorf("EnvVars lacks %s: %v", want, vars)
		}
	}
	for in, want := range map[string]time.Duration{"": 0, "0": 0, "90d": 90 * 24 * time.Hour, "36h": 36 * time.Hour, "1h30m": 90 * time.Minute} {
		d, err := config.ParseDuration(in)
		if err != nil || time.Duration(d) != want {
			t.Errorf("ParseDuration(%q) = %v, %v", in, d, err)
		}
	}
	for _, bad := range []string{"x", "-1h", "1.5d", "-3d"} {
		if _, err := config.ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
	if s := config.Duration(48 * time.Hour).String(); s != "2d" {
		t.Errorf("String = %q", s)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(sample)
	f.Add("[retention]\nsession_max_age = \"1d\"\n")
	f.Add("[[retention.policy]]\nname = \"a\"\ncollapse_threshold = nan\n")
	f.Fuzz(func(t *testing.T, data string) {
		cfg := config.Default()
		if err := config.Decode([]byte(data), &cfg); err != nil {
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("decode error outside ErrInvalid: %v", err)
			}
			return
		}
		if cfg.Validate() != nil {
			return
		}
		b, err := config.Encode(cfg)
		if err != nil {
			t.Fatalf("encode of a valid config: %v", err)
		}
		again := config.Default()
		if err := config.Decode(b, &again); err != nil {
			t.Fatalf("decode of encoded config: %v\n%s", err, b)
		}
		// nil and empty lists encode alike; compare the encodings.
		b2, err := config.Encode(again)
		if err != nil || string(b2) != string(b) {
			t.Fatalf("round trip changed the config (%v):\n%s\n---\n%s", err, b, b2)
		}
	})
}

// TestLifecycleOptions: gc.schedule and export.* become the scheduled jobs
// of cairn serve, with the export folder defaulting to DIR/export.
func TestLifecycleOptions(t *testing.T) {
	c := config.Default()
	c.GC.Schedule = config.Duration(time.Hour)
	c.GC.Vacuum = false
	c.Retention.SessionMaxAge = config.Duration(48 * time.Hour)
	opts := c.LifecycleOptions("/data")
	if opts.GCEvery != time.Hour || !opts.GC.NoVacuum || opts.GC.SessionMaxAge != 48*time.Hour || opts.ExportEvery != 0 {
		t.Errorf("without continuous export: %+v", opts)
	}
	c.Export.Continuous = true
	opts = c.LifecycleOptions("/data")
	if opts.ExportEvery != time.Minute || opts.Export.OutDir != filepath.Join("/data", "export") {
		t.Errorf("continuous export: every %s into %q, want 1m into /data/export", opts.ExportEvery, opts.Export.OutDir)
	}
	c.Export.Dir = "/elsewhere"
	if got := c.LifecycleOptions("/data").Export.OutDir; got != "/elsewhere" {
		t.Errorf("export.dir = %q, want /elsewhere", got)
	}
}

// TestServerSection: the [server] limits and policy come from the file and
// the environment.
func TestServerSection(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	body := "[server]\nhosts = [\"cairn.lan\"]\nallowed_origins = [\"http://console.lan:3000\"]\nmax_filter_clauses = 64\nread_timeout = \"30s\"\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p, func(k string) string { return map[string]string{"CAIRN_SERVER_MAX_IDS": "7"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Server
	if !reflect.DeepEqual(s.Hosts, []string{"cairn.lan"}) || !reflect.DeepEqual(s.AllowedOrigins, []string{"http://console.lan:3000"}) ||
		s.MaxFilterClauses != 64 || s.MaxIDs != 7 || time.Duration(s.ReadTimeout) != 30*time.Second ||
		s.MaxRequestResults != config.Default().Server.MaxRequestResults {
		t.Errorf("server section: %+v", s)
	}
}

// store is "" or a postgres:// URL, from the file or CAIRN_STORE.
func TestStoreKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, config.FileName)
	for _, tc := range []struct {
		file, env, want string
		ok              bool
	}{
		{"", "", "", true},
		{`store = "postgres://cairn@db:5432/cairn"`, "", "postgres://cairn@db:5432/cairn", true},
		{`store = "postgresql://cairn@db/cairn?sslmode=require"`, "", "postgresql://cairn@db/cairn?sslmode=require", true},
		{`store = "postgres://cairn@db:5432/cairn"`, "postgres://other@db2/x", "postgres://other@db2/x", true},
		{`store = "mysql://db/x"`, "", "", false},
		{`store = "postgres:///no-host"`, "", "", false},
		{`store = "/var/lib/cairn"`, "", "", false},
	} {
		if err := os.WriteFile(path, []byte(tc.file+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		getenv := noEnv
		if tc.env != "" {
			getenv = func(k string) string {
				if k == "CAIRN_STORE" {
					return tc.env
				}
				return ""
			}
		}
		cfg, err := config.Load(path, getenv)
		if tc.ok != (err == nil) || tc.ok && cfg.Store != tc.want {
			t.Errorf("%q (CAIRN_STORE %q): store %q, %v; want %q, ok %v", tc.file, tc.env, cfg.Store, err, tc.want, tc.ok)
		}
		if !tc.ok && !errors.Is(err, config.ErrInvalid) {
			t.Errorf("%q: %v does not wrap ErrInvalid", tc.file, err)
		}
	}
}

// postgres.ef_search: 0 (the default) or 1..1000, from the file or
// CAIRN_POSTGRES_EF_SEARCH; anything else is refused naming the key and
// the rule.
func TestPostgresEfSearch(t *testing.T) {
	path := filepath.Join(t.TempDir(), config.FileName)
	for _, tc := range []struct {
		file, env string
		want      int
		ok        bool
	}{
		{"", "", 0, true},
		{"[postgres]\nef_search = 400", "", 400, true},
		{"[postgres]\nef_search = 400", "1000", 1000, true},
		{"[postgres]\nef_search = 1001", "", 0, false},
		{"[postgres]\nef_search = -1", "", 0, false},
		{"", "lots", 0, false},
		{"", "5000", 0, false},
	} {
		if err := os.WriteFile(path, []byte(tc.file+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		getenv := func(k string) string {
			if k == "CAIRN_POSTGRES_EF_SEARCH" {
				return tc.env
			}
			return ""
		}
		cfg, err := config.Load(path, getenv)
		if tc.ok != (err == nil) || tc.ok && cfg.Postgres.EfSearch != tc.want {
			t.Errorf("%q (env %q): ef_search %d, %v; want %d, ok %v", tc.file, tc.env, cfg.Postgres.EfSearch, err, tc.want, tc.ok)
		}
		if !tc.ok && (!errors.Is(err, config.ErrInvalid) || !strings.Contains(strings.ToLower(err.Error()), "ef_search")) {
			t.Errorf("%q (env %q): %v does not wrap ErrInvalid naming ef_search", tc.file, tc.env, err)
		}
	}
}

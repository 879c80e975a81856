package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/mcpserver"
	"github.com/cairn-dev/cairn/engine/chunk"
	"github.com/cairn-dev/cairn/engine/claudecode"
	"github.com/cairn-dev/cairn/engine/ingest"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/redact"
	"github.com/cairn-dev/cairn/engine/search"
	"github.com/pelletier/go-toml/v2"
)

// FileName is the config file's name inside the data dir.
const FileName = "config.toml"

// ErrInvalid is wrapped by every error about a bad configuration value.
var ErrInvalid = errors.New("config: invalid")

// Duration is a time.Duration written as "36h", "90m" or "90d".
type Duration time.Duration

// ParseDuration parses a Go duration or a whole number of days ("90d").
// "" and "0" are 0.
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return 0, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%w: duration %q: want e.g. 36h, 90m or 90d", ErrInvalid, s)
		}
		return Duration(time.Duration(n) * 24 * time.Hour), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: duration %q: want e.g. 36h, 90m or 90d", ErrInvalid, s)
	}
	return Duration(d), nil
}

// String writes whole days as "Nd", else a Go duration, and 0 as "0".
func (d Duration) String() string {
	td := time.Duration(d)
	switch {
	case td == 0:
		return "0"
	case td%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(td/(24*time.Hour)), 10) + "d"
	}
	return td.String()
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Config is the whole configuration file.
type Config struct {
	Store       string      `toml:"store" comment:"Where messages are kept: \"\" = this data dir (SQLite); postgres://user@host:port/db = a PostgreSQL\ndatabase with pgvector shared by every cairn that names it (the data dir keeps config and models)."`
	Postgres    Postgres    `toml:"postgres" comment:"Searches on a postgres:// store (see store)."`
	Import      Import      `toml:"import" comment:"Importing Claude Code sessions (cairn import claude-code)."`
	Redaction   Redaction   `toml:"redaction" comment:"Redaction of secrets before anything is stored (imports; rules: cairn config show)."`
	Retention   Retention   `toml:"retention" comment:"What cairn gc forgets. Pinned messages (metadata \"pinned\": true) and decision/policy\nmessages are kept forever unless a policy sets forget_pinned / forget_decisions."`
	GC          GC          `toml:"gc" comment:"Garbage collection runs."`
	Export      Export      `toml:"export" comment:"Session exports (cairn export)."`
	Server      Server      `toml:"server" comment:"cairn serve: who may call it, and how much one request may ask for (over a limit: 4xx naming it)."`
	Capture     Capture     `toml:"capture" comment:"Agent hooks that import the session's transcript (installed by cairn setup claude-code).\nOpt-in per trigger; false = the hook does nothing. Exclude and redaction settings apply."`
	Recall      Recall      `toml:"recall" comment:"The hooks that put the project's memory into the agent's context (installed by cairn setup\nclaude-code|codex|gemini): a briefing at session start, and on every prompt the stored messages\nthe prompt's search finds (each once per session)."`
	MCP         MCP         `toml:"mcp" comment:"cairn mcp: the tools it offers (every tool's definition costs context in every session)."`
	Write       Write       `toml:"write" comment:"Writes of messages (every surface)."`
	Breadcrumbs Breadcrumbs `toml:"breadcrumbs" comment:"The git repository this process writes in: notes with breadcrumbs record it and are checked against it\nwherever the check runs; cairn serve and cairn mcp refresh its notes' marks when HEAD moves."`
}

// Write configures writes of messages.
type Write struct {
	NearDuplicateCosine float64 `toml:"near_duplicate_cosine" comment:"A write by the same sender to the same channel within this cosine of an earlier message (0.95 was chosen\non STS-B dev) returns that message's id instead of storing a near copy; 0 = exact duplicates only (the default:\nthe check embeds such a write before it is stored)."`
}

// Postgres configures searches on a PostgreSQL store.
type Postgres struct {
	EfSearch int `toml:"ef_search" comment:"pgvector's hnsw.ef_search for searches by meaning, 1..1000: higher finds more of the true\nnearest neighbours and reads more of the index; at least twice the candidates a search asks for\n(200) is always used. 0 = the default (800)."`
}

// MaxEfSearch is the largest postgres.ef_search (pgvector's own limit).
const MaxEfSearch = 1000

// Breadcrumbs configures breadcrumb checks.
type Breadcrumbs struct {
	Repo string `toml:"repo" comment:"A directory in the repository; \"\" = the repository containing the working directory."`
}

// Server configures `cairn serve`: the Host and Origin policy, request
// limits and connection timeouts. The serve flags of the same names
// override these.
type Server struct {
	Hosts             []string `toml:"hosts" comment:"Host names the server answers to besides IP addresses, localhost and --host (DNS rebinding protection)."`
	AllowedOrigins    []string `toml:"allowed_origins" comment:"Origins (\"http://host:port\") of other sites whose pages may call the APIs; the server's own origin always may."`
	MaxBodyBytes      int      `toml:"max_body_bytes" comment:"Largest request body (413)."`
	BodyBudgetBytes   int      `toml:"body_budget_bytes" comment:"Request body bytes buffered at once across all requests (503 beyond it)."`
	MaxBatch          int      `toml:"max_batch" comment:"Most records in one Chroma add/upsert/update, most query embeddings in one query."`
	MaxResults        int      `toml:"max_results" comment:"Largest n_results / limit."`
	MaxRequestResults int      `toml:"max_request_results" comment:"Most records one request answers: query embeddings x n_results, or a Chroma get."`
	MaxAnswerBytes    int      `toml:"max_answer_bytes" comment:"Largest Chroma get or query answer: the ids, documents, uris and metadata it carries, 16 bytes per embedding number and distance."`
	MaxResultBytes    int      `toml:"max_result_bytes" comment:"Largest cairn API or MCP search or listing result (its JSON): the messages past it are left out whole, and the result says truncated: true with this limit."`
	MaxScanBytes      int      `toml:"max_scan_bytes" comment:"Most document bytes one Chroma where_document filter scans: each clause evaluated counts its document's length."`
	MaxIDs            int      `toml:"max_ids" comment:"Most ids in one Chroma get, query or delete."`
	MaxFilterDepth    int      `toml:"max_filter_depth" comment:"Deepest nesting of a where filter or JSON body."`
	MaxFilterClauses  int      `toml:"max_filter_clauses" comment:"Most clauses in one where or where_document filter ($and/$or included)."`
	MaxFilterValues   int      `toml:"max_filter_values" comment:"Most $in/$nin values in one where filter."`
	ReadHeaderTimeout Duration `toml:"read_header_timeout" comment:"Time to send the request headers."`
	ReadTimeout       Duration `toml:"read_timeout" comment:"Time to send the whole request, body included."`
	WriteTimeout      Duration `toml:"write_timeout" comment:"Time from the end of the headers to the end of the answer."`
	IdleTimeout       Duration `toml:"idle_timeout" comment:"How long an idle keep-alive connection stays open."`
}

// Capture configures which agent hook events import the session.
type Capture struct {
	SessionEnd bool `toml:"session_end" comment:"Import when a Claude Code session ends."`
	PreCompact bool `toml:"pre_compact" comment:"Import before Claude Code compacts the context."`
}

// Recall configures the recall hooks.
type Recall struct {
	SessionStart bool   `toml:"session_start" comment:"false = the session-start hook adds nothing."`
	MaxBytes     int    `toml:"max_bytes" comment:"Upper bound of the session-start briefing's text."`
	MaxItems     int    `toml:"max_items" comment:"Upper bound of the records the briefing lists."`
	Prompt       bool   `toml:"prompt" comment:"false = the per-prompt hook adds nothing."`
	PromptTokens int    `toml:"prompt_tokens" comment:"Upper bound of what one prompt's recall adds, in estimated tokens (4 bytes each)."`
	Stale        string `toml:"stale" comment:"Messages whose breadcrumbs changed or are gone at the repository's HEAD: \"mark\" them, or \"omit\" them."`

	// PromptMinEvidence is ops.PromptRecall.MinEvidence.
	PromptMinEvidence float64 `toml:"prompt_min_evidence" comment:"A prompt's recall adds nothing unless its best result's relevance, times the square of the share of\nthe prompt's first 16 content words the results hold, reaches this (0 = the relevance floor only)."`
}

// Stale settings of Recall.
const (
	StaleMark = "mark"
	StaleOmit = "omit"
)

// MCP configures cairn mcp.
type MCP struct {
	Tools []string `toml:"tools" comment:"Tool sets served: core (store_message, search_messages, get_message, get_notes_channel,\nlist_channels), notes, channels, unread, memory (the memory_* names) or all. --tools overrides it."`
}

// Import configures `cairn import claude-code`.
type Import struct {
	ClaudeCodeDir string   `toml:"claude_code_dir" comment:"Claude Code projects folder; \"\" = $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects."`
	Exclude       []string `toml:"exclude" comment:"Sessions never stored: globs over \"project/file.jsonl\", the project folder name or the session id."`
	MaxLineBytes  int      `toml:"max_line_bytes" comment:"Longer lines are skipped and reported."`
	ChunkTokens   int      `toml:"chunk_tokens" comment:"Searchable chunk size in estimated tokens (see engine/chunk)."`
	ChunkOverlap  int      `toml:"chunk_overlap" comment:"Tokens shared by consecutive chunks."`
	HumanSender   string   `toml:"human_sender" comment:"Sender of the turns a person typed; the agent's side is sender \"claude-code\"."`
}

// Redaction configures the redactor.
type Redaction struct {
	Enabled bool         `toml:"enabled" comment:"false stores text as it is (not recommended)."`
	Enable  []string     `toml:"enable" comment:"Optional built-in rules to turn on: email, card-number, password-assignment, generic-api-key."`
	Disable []string     `toml:"disable" comment:"Built-in rules to turn off by name (gitleaks rule ids such as \"jwt\", or cairn's own: private-key, aws-secret-key, gcp-service-account, openai-key, url-password)."`
	Custom  []CustomRule `toml:"custom" comment:"Extra rules: name, pattern (RE2), group (0 = whole match)."`
}

// CustomRule is a user-defined redaction rule.
type CustomRule struct {
	Name    string `toml:"name"`
	Pattern string `toml:"pattern"`
	Group   int    `toml:"group"`
}

// Retention configures cairn gc.
type Retention struct {
	SessionMaxAge Duration `toml:"session_max_age" comment:"Delete imported sessions whose last record is older than this; \"0\" keeps them."`
	Policies      []Policy `toml:"policy" comment:"Policies, first match wins per message: name, channels (globs), types, max_age, max_items,\nforget_pinned, forget_decisions, keep_types, collapse_threshold, collapse_min_age, collapse_max_age."`
}

// Policy is one retention policy (ops.RetentionPolicy in TOML form).
type Policy struct {
	Name              string   `toml:"name"`
	Channels          []string `toml:"channels"`
	Types             []string `toml:"types"`
	MaxAge            Duration `toml:"max_age"`
	MaxItems          int      `toml:"max_items"`
	ForgetPinned      bool     `toml:"forget_pinned"`
	ForgetDecisions   bool     `toml:"forget_decisions"`
	KeepTypes         []string `toml:"keep_types"`
	CollapseThreshold float64  `toml:"collapse_threshold"`
	CollapseMinAge    Duration `toml:"collapse_min_age"`
	CollapseMaxAge    Duration `toml:"collapse_max_age"`
}

// GC configures garbage collection runs.
type GC struct {
	Schedule Duration `toml:"schedule" comment:"How often cairn serve runs gc; \"0\" = never."`
	Vacuum   bool     `toml:"vacuum" comment:"Reclaim disk space after deleting (VACUUM), so deleted text leaves the disk."`
	MaxBytes int64    `toml:"max_bytes" comment:"Size quota of the data dir in bytes; gc deletes the oldest sessions, then the oldest messages (never pinned ones, decisions, policies) to fit. 0 = none."`
}

// Export configures session exports.
type Export struct {
	Dir        string   `toml:"dir" comment:"Default output folder; \"\" = ./cairn-export."`
	Formats    []string `toml:"formats" comment:"jsonl and/or md."`
	Continuous bool     `toml:"continuous" comment:"Keep dir in step: every write (CLI, cairn serve, cairn mcp) re-exports the channel it changes; cairn serve also re-exports the changed sessions every minute."`
}

// Default returns the built-in defaults.
func Default() Config {
	return Config{
		Import: Import{
			Exclude:      []string{},
			MaxLineBytes: claudecode.DefaultMaxLineBytes,
			ChunkTokens:  chunk.DefaultMaxTokens,
			ChunkOverlap: chunk.DefaultOverlap,
			HumanSender:  ingest.DefaultHumanSender,
		},
		Redaction: Redaction{Enabled: true, Enable: []string{}, Disable: []string{}, Custom: []CustomRule{}},
		Retention: Retention{Policies: []Policy{}},
		GC:        GC{Schedule: Duration(24 * time.Hour), Vacuum: true},
		Export:    Export{Formats: []string{ingest.FormatJSONL, ingest.FormatMarkdown}},
		Server: Server{
			Hosts: []string{}, AllowedOrigins: []string{},
			MaxBodyBytes: 64 << 20, BodyBudgetBytes: 256 << 20,
			MaxBatch: 100_000, MaxResults: 10_000, MaxRequestResults: 100_000, MaxAnswerBytes: 64 << 20, MaxResultBytes: 16 << 20, MaxScanBytes: 256 << 20, MaxIDs: 100_000,
			MaxFilterDepth: 32, MaxFilterClauses: 500, MaxFilterValues: 100_000,
			ReadHeaderTimeout: Duration(10 * time.Second), ReadTimeout: Duration(2 * time.Minute),
			WriteTimeout: Duration(5 * time.Minute), IdleTimeout: Duration(2 * time.Minute),
		},
		Recall: Recall{SessionStart: true, MaxBytes: 4000, MaxItems: 20, Prompt: true, PromptTokens: 1000, PromptMinEvidence: search.DefaultPromptEvidence, Stale: StaleMark},
		MCP:    MCP{Tools: []string{mcpserver.ToolsCore}},
	}
}

// Path returns the config file path: $CAIRN_CONFIG, else DIR/config.toml.
func Path(dataDir string, getenv func(string) string) string {
	if p := getenv("CAIRN_CONFIG"); p != "" {
		return p
	}
	return dataDir + string(os.PathSeparator) + FileName
}

// Load reads the defaults, then the file at path (a missing file is fine),
// then the environment, and validates the result.
func Load(path string, getenv func(string) string) (Config, error) {
	cfg := Default()
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return cfg, fmt.Errorf("config: %w", err)
	default:
		if err := Decode(data, &cfg); err != nil {
			return cfg, fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := applyEnv(&cfg, getenv); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// Decode parses TOML into cfg (on top of what cfg holds), rejecting unknown
// keys with their position.
func Decode(data []byte, cfg *Config) error {
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		var sm *toml.StrictMissingError
		var de *toml.DecodeError
		switch {
		case errors.As(err, &sm):
			var keys []string
			for _, e := range sm.Errors {
				row, col := e.Position()
				keys = append(keys, fmt.Sprintf("%s (line %d, column %d)", strings.Join(e.Key(), "."), row, col))
			}
			return fmt.Errorf("%w: unknown key %s", ErrInvalid, strings.Join(keys, ", "))
		case errors.As(err, &de):
			row, col := de.Position()
			return fmt.Errorf("%w: line %d, column %d: %s", ErrInvalid, row, col, de.Error())
		}
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// Encode writes cfg as documented TOML.
func Encode(cfg Config) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# cairn configuration. Precedence: flags > CAIRN_* environment > this file > defaults.\n")
	b.WriteString("# Durations: 36h, 90m or 90d; \"0\" = off.\n\n")
	enc := toml.NewEncoder(&b).SetIndentTables(false)
	if err := enc.Encode(cfg); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Validate checks every value (redaction rules compile, policies are
// sound, globs parse).
func (c Config) Validate() error {
	if _, err := c.Redactor(); err != nil {
		return fmt.Errorf("%w: redaction: %w", ErrInvalid, err)
	}
	if err := claudecode.ValidateGlobs(c.Import.Exclude); err != nil {
		return fmt.Errorf("%w: import.exclude: %w", ErrInvalid, err)
	}
	if c.Write.NearDuplicateCosine < 0 || c.Write.NearDuplicateCosine > 1 || math.IsNaN(c.Write.NearDuplicateCosine) {
		return fmt.Errorf("%w: write.near_duplicate_cosine: must be from 0 (off) to 1, got %v", ErrInvalid, c.Write.NearDuplicateCosine)
	}
	if c.Import.MaxLineBytes < 0 || c.Import.ChunkTokens < 0 || c.Import.ChunkOverlap < 0 {
		return fmt.Errorf("%w: import: sizes must be >= 0", ErrInvalid)
	}
	if c.Recall.MaxBytes < 0 || c.Recall.MaxItems < 0 || c.Recall.PromptTokens < 0 {
		return fmt.Errorf("%w: recall: max_bytes, max_items and prompt_tokens must be >= 0", ErrInvalid)
	}
	if e := c.Recall.PromptMinEvidence; math.IsNaN(e) || e < 0 || e > 1 {
		return fmt.Errorf("%w: recall.prompt_min_evidence: must be from 0 (off) to 1, got %v", ErrInvalid, e)
	}
	if c.Recall.Stale != StaleMark && c.Recall.Stale != StaleOmit {
		return fmt.Errorf("%w: recall.stale: must be %q or %q, got %q", ErrInvalid, StaleMark, StaleOmit, c.Recall.Stale)
	}
	for _, t := range c.MCP.Tools {
		if !slices.Contains(mcpserver.ToolSets(), t) {
			return fmt.Errorf("%w: mcp.tools: %q is not a tool set (want %s)", ErrInvalid, t, strings.Join(mcpserver.ToolSets(), ", "))
		}
	}
	names := map[string]bool{}
	for i, p := range c.Retention.Policies {
		if p.Name == "" {
			return fmt.Errorf("%w: retention.policy[%d]: name is required", ErrInvalid, i)
		}
		if names[p.Name] {
			return fmt.Errorf("%w: retention.policy %q appears twice", ErrInvalid, p.Name)
		}
		names[p.Name] = true
		if err := p.Engine().Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	if err := validateStore(c.Store); err != nil {
		return err
	}
	if ef := c.Postgres.EfSearch; ef < 0 || ef > MaxEfSearch {
		return fmt.Errorf("%w: postgres.ef_search: must be 1..%d (0 = the default), got %d", ErrInvalid, MaxEfSearch, ef)
	}
	if err := c.Server.validate(); err != nil {
		return fmt.Errorf("%w: server: %w", ErrInvalid, err)
	}
	for _, f := range c.Export.Formats {
		if f != ingest.FormatJSONL && f != ingest.FormatMarkdown {
			return fmt.Errorf("%w: export.formats: %q is not jsonl or md", ErrInvalid, f)
		}
	}
	return nil
}

// validateStore checks store: "" or a postgres:// (postgresql://) URL.
func validateStore(store string) error {
	if store == "" {
		return nil
	}
	u, err := url.Parse(store)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return fmt.Errorf("%w: store: want \"\" (the data dir) or a postgres://user@host:port/database URL", ErrInvalid)
	}
	return nil
}

func (s Server) validate() error {
	for _, v := range []struct {
		key string
		n   int
	}{{"max_body_bytes", s.MaxBodyBytes}, {"body_budget_bytes", s.BodyBudgetBytes}, {"max_batch", s.MaxBatch},
		{"max_results", s.MaxResults}, {"max_request_results", s.MaxRequestResults}, {"max_answer_bytes", s.MaxAnswerBytes}, {"max_result_bytes", s.MaxResultBytes}, {"max_scan_bytes", s.MaxScanBytes}, {"max_ids", s.MaxIDs},
		{"max_filter_depth", s.MaxFilterDepth}, {"max_filter_clauses", s.MaxFilterClauses}, {"max_filter_values", s.MaxFilterValues}} {
		if v.n <= 0 {
			return fmt.Errorf("%s must be positive, got %d", v.key, v.n)
		}
	}
	if s.BodyBudgetBytes < s.MaxBodyBytes {
		return fmt.Errorf("body_budget_bytes (%d) must be at least max_body_bytes (%d)", s.BodyBudgetBytes, s.MaxBodyBytes)
	}
	for _, o := range s.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return fmt.Errorf("allowed_origins: %q is not an origin like http://host:port", o)
		}
	}
	return nil
}

// Redactor builds the configured redactor; nil when redaction is off.
func (c Config) Redactor() (*redact.Redactor, error) {
	if !c.Redaction.Enabled {
		return nil, nil
	}
	opts := redact.Options{Enable: c.Redaction.Enable, Disable: c.Redaction.Disable}
	for _, r := range c.Redaction.Custom {
		opts.Custom = append(opts.Custom, redact.Rule{Name: r.Name, Pattern: r.Pattern, Group: r.Group})
	}
	return redact.New(opts)
}

// Engine converts p to the engine's policy type.
func (p Policy) Engine() ops.RetentionPolicy {
	return ops.RetentionPolicy{
		Name: p.Name, Channels: p.Channels, Types: p.Types,
		MaxAge: time.Duration(p.MaxAge), MaxItems: p.MaxItems,
		ForgetPinned: p.ForgetPinned, ForgetDecisions: p.ForgetDecisions, KeepTypes: p.KeepTypes,
		CollapseThreshold: p.CollapseThreshold,
		CollapseMinAge:    time.Duration(p.CollapseMinAge), CollapseMaxAge: time.Duration(p.CollapseMaxAge),
	}
}

// Policies returns the retention policies in engine form.
func (c Config) Policies() []ops.RetentionPolicy {
	out := make([]ops.RetentionPolicy, len(c.Retention.Policies))
	for i, p := range c.Retention.Policies {
		out[i] = p.Engine()
	}
	return out
}

// GCOptions returns the retention options of gc and retention in engine
// form.
func (c Config) GCOptions() ops.GCOptions {
	return ops.GCOptions{
		Policies:        c.Policies(),
		SessionMaxAge:   time.Duration(c.Retention.SessionMaxAge),
		ExcludeSessions: c.Import.Exclude,
		MaxBytes:        c.GC.MaxBytes,
		NoVacuum:        !c.GC.Vacuum,
	}
}

// LifecycleOptions returns the scheduled jobs of a long-running process on
// the data dir dataDir: GC every gc.schedule and, with export.continuous,
// an export of the changed channels and sessions every minute into
// export.dir (default DIR/export).
func (c Config) LifecycleOptions(dataDir string) ops.LifecycleOptions {
	opts := ops.LifecycleOptions{GCEvery: time.Duration(c.GC.Schedule), GC: c.GCOptions()}
	if ce := c.ContinuousExport(dataDir); ce.OutDir != "" {
		opts.ExportEvery = time.Minute
		opts.Export = ingest.ExportSessionsOptions{Formats: ce.Formats, OutDir: ce.OutDir}
	}
	return opts
}

// ContinuousExport returns the engine's continuous export of the data dir
// dataDir: with export.continuous, every committed write re-exports its
// channel into export.dir (default DIR/export); otherwise off.
func (c Config) ContinuousExport(dataDir string) ops.ContinuousExport {
	if !c.Export.Continuous {
		return ops.ContinuousExport{}
	}
	dir := c.Export.Dir
	if dir == "" {
		dir = filepath.Join(dataDir, "export")
	}
	return ops.ContinuousExport{OutDir: dir, Formats: c.Export.Formats}
}

// ImportOptions returns the session import options for root (the configured
// or default Claude Code folder when root is "").
func (c Config) ImportOptions(root string, getenv func(string) string) (ingest.ImportSessionsOptions, error) {
	red, err := c.Redactor()
	if err != nil {
		return ingest.ImportSessionsOptions{}, err
	}
	if root == "" {
		root = c.Import.ClaudeCodeDir
	}
	if root == "" {
		if root, err = claudecode.DefaultRoot(getenv); err != nil {
			return ingest.ImportSessionsOptions{}, err
		}
	}
	return ingest.ImportSessionsOptions{
		Root: root, Exclude: c.Import.Exclude, Redactor: red, MaxLineBytes: c.Import.MaxLineBytes, HumanSender: c.Import.HumanSender,
		Chunk: chunk.Options{MaxTokens: c.Import.ChunkTokens, Overlap: c.Import.ChunkOverlap},
	}, nil
}

// EnvVars lists the environment variables Load reads, in file order.
func EnvVars() []string {
	var out []string
	walkEnv(reflect.ValueOf(&Config{}).Elem(), func(name string, _ reflect.Value) error {
		out = append(out, name)
		return nil
	})
	return out
}

// applyEnv sets every scalar and string-list key from CAIRN_SECTION_KEY.
func applyEnv(cfg *Config, getenv func(string) string) error {
	return walkEnv(reflect.ValueOf(cfg).Elem(), func(name string, f reflect.Value) error {
		v, ok := lookup(getenv, name)
		if !ok {
			return nil
		}
		bad := func(want string) error {
			return fmt.Errorf("%w: $%s=%q: want %s", ErrInvalid, name, v, want)
		}
		switch f.Interface().(type) {
		case Duration:
			d, err := ParseDuration(v)
			if err != nil {
				return bad("a duration (36h, 90m, 90d)")
			}
			f.Set(reflect.ValueOf(d))
		case string:
			f.SetString(v)
		case bool:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return bad("true or false")
			}
			f.SetBool(b)
		case int:
			n, err := strconv.Atoi(v)
			if err != nil {
				return bad("an integer")
			}
			f.SetInt(int64(n))
		case []string:
			list := []string{}
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					list = append(list, s)
				}
			}
			f.Set(reflect.ValueOf(list))
		}
		return nil
	})
}

func lookup(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}

// walkEnv calls fn for each settable leaf key of the two-level config.
func walkEnv(v reflect.Value, fn func(name string, f reflect.Value) error) error {
	t := v.Type()
	for i := range t.NumField() {
		section := t.Field(i).Tag.Get("toml")
		sv := v.Field(i)
		if sv.Kind() == reflect.String { // a top-level key (store)
			if err := fn("CAIRN_"+strings.ToUpper(section), sv); err != nil {
				return err
			}
			continue
		}
		st := sv.Type()
		for j := range st.NumField() {
			key := st.Field(j).Tag.Get("toml")
			f := sv.Field(j)
			switch f.Interface().(type) {
			case Duration, string, bool, int, []string:
				name := "CAIRN_" + strings.ToUpper(section+"_"+key)
				if err := fn(name, f); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

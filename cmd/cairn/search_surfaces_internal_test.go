package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/cairnapi"
	"github.com/cairn-dev/cairn/cmd/cairn/mcpserver"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/sqlite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// searchCase is one search as each surface spells it: CLI arguments, and
// the JSON the HTTP API takes as its body and the MCP tool as its
// arguments. want is "" for an accepted search, "invalid FIELD" for bad
// input naming FIELD, or the class of another refusal ("no_model").
type searchCase struct {
	name string
	cli  []string
	json string
	want string
}

func searchCases() []searchCase {
	return []searchCase{
		{"plain", []string{"wal"}, `{"query":"wal"}`, ""},
		{"listing", nil, `{}`, ""},
		{"limit 0 is the default", []string{"--limit", "0", "wal"}, `{"query":"wal","limit":0}`, ""},
		{"limit at the bound", []string{"--limit", "1000", "wal"}, `{"query":"wal","limit":1000}`, ""},
		{"limit over the bound", []string{"--limit", "1001", "wal"}, `{"query":"wal","limit":1001}`, "invalid limit"},
		{"negative limit", []string{"--limit", "-1", "wal"}, `{"query":"wal","limit":-1}`, "invalid limit"},
		{"keyword mode", []string{"--mode", "keyword", "wal"}, `{"query":"wal","mode":"keyword"}`, ""},
		{"unknown mode", []string{"--mode", "fuzzy", "wal"}, `{"query":"wal","mode":"fuzzy"}`, "invalid mode"},
		{"unknown fusion", []string{"--fusion", "sum", "wal"}, `{"query":"wal","fusion":"sum"}`, "invalid fusion"},
		{"profile", []string{"--profile", "recent", "wal"}, `{"query":"wal","profile":"recent"}`, ""},
		{"unknown profile", []string{"--profile", "newest", "wal"}, `{"query":"wal","profile":"newest"}`, "invalid profile"},
		{"custom weights", []string{"--w-similarity", "0.7", "--w-recency", "0.3", "--half-life-hours", "72", "wal"},
			`{"query":"wal","weights":{"similarity":0.7,"recency":0.3,"half_life_hours":72}}`, ""},
		{"weights with another profile", []string{"--profile", "recent", "--w-similarity", "1", "wal"},
			`{"query":"wal","profile":"recent","weights":{"similarity":1}}`, "invalid profile"},
		{"negative weight", []string{"--w-similarity", "-1", "wal"}, `{"query":"wal","weights":{"similarity":-1}}`, "invalid weights.similarity"},
		{"all weights zero", []string{"--w-recency", "0", "wal"}, `{"query":"wal","weights":{}}`, "invalid weights"},
		{"half-life over the bound", []string{"--w-similarity", "1", "--half-life-hours", "2e6", "wal"},
			`{"query":"wal","weights":{"similarity":1,"half_life_hours":2e6}}`, "invalid weights.half_life_hours"},
		{"max age", []string{"--max-age-days", "30", "wal"}, `{"query":"wal","max_age_hours":720}`, ""},
		{"plan filters", []string{"--channel", "agent-notes:ann", "--min-confidence", "0.5", "wal"},
			`{"query":"wal","filters":{"channel_ids":["agent-notes:ann"],"min_confidence":0.5}}`, ""},
		{"plan ranking profile", []string{"--profile", "recent", "wal"}, `{"query":"wal","ranking_profile":"recent"}`, ""},
		{"plan custom ranking", []string{"--w-similarity", "0.5", "--w-recency", "0.3", "--w-confidence", "0.2", "--half-life-hours", "168", "wal"},
			`{"query":"wal","ranking_profile":{"similarity_weight":0.5}}`, ""},
		{"age_days", []string{"--where", `{"age_days":{"$lt":7}}`, "wal"}, `{"query":"wal","where":{"age_days":{"$lt":7}}}`, ""},
		{"age_days equality", []string{"--where", `{"age_days":3}`, "wal"}, `{"query":"wal","where":{"age_days":3}}`, "invalid where"},
		{"max age over the bound", []string{"--max-age-days", "50000", "wal"}, `{"query":"wal","max_age_hours":1.2e6}`, "invalid max_age_hours"},
		{"negative max age", []string{"--max-age-days", "-1", "wal"}, `{"query":"wal","max_age_hours":-24}`, "invalid max_age_hours"},
		{"min confidence", []string{"--min-confidence", "2", "wal"}, `{"query":"wal","min_confidence":2}`, "invalid min_confidence"},
		{"min word count", []string{"--min-words", "-1", "wal"}, `{"query":"wal","min_word_count":-1}`, "invalid min_word_count"},
		{"bad channel", []string{"--channel", "bad id", "wal"}, `{"query":"wal","channels":["bad id"]}`, "invalid channel"},
		{"bad channel type", []string{"--channel-type", "inbox", "wal"}, `{"query":"wal","channel_types":["inbox"]}`, "invalid channel_type"},
		{"bad sender", []string{"--exclude-sender", "x y", "wal"}, `{"query":"wal","exclude_sender":"x y"}`, "invalid exclude_sender"},
		{"empty time range", []string{"--since", "2026-01-02", "--until", "2026-01-01", "wal"},
			`{"query":"wal","since":"2026-01-02T00:00:00Z","until":"2026-01-01T00:00:00Z"}`, "invalid since/until"},
		{"where", []string{"--where", `{"word_count":{"$gte":3}}`, "wal"}, `{"query":"wal","where":{"word_count":{"$gte":3}}}`, ""},
		{"bad where", []string{"--where", `{"colour":"red"}`, "wal"}, `{"query":"wal","where":{"colour":"red"}}`, "invalid where"},
		{"unread by", []string{"--unread-by", "ann", "wal"}, `{"query":"wal","unread_by":"ann"}`, ""},
		{"bad unread by", []string{"--unread-by", "a b", "wal"}, `{"query":"wal","unread_by":"a b"}`, "invalid unread_by"},
		{"demote stale", []string{"--demote-stale", "0.5", "wal"}, `{"query":"wal","demote_stale":0.5}`, ""},
		{"demote stale over 1", []string{"--demote-stale", "1.5", "wal"}, `{"query":"wal","demote_stale":1.5}`, "invalid demote_stale"},
		{"breadcrumbs valid", []string{"--breadcrumbs-valid", "wal"}, `{"query":"wal","breadcrumbs_valid":true}`, ""},
		{"semantic without a model", []string{"--mode", "semantic", "wal"}, `{"query":"wal","mode":"semantic"}`, "no_model"},
		{"query at the bound", []string{longQuery(engine.MaxQueryBytes)}, `{"query":"` + longQuery(engine.MaxQueryBytes) + `"}`, ""},
		{"query over the bound", []string{longQuery(engine.MaxQueryBytes + 1)}, `{"query":"` + longQuery(engine.MaxQueryBytes+1) + `"}`, "invalid query"},
	}
}

// longQuery is n bytes of words.
func longQuery(n int) string {
	return strings.Repeat("w", n%4) + strings.Repeat(" wal", n/4)
}

// threeSurfaces opens three stores without a model: one for the CLI (its
// environment), one behind the cairn HTTP API (its URL) and one behind the
// MCP server (a connected client).
func threeSurfaces(t *testing.T) (cliEnv func(string) string, httpURL string, cs *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	// No store has a breadcrumb repository (the CLI's would otherwise be
	// the one containing the working directory).
	cliEnv = envMap(map[string]string{"CAIRN_DATA_DIR": t.TempDir(), "CAIRN_MODEL": "none", "CAIRN_BREADCRUMBS_REPO": t.TempDir()})

	eng, err := sqlite.OpenEngine(ctx, t.TempDir(), engine.Options{}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	api, err := cairnapi.New(cairnapi.Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(api)
	t.Cleanup(func() {
		ts.Close()
		if err := eng.Close(); err != nil {
			t.Error(err)
		}
	})

	mcpDir := t.TempDir()
	srv, err := mcpserver.New(mcpserver.Options{Open: func(ctx context.Context) (*engine.Engine, error) {
		return sqlite.OpenEngine(ctx, mcpDir, engine.Options{}, sqlite.Options{})
	}})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	cs, err = mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return cliEnv, ts.URL, cs
}

// TestSearchSurfacesAgree runs every search of searchCases through the
// CLI, the cairn HTTP API (a real server on 127.0.0.1) and the MCP tool
// (the SDK's client over in-memory transports), each on its own store
// without an embedding model: the three accept and reject the same
// searches and name the same field.
func TestSearchSurfacesAgree(t *testing.T) {
	cliEnv, url, cs := threeSurfaces(t)
	if _, stderr, code := runCLI(t, cliEnv, "", "note", "--agent", "ann", "WAL mode lets readers run"); code != 0 {
		t.Fatalf("note: %s", stderr)
	}
	for _, c := range searchCases() {
		t.Run(c.name, func(t *testing.T) {
			got := map[string]string{
				"cli":  cliOutcome(t, cliEnv, c.cli),
				"http": httpOutcome(t, url, c.json),
				"mcp":  mcpOutcome(t, cs, c.json),
			}
			for surface, g := range got {
				if g != c.want {
					t.Errorf("%s: %q, want %q (all: %v)", surface, g, c.want, got)
				}
			}
		})
	}
}

// invalidField returns "invalid FIELD" from an error text that starts
// with "invalid FIELD: " after prefix, or "".
func invalidField(text, prefix string) string {
	rest, ok := strings.CutPrefix(text, prefix+"invalid ")
	if !ok {
		return ""
	}
	field, _, ok := strings.Cut(rest, ": ")
	if !ok {
		return ""
	}
	return "invalid " + field
}

func cliOutcome(t *testing.T, env func(string) string, args []string) string {
	t.Helper()
	_, stderr, code := runCLI(t, env, "", append([]string{"search", "--json"}, args...)...)
	switch {
	case code == 0:
		return ""
	case code == 2 && strings.Contains(stderr, userMessage(engine.ErrNoModel)):
		return "no_model"
	case code == 2:
		if f := invalidField(stderr, "cairn: "); f != "" {
			// The CLI names the flag the user typed, in its unit.
			if f == "invalid --max-age-days" {
				return "invalid max_age_hours"
			}
			return f
		}
	}
	return "exit " + string(rune('0'+code)) + ": " + stderr
}

func httpOutcome(t *testing.T, url, body string) string {
	t.Helper()
	return httpPostOutcome(t, url+cairnapi.Prefix+"/search", body)
}

// httpPostOutcome posts body to url: "" for 200 or 201, "invalid FIELD"
// for bad input, else the status and body.
func httpPostOutcome(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated {
		return ""
	}
	var e struct{ Error, Message, Field string }
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("error body %s: %v", b, err)
	}
	switch {
	case resp.StatusCode == http.StatusBadRequest && e.Error == "invalid_argument" && invalidField(e.Message, "") == "invalid "+e.Field:
		return "invalid " + e.Field
	case resp.StatusCode == http.StatusConflict && e.Error == "no_model":
		return "no_model"
	}
	return resp.Status + ": " + string(b)
}

func mcpOutcome(t *testing.T, cs *mcp.ClientSession, args string) string {
	t.Helper()
	return mcpToolOutcome(t, cs, "search_messages", args)
}

// mcpToolOutcome calls tool: "" when it succeeds, "invalid FIELD" for bad
// input, else the tool error.
func mcpToolOutcome(t *testing.T, cs *mcp.ClientSession, tool, args string) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("protocol error: %v", err)
	}
	if !res.IsError {
		return ""
	}
	var text string
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if f := invalidField(text, "invalid_argument: "); f != "" {
		return f
	}
	// Bounds stated in the input schema are checked by the SDK first,
	// naming the argument: "validating /properties/limit: minimum: ...".
	if _, rest, ok := strings.Cut(text, "validating /properties/"); ok {
		if field, _, ok := strings.Cut(rest, ":"); ok && !strings.Contains(field, "/") {
			return "invalid " + field
		}
	}
	if strings.HasPrefix(text, "no_model: ") {
		return "no_model"
	}
	return "tool error: " + text
}

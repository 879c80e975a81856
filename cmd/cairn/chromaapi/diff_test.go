package chromaapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/cmd/cairn/chromaapi"
	"github.com/cairn-dev/cairn/internal/racedetector"
)

// httpSide is one server speaking Chroma's API v2: the real Chroma 1.0.0
// server or cairn's handler. The differential test sends both the same
// requests and compares their answers.
type httpSide struct {
	base string // .../api/v2
}

// do sends one request. Chroma's SQLite sometimes answers 500 "database is
// locked" under load (its own background work); such answers are retried.
func (hs *httpSide) do(t *testing.T, method, path string, body any) (int, any) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		st, v := hs.doOnce(t, method, path, body)
		if m, ok := v.(map[string]any); ok && st == 500 && attempt < 10 &&
			strings.Contains(fmt.Sprint(m["message"]), "database is locked") {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		return st, v
	}
}

func (hs *httpSide) doOnce(t *testing.T, method, path string, body any) (int, any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, hs.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if len(raw) > 0 {
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s %s: bad JSON %q", method, path, raw)
		}
	}
	return resp.StatusCode, v
}

const diffCollPath = "/tenants/default_tenant/databases/default_database/collections"

// chromaOp is one step of testdata/chroma_ops.jsonl.
type chromaOp struct {
	Op   string          `json:"op"`
	Coll string          `json:"coll"` // collection name (resolved to each side's UUID for record ops)
	Body json.RawMessage `json:"body"`
	// Divergence documents a known, deliberate difference; the step's status
	// and body are then not compared (Chroma's answer is logged).
	Divergence string `json:"divergence"`
	// MessagePrefix compares only this prefix of the error messages.
	MessagePrefix string `json:"message_prefix"`
}

// TestChromaDifferential replays testdata/filters.txt and
// testdata/chroma_ops.jsonl against the real Chroma 1.0.0 server and
// cairn's handler, both over HTTP, and compares status, error message and
// response of every step.
func TestChromaDifferential(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("differential test against the real Chroma server: left to the run without -race")
	}
	cs := &httpSide{base: chromaURL(t) + "/api/v2"}
	base, _ := cairnServer(t, chromaapi.Options{})
	g := &httpSide{base: base + "/api/v2"}

	t.Run("filters", func(t *testing.T) { diffFilters(t, cs, g) })
	t.Run("ops", func(t *testing.T) { diffOps(t, cs, g) })
}

// TestChromaDifferentialPostgres is TestChromaDifferential with cairn's
// collections in PostgreSQL (package pgcollections).
func TestChromaDifferentialPostgres(t *testing.T) {
	if racedetector.Enabled {
		t.Skip("differential test against the real Chroma server: left to the run without -race")
	}
	cs := &httpSide{base: freshChroma(t) + "/api/v2"}
	g := &httpSide{base: cairnPGServer(t, chromaapi.Options{}) + "/api/v2"}

	t.Run("filters", func(t *testing.T) { diffFilters(t, cs, g) })
	t.Run("ops", func(t *testing.T) { diffOps(t, cs, g) })
}

// diffFilters replays testdata/filters.txt on both sides.
func diffFilters(t *testing.T, cs, g *httpSide) {
	_, cases := readGolden(t, "testdata/filters.txt")
	var chromaID, goID string
	n := 0
	for _, c := range cases {
		switch c.cmd {
		case "records":
			n++
			name := fmt.Sprintf("filters%d", n)
			chromaID = loadRecords(t, cs, name, c.input)
			goID = loadRecords(t, g, name, c.input)
		case "filter":
			render := func(hs *httpSide, id string) string {
				st, ids, _, msg := filterAnswer(t, hs, id, c.args)
				if st != 200 {
					return fmt.Sprintf("error %d %s", st, msg)
				}
				return "ids " + strings.Join(ids, " ")
			}
			want, got := render(cs, chromaID), render(g, goID)
			if strings.Contains(want, "Regex syntax errror") {
				// Declared divergence: the regex parser's detail differs (Rust vs Go).
				want = want[:strings.Index(want, "regex parse error:")]
				if i := strings.Index(got, "regex parse error:"); i >= 0 {
					got = got[:i]
				}
			}
			if got != want {
				t.Errorf("testdata/filters.txt:%d: %s\n   cairn: %s\n  chroma: %s", c.line, c.args, got, want)
			}
		}
	}
}

// diffOps replays testdata/chroma_ops.jsonl on both sides and compares
// status, error message and response for every step.
func diffOps(t *testing.T, cs, g *httpSide) {
	raw, err := os.ReadFile("testdata/chroma_ops.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	chromaIDs := map[string]string{}
	goIDs := map[string]string{}
	for ln, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "//") {
			continue
		}
		var op chromaOp
		if err := json.Unmarshal([]byte(line), &op); err != nil {
			t.Fatalf("line %d: %v", ln+1, err)
		}
		var body any
		if len(op.Body) > 0 {
			d := json.NewDecoder(bytes.NewReader(op.Body))
			d.UseNumber()
			_ = d.Decode(&body)
		}
		method, path := "POST", ""
		cid, gid := chromaIDs[op.Coll], goIDs[op.Coll]
		if cid == "" {
			cid, gid = "00000000-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000000"
		}
		switch op.Op {
		case "create":
			path = diffCollPath
		case "getcoll":
			method, path = "GET", diffCollPath+"/"+op.Coll
		case "deletecoll":
			method, path = "DELETE", diffCollPath+"/"+op.Coll
		case "modify":
			method, path = "PUT", diffCollPath+"/"+cid
		case "count":
			method, path = "GET", diffCollPath+"/"+cid+"/count"
		case "create_tenant":
			path = "/tenants"
		case "get_tenant":
			method, path = "GET", "/tenants/"+op.Coll
		case "create_db":
			path = "/tenants/default_tenant/databases"
		case "get_db":
			method, path = "GET", "/tenants/default_tenant/databases/"+op.Coll
		case "delete_db":
			method, path = "DELETE", "/tenants/default_tenant/databases/"+op.Coll
		default:
			path = diffCollPath + "/" + cid + "/" + op.Op
		}
		cst, cv := cs.do(t, method, path, body)
		gst, gv := g.do(t, method, strings.Replace(path, cid, gid, 1), body)
		if op.Op == "create" && cst == 200 {
			name := cv.(map[string]any)["name"].(string)
			chromaIDs[name] = cv.(map[string]any)["id"].(string)
			if st, v := g.do(t, "GET", diffCollPath+"/"+name, nil); st == 200 {
				goIDs[name] = v.(map[string]any)["id"].(string)
			}
		}
		if op.Op == "modify" && cst == 200 {
			if nn, ok := body.(map[string]any)["new_name"].(string); ok {
				chromaIDs[nn], goIDs[nn] = chromaIDs[op.Coll], goIDs[op.Coll]
			}
		}
		where := fmt.Sprintf("testdata/chroma_ops.jsonl:%d: %s %s %s", ln+1, op.Op, op.Coll, op.Body)
		if op.Divergence != "" {
			t.Logf("%s: declared divergence (%s): chroma %d %v, cairn %d %v", where, op.Divergence, cst, cv, gst, gv)
			continue
		}
		if cst != gst {
			t.Errorf("%s\nstatus: cairn %d %v, chroma %d %v", where, gst, gv, cst, cv)
			continue
		}
		if cst >= 400 {
			if cst == 422 {
				continue // serde's wording; the status is what clients branch on
			}
			cm := fmt.Sprint(cv.(map[string]any)["message"])
			gm := fmt.Sprint(gv.(map[string]any)["message"])
			cm, gm = diffUUID.ReplaceAllString(cm, "<uuid>"), diffUUID.ReplaceAllString(gm, "<uuid>")
			if op.MessagePrefix != "" {
				cm, gm = diffPrefix(cm, len(op.MessagePrefix)), diffPrefix(gm, len(op.MessagePrefix))
			}
			if cm != gm {
				t.Errorf("%s\nmessage: cairn %q\n  chroma %q", where, gm, cm)
			}
			continue
		}
		cn, gn := normalize(op.Op, cv), normalize(op.Op, gv)
		if !diffApproxEqual(cn, gn, false) {
			cb, _ := json.Marshal(cn)
			gb, _ := json.Marshal(gn)
			t.Errorf("%s\n   cairn: %s\n  chroma: %s", where, gb, cb)
		}
	}
}

var diffUUID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func diffPrefix(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// normalize keeps the fields both sides must agree on.
func normalize(op string, v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	switch op {
	case "create", "getcoll":
		cfg := m["configuration_json"].(map[string]any)
		return map[string]any{"name": m["name"], "metadata": m["metadata"], "dimension": m["dimension"],
			"hnsw": cfg["hnsw"]}
	case "query":
		// Ties may come back in any order: sort each inner list by (distance, id).
		return sortQuery(m)
	case "get_db":
		delete(m, "id") // a random UUID on each side
		return m
	}
	return m
}

func sortQuery(m map[string]any) map[string]any {
	ids, _ := m["ids"].([]any)
	for qi := range ids {
		inner := ids[qi].([]any)
		idx := make([]int, len(inner))
		for i := range idx {
			idx[i] = i
		}
		dist := func(i int) float64 {
			if d, ok := m["distances"].([]any); ok {
				f, _ := d[qi].([]any)[i].(json.Number).Float64()
				return math.Round(f*1e4) / 1e4
			}
			return 0
		}
		sort.SliceStable(idx, func(a, b int) bool {
			da, db := dist(idx[a]), dist(idx[b])
			if da != db {
				return da < db
			}
			return inner[idx[a]].(string) < inner[idx[b]].(string)
		})
		for _, f := range []string{"ids", "embeddings", "documents", "uris", "metadatas", "distances"} {
			lists, ok := m[f].([]any)
			if !ok {
				continue
			}
			old := lists[qi].([]any)
			nw := make([]any, len(old))
			for i, j := range idx {
				nw[i] = old[j]
			}
			lists[qi] = nw
		}
	}
	return m
}

// approxEqual compares decoded JSON, numbers within float32 tolerance.
// Inside metadata (strict) numbers must match exactly, so int and float
// stay distinct (both sides write floats with a decimal point).
func diffApproxEqual(a, b any, strict bool) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		if strict {
			return false
		}
		fx, e1 := x.Float64()
		fy, e2 := y.Float64()
		if e1 != nil || e2 != nil {
			return false
		}
		return math.Abs(fx-fy) <= 1e-5*math.Max(1, math.Abs(fx))
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if !diffApproxEqual(v, y[k], strict || k == "metadatas" || k == "metadata") {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !diffApproxEqual(x[i], y[i], strict) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

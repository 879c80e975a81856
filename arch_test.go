package cairn_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pgcollections"
	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
)

const module = "github.com/cairn-dev/cairn"

// layer is one row of the import table in docs/ARCHITECTURE.md ("What each
// package may import"); change both in the commit that changes the layering.
type layer struct {
	// dir is the layer's directory; it covers the package and everything
	// below it unless a more specific layer matches.
	dir string
	// mayImport lists the project layers the layer's packages may import
	// directly (their own layer is always allowed).
	mayImport []string
	// mustNotDepend lists import paths (or path prefixes ending in "/")
	// that must not be in the layer's transitive dependencies; a non-stdlib
	// path also covers its subpackages (a stdlib one, like database/sql,
	// does not cover database/sql/driver).
	mustNotDepend []string
	// mustNotImport lists import paths the layer's packages must not
	// import directly (a store's drivers, for a layer above the store
	// port that still reaches them through engine).
	mustNotImport []string
	// stdlibOnly allows only the standard library plus allowExternal
	// outside the project.
	stdlibOnly    bool
	allowExternal []string
}

var (
	bbolt  = "go.etcd.io/bbolt"
	hugot  = "github.com/knights-analytics/hugot"
	sqlite = "modernc.org/sqlite"
	pgx    = "github.com/jackc/pgx/"
)

// storeDrivers are the drivers only a store imports: the use cases above
// the store port (engine/ingest, engine/ops) reach stored data through
// engine.Store.
var storeDrivers = []string{"database/sql", sqlite, bbolt, pgx}

func layers() []layer {
	return []layer{
		{dir: "index", stdlibOnly: true, allowExternal: []string{"golang.org/x/sys/cpu"}, mustNotDepend: []string{bbolt, "database/sql", hugot}},
		// The keyword rules reach the engine without storage code: fts runs
		// its statements on a Querier it is handed, and fts/ftssql adapts
		// database/sql's to it for the embedded store.
		{dir: "fts", mustNotDepend: []string{bbolt, hugot, sqlite, "database/sql"}},
		{dir: "fts/ftssql", mayImport: []string{"fts"}, mustNotDepend: []string{bbolt, hugot, sqlite}},
		{dir: "embed", mustNotDepend: []string{module + "/engine", module + "/vecstore", module + "/fts", module + "/index"}},
		// The filter language (where/where_document trees, parser, values) is a
		// leaf that vecstore, engine and the adapters share.
		{dir: "vecstore/where", stdlibOnly: true},
		// The Chroma model (types, requests and results, rules, error
		// classes, the Store interface): the standard library and the
		// filter language only, so that the adapter over it and the stores
		// under it share no storage code.
		{dir: "vecstore/chroma", mayImport: []string{"vecstore/where"}, stdlibOnly: true, mustNotDepend: []string{module + "/index"}},
		{dir: "vecstore", mayImport: []string{"index", "vecstore/chroma", "vecstore/where"}, mustNotDepend: []string{"database/sql", module + "/fts", module + "/embed", module + "/engine"}},
		// The pure steps of a search (evidence, calibration, the floor):
		// plain values in and out, below the engine that calls them.
		{dir: "engine/search", mayImport: []string{"fts"}, stdlibOnly: true},
		// The domain and its use cases over the store port: no storage code.
		// The stores are packages below it (engine/sqlite, engine/postgres);
		// vecstore is out of reach (not a may-import, and its index and
		// bbolt are must-nots).
		{dir: "engine", mayImport: []string{"engine/search", "fts", "vecstore/chroma", "vecstore/where"}, mustNotDepend: []string{"net/http", "database/sql", sqlite, bbolt, pgx, module + "/index", module + "/embed", module + "/cmd/", module + "/bench", module + "/engine/sqlite", module + "/engine/postgres", module + "/pgcollections"}},
		// The embedded store (the data dir): engine.Store over SQLite, FTS5
		// and vecstore. It and the PostgreSQL store do not import each other.
		{dir: "engine/sqlite", mayImport: []string{"engine", "engine/search", "fts", "fts/ftssql", "vecstore", "vecstore/chroma", "vecstore/where"}, mustNotDepend: []string{"net/http", pgx, module + "/embed", module + "/cmd/", module + "/bench", module + "/engine/postgres", module + "/pgcollections"}},
		// The use cases over the engine: ingest (message import, export,
		// copy and transfer between stores) and operations (engine/ops,
		// which exports through ingest). They run over the Engine's API and
		// the store port, never a store itself.
		{dir: "engine/ingest", mayImport: []string{"engine", "engine/search", "vecstore/where"}, mustNotImport: storeDrivers,
			mustNotDepend: []string{"net/http", module + "/engine/postgres", module + "/engine/sqlite", module + "/engine/ops", module + "/pgcollections", module + "/cmd/", module + "/bench"}},
		{dir: "engine/ops", mayImport: []string{"engine", "engine/search", "engine/ingest"}, mustNotImport: storeDrivers,
			mustNotDepend: []string{"net/http", module + "/engine/postgres", module + "/engine/sqlite", module + "/pgcollections", module + "/cmd/", module + "/bench"}},
		// The PostgreSQL store beneath the engine (engine.Store).
		{dir: "engine/postgres", mayImport: []string{"engine", "fts", "vecstore/where", "internal/pgvector"}, mustNotDepend: []string{"net/http", sqlite, bbolt, module + "/index", module + "/engine/sqlite", module + "/embed", module + "/cmd/", module + "/bench"}},
		// package main wires the embedder in; its adapter packages below use
		// engine only, except the Chroma API, which sees only the Chroma
		// model (package main hands it a chroma.Store: the engine's one
		// vecstore, or pgcollections) and never the engine or a store.
		{dir: "cmd/cairn", mayImport: []string{"engine", "engine/ingest", "engine/ops", "engine/search", "embed", "engine/sqlite", "engine/postgres", "pgcollections", "vecstore", "vecstore/chroma"}},
		{dir: "cmd/cairn/", mayImport: []string{"engine", "engine/ingest", "engine/ops", "engine/search", "vecstore/where"}, mustNotDepend: []string{module + "/engine/sqlite", module + "/engine/postgres", module + "/pgcollections", module + "/embed"}},
		{dir: "cmd/cairn/chromaapi", mayImport: []string{"vecstore/chroma", "vecstore/where"}, mustNotDepend: []string{module + "/engine", module + "/engine/postgres", module + "/pgcollections", module + "/embed", module + "/index", bbolt}},
		// The JSON shape of a search the cairn API, the MCP tool and the CLI
		// flags share: wire shapes live with the adapters, over the engine.
		{dir: "cmd/cairn/searchwire", mayImport: []string{"engine", "vecstore/where"}, mustNotDepend: []string{module + "/engine/postgres", module + "/pgcollections", module + "/embed"}},
		// HTTP plumbing the two APIs share: the standard library only.
		{dir: "cmd/cairn/httpguard", stdlibOnly: true},
		{dir: "cmd/cairn/reqlog", stdlibOnly: true},
		// Chroma collections in PostgreSQL: the Chroma model over pgx, beside
		// vecstore (neither bbolt nor the HNSW index).
		{dir: "pgcollections", mayImport: []string{"vecstore/chroma", "vecstore/where", "internal/pgvector"}, mustNotDepend: []string{sqlite, bbolt, module + "/index", module + "/fts", module + "/embed", module + "/engine", module + "/cmd/", module + "/bench"}},
		// Agent setup edits the agents' own files and knows nothing of the
		// store.
		{dir: "cmd/cairn/agentsetup"},
		// The web console is static files; it reaches the engine only
		// through cairn's HTTP API, from the browser.
		{dir: "cmd/cairn/console", stdlibOnly: true},
		// pgvector's text form, which both PostgreSQL stores write and read.
		{dir: "internal/pgvector", stdlibOnly: true},
		// Test support: finds bytes in a directory's files; tests only.
		{dir: "internal/rawscan", stdlibOnly: true},
		// Test support: whether the race detector is on; tests only.
		{dir: "internal/racedetector", stdlibOnly: true},
		// make test's go test -json printer and summary; the Makefile only.
		{dir: "internal/testsummary", stdlibOnly: true},
		// Test support: an engine on a test's data dir with a fake clock,
		// checked at cleanup, and the helpers the engine's tests share;
		// tests only (no layer may import it).
		{dir: "internal/enginetest", mayImport: []string{"engine", "engine/ops", "engine/sqlite"}},
		// Test support: starts real PostgreSQL servers; tests and benches only.
		{dir: "internal/pgtest", stdlibOnly: true, allowExternal: []string{"github.com/jackc/pgx/v5"}},
		{dir: "bench", mayImport: []string{"engine", "engine/ingest", "engine/ops", "engine/search", "vecstore", "vecstore/chroma", "vecstore/where", "index", "fts", "embed", "engine/sqlite", "engine/postgres", "internal/pgtest"}},
	}
}

// Both stores implement the Chroma model in full: a store that lacks an
// operation of chroma.Store does not compile, and chromaapi serves either
// through it (each package also asserts its own).
var (
	_ chroma.Store = (*vecstore.Store)(nil)
	_ chroma.Store = (*pgcollections.Store)(nil)
)

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func TestImportDirection(t *testing.T) {
	// go test puts its own go command first in PATH.
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command in PATH: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-e", "-json=ImportPath,Imports,Deps", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// TestEngineHasNoWireShapes: wire shapes live with the adapters
// (cmd/cairn/searchwire, mcpserver): no struct of engine or its
// subpackages carries jsonschema tags (what an MCP agent reads), and
// package engine has no SearchSpec.
func TestEngineHasNoWireShapes(t *testing.T) {
	for _, v := range wireShapes(t, "engine") {
		t.Error(v)
	}
}

// TestWireShapesCatchesViolations proves the check is not vacuous.
func TestWireShapesCatchesViolations(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "engine")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package engine\n\ntype SearchSpec struct{}\n\ntype hit struct {\n\tIn struct {\n\t\tID int `json:\"id\" jsonschema:\"the id\"`\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "spec.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := wireShapes(t, dir); len(got) != 2 {
		t.Fatalf("found %d violations, want 2:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// wireShapes lists the wire shapes in the non-test Go files under root: a
// struct field with a jsonschema tag anywhere, a type SearchSpec in root's
// own package.
func wireShapes(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeSpec:
				if n.Name.Name == "SearchSpec" && filepath.Dir(path) == root {
					out = append(out, path+": type SearchSpec is a wire shape: it lives in cmd/cairn/searchwire")
				}
			case *ast.Field:
				if n.Tag == nil {
					break
				}
				tag, err := strconv.Unquote(n.Tag.Value)
				if _, ok := reflect.StructTag(tag).Lookup("jsonschema"); ok || err != nil {
					out = append(out, path+": a jsonschema tag ("+n.Tag.Value+"): wire shapes live with the adapters")
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportDirectionCatchesViolations proves the checker is not vacuous.
func TestImportDirectionCatchesViolations(t *testing.T) {
	bad := []pkg{
		{ImportPath: module + "/index", Imports: []string{"go.etcd.io/bbolt"}, Deps: []string{"go.etcd.io/bbolt"}},
		{ImportPath: module + "/fts", Imports: []string{module + "/index"}, Deps: []string{module + "/index"}},
		{ImportPath: module + "/engine", Imports: []string{module + "/embed"}, Deps: []string{module + "/embed", "net/http"}},
		{ImportPath: module + "/cmd/cairn/mcpserver", Imports: []string{module + "/vecstore"}, Deps: []string{module + "/vecstore"}},
		{ImportPath: module + "/cmd/cairn/chromaapi", Imports: []string{module + "/index"}, Deps: []string{module + "/index"}},
		{ImportPath: module + "/cmd/cairn", Imports: []string{module + "/fts", module + "/engine", module + "/vecstore"}},
		{ImportPath: module + "/vecstore", Imports: []string{module + "/bench"}},
		{ImportPath: module + "/vecstore/where", Imports: []string{module + "/vecstore", "go.etcd.io/bbolt"}},
		{ImportPath: module + "/cmd/cairn/agentsetup", Imports: []string{module + "/engine"}},
		{ImportPath: module + "/cmd/cairn/chromaapi", Imports: []string{module + "/engine"}, Deps: []string{module + "/engine"}},
		{ImportPath: module + "/cmd/cairn/mcpserver", Imports: []string{module + "/engine"}, Deps: []string{module + "/engine", module + "/engine/postgres"}},
		{ImportPath: module + "/cmd/cairn/httpguard", Imports: []string{"github.com/google/uuid"}},
		{ImportPath: module + "/cmd/cairn/chromaapi", Imports: []string{module + "/vecstore"}, Deps: []string{module + "/vecstore", module + "/index", "go.etcd.io/bbolt"}},
		{ImportPath: module + "/vecstore/chroma", Imports: []string{module + "/index", "github.com/google/uuid"}, Deps: []string{module + "/index"}},
		{ImportPath: module + "/pgcollections", Imports: []string{module + "/vecstore"}, Deps: []string{module + "/vecstore", "go.etcd.io/bbolt"}},
		{ImportPath: module + "/engine", Imports: []string{module + "/engine/postgres"}, Deps: []string{module + "/engine/postgres"}},
		{ImportPath: module + "/engine/ops", Imports: []string{"database/sql", module + "/engine"}, Deps: []string{"database/sql"}},
		{ImportPath: module + "/engine", Imports: []string{module + "/engine/ops"}},
		{ImportPath: module + "/engine/ingest", Imports: []string{module + "/engine/ops"}, Deps: []string{module + "/engine/ops"}},
		{ImportPath: module + "/engine", Imports: []string{module + "/vecstore"}, Deps: []string{module + "/vecstore", module + "/index", "go.etcd.io/bbolt"}},
		{ImportPath: module + "/engine/postgres", Imports: []string{module + "/engine/sqlite"}, Deps: []string{module + "/engine/sqlite", "modernc.org/sqlite"}},
		{ImportPath: module + "/engine/sqlite", Imports: []string{module + "/engine/postgres"}, Deps: []string{module + "/engine/postgres", "github.com/jackc/pgx/v5"}},
	}
	got := violations(bad)
	if len(got) < 41 {
		t.Fatalf("found %d violations, want at least 41:\n%s", len(got), strings.Join(got, "\n"))
	}
	good := []pkg{
		{ImportPath: module + "/index", Imports: []string{"golang.org/x/sys/cpu", "math"}, Deps: []string{"golang.org/x/sys/cpu", "math"}},
		{ImportPath: module + "/engine/redact", Imports: []string{module + "/engine", module + "/fts"}},
		{ImportPath: module + "/cmd/cairn", Imports: []string{module + "/engine", module + "/embed", module + "/cmd/cairn/mcpserver"}, Deps: []string{module + "/fts"}},
		{ImportPath: module + "/cmd/cairn/chromaapi", Imports: []string{module + "/cmd/cairn/httpguard", module + "/vecstore/chroma", module + "/vecstore/where"}},
		{ImportPath: module + "/vecstore/chroma", Imports: []string{module + "/vecstore/where", "context"}},
		{ImportPath: module + "/pgcollections", Imports: []string{module + "/vecstore/chroma", "github.com/jackc/pgx/v5"}},
		{ImportPath: module + "/cmd/cairn", Imports: []string{module + "/vecstore/chroma", module + "/pgcollections", module + "/cmd/cairn/chromaapi"}},
		{ImportPath: module + "/cmd/cairn/cairnapi", Imports: []string{module + "/engine", module + "/vecstore/where"}},
		{ImportPath: module + "/engine", Imports: []string{module + "/vecstore/chroma", module + "/vecstore/where", module + "/fts"}},
		{ImportPath: module + "/engine/sqlite", Imports: []string{module + "/engine", module + "/vecstore", module + "/fts", "modernc.org/sqlite"}, Deps: []string{module + "/index", "go.etcd.io/bbolt"}},
		{ImportPath: module + "/engine/postgres", Imports: []string{module + "/engine", module + "/fts", module + "/vecstore/where", "github.com/jackc/pgx/v5"}},
		{ImportPath: module + "/vecstore", Imports: []string{module + "/vecstore/chroma", module + "/vecstore/where", module + "/index"}},
	}
	if got := violations(good); len(got) > 0 {
		t.Fatalf("false positives:\n%s", strings.Join(got, "\n"))
	}
}

// layerOf returns the most specific layer covering the package path rel
// (relative to the module).
func layerOf(rel string) (layer, bool) {
	var best layer
	found := false
	for _, l := range layers() {
		match := false
		if strings.HasSuffix(l.dir, "/") {
			match = strings.HasPrefix(rel, l.dir)
		} else {
			match = rel == l.dir || strings.HasPrefix(rel, l.dir+"/")
		}
		if match && (!found || len(l.dir) > len(best.dir)) {
			best, found = l, true
		}
	}
	return best, found
}

func violations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			continue
		}
		l, ok := layerOf(rel)
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			for _, bad := range l.mustNotImport {
				if imp == bad || strings.HasSuffix(bad, "/") && strings.HasPrefix(imp, bad) || !isStdlib(bad) && strings.HasPrefix(imp, bad+"/") {
					out = append(out, p.ImportPath+" imports "+imp+": "+l.dir+" must not import "+strings.TrimSuffix(bad, "/"))
				}
			}
			irel, isProject := strings.CutPrefix(imp, module+"/")
			if !isProject {
				if l.stdlibOnly && !isStdlib(imp) && !contains(l.allowExternal, imp) {
					out = append(out, p.ImportPath+" imports "+imp+": only the standard library is allowed")
				}
				continue
			}
			if (irel == "bench" || strings.HasPrefix(irel, "bench/")) && !(rel == "bench" || strings.HasPrefix(rel, "bench/")) ||
				strings.HasPrefix(irel, "cmd/") && !strings.HasPrefix(rel, "cmd/") {
				out = append(out, p.ImportPath+" imports "+imp+": nothing imports bench or cmd")
				continue
			}
			target, ok := layerOf(irel)
			if !ok || sameLayer(l, target) {
				continue
			}
			if !allowed(l, target) {
				out = append(out, p.ImportPath+" imports "+imp+": "+l.dir+" may import only "+strings.Join(l.mayImport, ", "))
			}
		}
		for _, d := range p.Deps {
			for _, bad := range l.mustNotDepend {
				if d == bad || strings.HasSuffix(bad, "/") && strings.HasPrefix(d, bad) || !isStdlib(bad) && strings.HasPrefix(d, bad+"/") {
					out = append(out, p.ImportPath+" depends on "+d+": "+l.dir+" must not import "+strings.TrimSuffix(bad, "/"))
				}
			}
		}
	}
	return out
}

func sameLayer(a, b layer) bool {
	return strings.TrimSuffix(a.dir, "/") == strings.TrimSuffix(b.dir, "/") || a.dir == b.dir
}

func allowed(from, to layer) bool {
	for _, m := range from.mayImport {
		if m == to.dir {
			return true
		}
	}
	// cmd/cairn and its adapters may use each other (main wires adapters).
	return strings.HasPrefix(from.dir, "cmd/cairn") && strings.HasPrefix(to.dir, "cmd/cairn")
}

func isStdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

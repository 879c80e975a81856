package chromaapi_test

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/cmd/cairn/chromaapi"
	"github.com/cairn-dev/cairn/vecstore/where"
)

var flagRewrite = flag.Bool("rewrite", false, "rewrite testdata/filters.txt from this handler's answers")

// goldenCase is one block of a data-driven file:
//
//	command args
//	[input lines]
//	----
//	expected output lines
//	(blank line)
type goldenCase struct {
	line     int
	cmd      string
	args     string
	input    []string
	expected []string
}

func readGolden(t *testing.T, path string) ([]string, []goldenCase) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var header []string
	var cases []goldenCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	ln := 0
	var cur *goldenCase
	state := 0 // 0 between cases, 1 input, 2 expected
	for sc.Scan() {
		ln++
		l := sc.Text()
		switch state {
		case 0:
			if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
				if len(cases) == 0 {
					header = append(header, l)
				}
				continue
			}
			cmd, args, _ := strings.Cut(l, " ")
			cases = append(cases, goldenCase{line: ln, cmd: cmd, args: args})
			cur = &cases[len(cases)-1]
			state = 1
		case 1:
			if l == "----" {
				state = 2
				continue
			}
			cur.input = append(cur.input, l)
		case 2:
			if l == "" {
				state = 0
				continue
			}
			cur.expected = append(cur.expected, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return header, cases
}

func writeGolden(t *testing.T, path string, header []string, cases []goldenCase) {
	t.Helper()
	var b strings.Builder
	for _, h := range header {
		b.WriteString(h + "\n")
	}
	for _, c := range cases {
		b.WriteString(c.cmd)
		if c.args != "" {
			b.WriteString(" " + c.args)
		}
		b.WriteString("\n")
		for _, l := range c.input {
			b.WriteString(l + "\n")
		}
		b.WriteString("----\n")
		for _, l := range c.expected {
			b.WriteString(l + "\n")
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// loadRecords creates collection name on hs and adds the records of a
// "records" block (one JSON object a line: id, embedding, metadata,
// document, uri; the embedding defaults to [i, 1]). Numbers keep their
// literal, so 2 and 2.0 stay an int and a float.
func loadRecords(t *testing.T, hs *httpSide, name string, lines []string) string {
	t.Helper()
	st, v := hs.do(t, "POST", diffCollPath, map[string]any{"name": name})
	if st != 200 {
		t.Fatalf("create %s: %d %v", name, st, v)
	}
	id := v.(map[string]any)["id"].(string)
	ids, embs, docs, uris, mds := []any{}, []any{}, []any{}, []any{}, []any{}
	for i, l := range lines {
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber()
		var r map[string]any
		if err := d.Decode(&r); err != nil {
			t.Fatalf("record %q: %v", l, err)
		}
		emb := r["embedding"]
		if emb == nil {
			emb = []float32{float32(i), 1}
		}
		ids, embs = append(ids, r["id"]), append(embs, emb)
		docs, uris, mds = append(docs, r["document"]), append(uris, r["uri"]), append(mds, r["metadata"])
	}
	body := map[string]any{"ids": ids, "embeddings": embs, "documents": docs, "uris": uris, "metadatas": mds}
	if st, v := hs.do(t, "POST", diffCollPath+"/"+id+"/add", body); st != 201 {
		t.Fatalf("add to %s: %d %v", name, st, v)
	}
	return id
}

// filterAnswer runs the filter of a get body (the argument of a "filter"
// command) on collection id of hs: the matching ids in insertion order,
// or the error status, name and message.
func filterAnswer(t *testing.T, hs *httpSide, id, args string) (status int, ids []string, name, message string) {
	t.Helper()
	var fb map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &fb); err != nil {
		t.Fatalf("bad test input %s: %v", args, err)
	}
	fb["include"] = json.RawMessage("[]")
	st, v := hs.do(t, "POST", diffCollPath+"/"+id+"/get", fb)
	m, _ := v.(map[string]any)
	if st != 200 {
		return st, nil, fmt.Sprint(m["error"]), fmt.Sprint(m["message"])
	}
	ids = []string{}
	for _, x := range m["ids"].([]any) {
		ids = append(ids, x.(string))
	}
	return st, ids, "", ""
}

// TestFiltersGolden runs testdata/filters.txt through the handler:
// "records" blocks load a fresh collection, "filter" blocks evaluate a get
// body's where/where_document ("ids ..." or "error <name> <message>"),
// "parse" and "parse-doc" print the canonical form of a clause. The same
// file drives the differential test against the real Chroma server, which
// is where the expected outputs were checked.
func TestFiltersGolden(t *testing.T) {
	path := "testdata/filters.txt"
	header, cases := readGolden(t, path)
	base, _ := cairnServer(t, chromaapi.Options{})
	hs := &httpSide{base: base + "/api/v2"}
	var collID string
	n := 0
	for i := range cases {
		c := &cases[i]
		var got []string
		switch c.cmd {
		case "records":
			n++
			collID = loadRecords(t, hs, fmt.Sprintf("golden%d", n), c.input)
			got = []string{"ok"}
		case "filter":
			st, ids, name, msg := filterAnswer(t, hs, collID, c.args)
			if st == 200 {
				got = []string{"ids " + strings.Join(ids, " ")}
			} else {
				got = []string{fmt.Sprintf("error %s %s", name, strings.ReplaceAll(msg, "\n", `\n`))}
			}
		case "parse":
			w, err := where.Parse([]byte(c.args))
			if err != nil {
				got = []string{"error " + err.Error()}
			} else {
				got = []string{w.String()}
			}
		case "parse-doc":
			w, err := where.ParseDocument([]byte(c.args))
			if err != nil {
				got = []string{"error " + err.Error()}
			} else {
				got = []string{w.String()}
			}
		default:
			t.Fatalf("line %d: unknown command %q", c.line, c.cmd)
		}
		if *flagRewrite {
			c.expected = got
			continue
		}
		if strings.Join(got, "\n") != strings.Join(c.expected, "\n") {
			t.Errorf("%s:%d: %s %s\n got: %s\nwant: %s", path, c.line, c.cmd, c.args,
				strings.Join(got, "\n"), strings.Join(c.expected, "\n"))
		}
	}
	if *flagRewrite {
		writeGolden(t, path, header, cases)
	}
}

package vecstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/vecstore"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files under testdata/")

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

// errorLine renders an error as "error <class> <message>".
func errorLine(err error) string {
	var e *vecstore.Error
	if !errors.As(err, &e) {
		return "error unclassified " + err.Error()
	}
	return fmt.Sprintf("error %s %s", className(e.Class), strings.ReplaceAll(e.Message, "\n", `\n`))
}

func className(c error) string {
	switch c {
	case vecstore.ErrInvalid, vecstore.ErrDimensionMismatch, vecstore.ErrEmbedderMismatch:
		return "InvalidArgumentError"
	case vecstore.ErrUnprocessable:
		return "Unprocessable"
	case vecstore.ErrNotFound:
		return "NotFoundError"
	case vecstore.ErrExists:
		return "Exists"
	case vecstore.ErrInternal:
		return "InternalError"
	}
	return c.Error()
}

// goldenRecord is one line of a "records" block: {"id","embedding","metadata","document","uri"}.
type goldenRecord struct {
	ID        string            `json:"id"`
	Embedding []float32         `json:"embedding"`
	Metadata  vecstore.Metadata `json:"metadata"`
	Document  *string           `json:"document"`
	URI       *string           `json:"uri"`
}

func parseRecords(t *testing.T, lines []string) []goldenRecord {
	t.Helper()
	var out []goldenRecord
	for _, l := range lines {
		var r goldenRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("record %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

func addRecords(ctx context.Context, s *vecstore.Store, id string, recs []goldenRecord) error {
	req := vecstore.AddRequest{}
	for i, r := range recs {
		req.IDs = append(req.IDs, r.ID)
		emb := r.Embedding
		if emb == nil {
			emb = []float32{float32(i), 1}
		}
		req.Embeddings = append(req.Embeddings, emb)
		req.Documents = append(req.Documents, r.Document)
		req.URIs = append(req.URIs, r.URI)
		req.Metadatas = append(req.Metadatas, r.Metadata)
	}
	return s.Add(ctx, id, req)
}

// filterBody is the JSON argument of the "filter" command: Chroma's get body.
type filterBody struct {
	Where         json.RawMessage `json:"where"`
	WhereDocument json.RawMessage `json:"where_document"`
}

// runFilter parses and evaluates a filter body through the public API and
// renders the matching ids (insertion order) or the error.
func runFilter(ctx context.Context, s *vecstore.Store, collID, body string) string {
	var fb filterBody
	if err := json.Unmarshal([]byte(body), &fb); err != nil {
		return "bad test input: " + err.Error()
	}
	w, err := vecstore.ParseWhere(fb.Where)
	if err != nil {
		return errorLine(err)
	}
	wd, err := vecstore.ParseWhereDocument(fb.WhereDocument)
	if err != nil {
		return errorLine(err)
	}
	res, err := s.Get(ctx, collID, vecstore.GetRequest{Where: w, WhereDocument: wd, Include: []vecstore.Include{}})
	if err != nil {
		return errorLine(err)
	}
	return "ids " + strings.Join(res.IDs, " ")
}

// TestFiltersGolden runs testdata/filters.txt: "records" blocks load a fresh
// collection, "filter" blocks evaluate a get body's where/where_document.
// The same file drives the differential test against the real Chroma
// server, which is where the expected outputs were checked.
func TestFiltersGolden(t *testing.T) {
	ctx := context.Background()
	path := "testdata/filters.txt"
	header, cases := readGolden(t, path)
	s := openStore(t, t.TempDir())
	var collID string
	n := 0
	for i := range cases {
		c := &cases[i]
		var got []string
		switch c.cmd {
		case "records":
			n++
			col, err := s.CreateCollection(ctx, vecstore.CreateCollectionRequest{Name: fmt.Sprintf("golden%d", n)})
			if err != nil {
				t.Fatal(err)
			}
			collID = col.ID
			if err := addRecords(ctx, s, collID, parseRecords(t, c.input)); err != nil {
				t.Fatalf("line %d: %v", c.line, err)
			}
			got = []string{"ok"}
		case "filter":
			got = []string{runFilter(ctx, s, collID, c.args)}
		case "parse":
			w, err := vecstore.ParseWhere([]byte(c.args))
			if err != nil {
				got = []string{errorLine(err)}
			} else {
				got = []string{w.String()}
			}
		case "parse-doc":
			w, err := vecstore.ParseWhereDocument([]byte(c.args))
			if err != nil {
				got = []string{errorLine(err)}
			} else {
				got = []string{w.String()}
			}
		default:
			t.Fatalf("line %d: unknown command %q", c.line, c.cmd)
		}
		if *rewrite {
			c.expected = got
			continue
		}
		if strings.Join(got, "\n") != strings.Join(c.expected, "\n") {
			t.Errorf("%s:%d: %s %s\n got: %s\nwant: %s", path, c.line, c.cmd, c.args,
				strings.Join(got, "\n"), strings.Join(c.expected, "\n"))
		}
	}
	if *rewrite {
		writeGolden(t, path, header, cases)
	}
}

package fts

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// devTexts returns the dev datasets' texts (Cranfield and CoSQA), or nil
// when they are not on this machine.
func devTexts(t testing.TB) []string {
	var out []string
	for _, p := range []string{"cranfield/corpus.jsonl", "cosqa/dev/corpus.jsonl", "cranfield/queries.jsonl", "cosqa/dev/queries.jsonl"} {
		f, err := os.Open(filepath.Join("..", "..", "shared", "datasets", p))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<22)
		for sc.Scan() {
			var d struct{ Title, Text string }
			if json.Unmarshal(sc.Bytes(), &d) == nil {
				out = append(out, d.Title+"\n"+d.Text)
			}
		}
		f.Close()
	}
	return out
}

// TestTokenizeMatchesFTS5 compares the Go tokenizer and stemmer with FTS5's
// 'porter unicode61' token by token (fts5vocab 'instance') on a large text
// sample: the dev datasets when present, plus words that exercise every
// stemmer rule and some other scripts.
func TestTokenizeMatchesFTS5(t *testing.T) {
	texts := append(devTexts(t), stemmerSample...)
	if testing.Short() && len(texts) > 2000 {
		texts = texts[:2000]
	}
	ctx := context.Background()
	d, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "tok.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.SetMaxOpenConns(1)
	for _, s := range []string{
		"CREATE VIRTUAL TABLE f USING fts5(x, tokenize='porter unicode61')",
		"CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')",
	} {
		if _, err := d.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	tx, _ := d.BeginTx(ctx, nil)
	for i, s := range texts {
		if _, err := tx.ExecContext(ctx, "INSERT INTO f(rowid, x) VALUES (?, ?)", i+1, s); err != nil {
			t.Fatal(err)
		}
	}
	tx.Commit()
	want := make([][]string, len(texts))
	rows, err := d.QueryContext(ctx, "SELECT term, doc, offset FROM v")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var term string
		var doc, off int
		rows.Scan(&term, &doc, &off)
		w := want[doc-1]
		for len(w) <= off {
			w = append(w, "")
		}
		w[off] = term
		want[doc-1] = w
	}
	rows.Close()
	bad := 0
	var sbuf []byte
	for i, s := range texts {
		var got []string
		tokenize(s, nil, func(tok []byte, _, _ int) {
			sbuf = porterStem(tok, sbuf)
			got = append(got, string(sbuf))
		})
		if len(got) != len(want[i]) {
			t.Errorf("text %d %.80q: %d tokens, FTS5 %d", i, s, len(got), len(want[i]))
			bad++
		} else {
			for j := range got {
				// Non-ASCII tokens only need the same boundaries (the index
				// never ranks them; unicode61 also strips diacritics).
				if got[j] != want[i][j] && (isASCII(got[j]) || isASCII(want[i][j])) {
					t.Errorf("text %d token %d: got %q, FTS5 %q (text %.60q)", i, j, got[j], want[i][j], s)
					bad++
					break
				}
			}
		}
		if bad > 20 {
			t.Fatal("too many differences")
		}
	}
	t.Logf("%d texts compared", len(texts))
}

var stemmerSample = []string{
	"caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled sized hopping tanned falling hissing fizzed failing filing happy sky",
	"relational conditional rational valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization predication operator feudalism decisiveness hopefulness callousness formaliti sensitiviti sensibiliti",
	"triplicate formative formalize electriciti electrical hopeful goodness revival allowance inference airliner gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou communism activate angulariti homologous effective bowdlerize",
	"probate rate cease controll roll generalizations oscillators generously apology analogies biology logi archaeology",
	"yes eyes says yyy ayyy ied ies sses ss s es ing ed eed a an the", "running runner runs ran easily fairly eating agreement",
	"Straße café naïve résumé ǅemal x²y Ωmega ΣΊΣΥΦΟΣ 東京タワー русский язык مرحبا", "don't it's O'Reilly e-mail user@example.com 3.14 1,000 #tag snake_case camelCase",
	"emoji 🚀 rocket ❤️ heart a\u0301b x\u20ddy", "wikipedia's sentences—with dashes… and “quotes”",
}

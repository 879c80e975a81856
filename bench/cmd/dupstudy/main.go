// Command dupstudy chooses the cosine at which a write counts as a
// near-duplicate of an earlier message (engine.DefaultNearDuplicateCosine):
// it embeds both sentences of every STS-B dev pair with the built-in model
// and prints, for each candidate threshold, the share of pairs caught by
// human score band. A good threshold catches the paraphrases (score >=
// 4.8) and few pairs below 4 (related but saying something else). A pair
// the engine's other rules rule out (digits, word overlap) is never caught.
//
//	go run ./bench/cmd/dupstudy -pairs ../shared/datasets/stsb/dev/pairs.tsv
//	go run ./bench/cmd/dupstudy -writes 500   # what the check costs a write
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/embed/builtin"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

type pair struct {
	a, b  string
	score float64
}

// check is one pair's cosine and whether the engine's other rules let it
// be a near-duplicate: the same words with digits (engine.DigitWords) and
// half the shorter one's terms in the other (engine.WordOverlap).
type check struct {
	cos      float64
	eligible bool
}

// band is a range of human scores: lo <= score < hi.
type band struct {
	Name   string  `json:"band"`
	lo, hi float64 // the band's bounds
	Pairs  int     `json:"pairs"`
	cos    []check
}

type row struct {
	Cosine float64            `json:"cosine"`
	Caught map[string]float64 `json:"caught"` // share of each band's pairs at or above the cosine
}

func main() {
	path := flag.String("pairs", "../shared/datasets/stsb/dev/pairs.tsv", "STS-B dev pairs (TSV: sentence1, sentence2, score)")
	asJSON := flag.Bool("json", false, "print JSON")
	writes := flag.Int("writes", 0, "instead: time N live writes per store, the check on and off, in one run")
	flag.Parse()
	if *writes > 0 {
		if err := timeWrites(*path, *writes); err != nil {
			fmt.Fprintln(os.Stderr, "dupstudy:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*path, *asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "dupstudy:", err)
		os.Exit(1)
	}
}

func run(path string, asJSON bool) error {
	ctx := context.Background()
	ps, err := load(path)
	if err != nil {
		return err
	}
	m, err := builtin.Open(ctx, embed.Options{})
	if err != nil {
		return err
	}
	defer m.Close()
	bands := []*band{{Name: ">=4.8", lo: 4.8, hi: 6}, {Name: "4-4.8", lo: 4, hi: 4.8}, {Name: "3-4", lo: 3, hi: 4}, {Name: "<3", lo: -1, hi: 3}}
	const batch = 64
	for i := 0; i < len(ps); i += batch {
		end := min(i+batch, len(ps))
		texts := make([]string, 0, 2*(end-i))
		for _, p := range ps[i:end] {
			texts = append(texts, p.a, p.b)
		}
		vs, err := m.Embed(ctx, texts)
		if err != nil {
			return err
		}
		for j, p := range ps[i:end] {
			c := check{engine.Cosine(vs[2*j], vs[2*j+1]), slices.Equal(engine.DigitWords(p.a), engine.DigitWords(p.b)) && engine.WordOverlap(p.a, p.b) >= 0.5}
			for _, b := range bands {
				if p.score >= b.lo && p.score < b.hi {
					b.Pairs++
					b.cos = append(b.cos, c)
				}
			}
		}
		if !asJSON {
			fmt.Fprintf(os.Stderr, "\rembedded %d/%d pairs", end, len(ps))
		}
	}
	var rows []row
	for t := 0.80; t < 0.995; t += 0.01 {
		r := row{Cosine: float64(int(t*100+0.5)) / 100, Caught: map[string]float64{}}
		for _, b := range bands {
			n := 0
			for _, c := range b.cos {
				if c.cos >= r.Cosine && c.eligible {
					n++
				}
			}
			r.Caught[b.Name] = float64(n) / float64(max(b.Pairs, 1))
		}
		rows = append(rows, r)
	}
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"model": m.ModelID(), "bands": bands, "rows": rows})
	}
	fmt.Fprintln(os.Stderr)
	fmt.Printf("model %s, %d STS-B dev pairs\n", m.ModelID(), len(ps))
	fmt.Printf("%-7s", "cosine")
	for _, b := range bands {
		fmt.Printf(" %14s", fmt.Sprintf("%s (%d)", b.Name, b.Pairs))
	}
	fmt.Println()
	for _, r := range rows {
		fmt.Printf("%-7.2f", r.Cosine)
		for _, b := range bands {
			fmt.Printf(" %13.1f%%", 100*r.Caught[b.Name])
		}
		fmt.Println()
	}
	return nil
}

func load(path string) ([]pair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ps []pair
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for first := true; sc.Scan(); first = false {
		if first {
			continue
		}
		p := strings.Split(sc.Text(), "\t")
		if len(p) != 3 {
			continue
		}
		s, err := strconv.ParseFloat(p[2], 64)
		if err != nil {
			continue
		}
		ps = append(ps, pair{p[0], p[1], s})
	}
	return ps, sc.Err()
}

// timeWrites writes n notes (the first sentences of the STS-B dev pairs at
// path, as one agent's notes in one channel) into two data dirs with the
// built-in model, one with the near-duplicate check and one without,
// alternating, and prints the mean time of a write on each and how many
// the check refused. The vector worker runs in both, as in cairn serve
// and cairn mcp.
func timeWrites(path string, n int) error {
	ctx := context.Background()
	ps, err := load(path)
	if err != nil {
		return err
	}
	n = min(n, len(ps))
	m, err := builtin.Open(ctx, embed.Options{})
	if err != nil {
		return err
	}
	defer m.Close()
	var engs [2]*engine.Engine
	for i, cos := range []float64{0, 2} {
		dir, err := os.MkdirTemp("", "dupstudy")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if engs[i], err = sqlite.OpenEngine(ctx, dir, engine.Options{Embedder: m, NearDuplicateCosine: cos}, sqlite.Options{}); err != nil {
			return err
		}
		defer engs[i].Close()
	}
	var took [2]time.Duration
	refused := 0
	for _, p := range ps[:n] {
		for i, e := range engs {
			t0 := time.Now()
			res, err := e.WriteNote(ctx, engine.NewNote{Agent: "bench", Content: p.a})
			if err != nil {
				return err
			}
			took[i] += time.Since(t0)
			if i == 0 && res.NearDuplicate {
				refused++
			}
		}
	}
	fmt.Printf("%d live writes each: %.2f ms per write with the near-duplicate check, %.2f ms without (ratio %.2f); %d refused as near-duplicates\n",
		n, float64(took[0].Microseconds())/1000/float64(n), float64(took[1].Microseconds())/1000/float64(n), float64(took[0])/float64(took[1]), refused)
	return nil
}

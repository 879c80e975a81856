package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/engine"
)

// runLoCoMoStudy replays LoCoMo retrieval offline for variants of what is
// embedded, how the question is read, and fusion (bench/fusionstudy.go).
//
// It is long because it is a benchmark driver: its flag list, then one
// straight pass over the variants that prints as it goes.
func runLoCoMoStudy(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("locomo-study", flag.ExitOnError)
	data := fs.String("datasets", "../shared/datasets", "dev datasets `DIR`")
	model := fs.String("model", "", "embedding model `[LABEL=]DIR`")
	cache := fs.String("cache", "/tmp/cairn-quality-cache", "embedding cache `DIR`")
	grid := fs.String("grid", "weighted:0.2,weighted:0.3,weighted:0.4,weighted:0.5,weighted:0.6,weighted:0.7,minmax:0.3,minmax:0.5,rrf:60:0.5,rrf:60:0.3", "fusers")
	variants := fs.String("variants", "", "semicolon-separated variant names (\"\" = all)")
	nbrs := fs.String("nbr", "0", "comma-separated neighbour weights: a turn's similarity gains this times its best same-session neighbour's")
	replies := fs.String("reply", "0:0", "comma-separated WEIGHT:TOP reply settings: the next turn after each of the TOP best candidates gets at least WEIGHT times its relevance (0:0 = off)")
	prfs := fs.String("prf", "0:0", "comma-separated DEPTH:WEIGHT pseudo-relevance feedback settings (0:0 = off)")
	fs.Parse(args)
	lc, ne, closeFn, err := openLoCoMo(ctx, *data, *model, *cache, false)
	if err != nil {
		return err
	}
	defer closeFn()
	fusers, err := parseGrid(*grid)
	if err != nil {
		return err
	}
	speaker := func(_ bench.Conversation, t bench.Turn) string {
		return t.Speaker + ": " + bench.TurnContent(t, true)
	}
	speakerDate := func(_ bench.Conversation, t bench.Turn) string {
		return t.Speaker + " (" + t.At.Format("2 January 2006") + "): " + bench.TurnContent(t, true)
	}
	names := func(c bench.Conversation, q string) string {
		for _, s := range c.Speakers {
			q = regexp.MustCompile(`(?i)\b`+regexp.QuoteMeta(s)+`('s)?\b`).ReplaceAllString(q, "")
		}
		return strings.Join(strings.Fields(q), " ")
	}
	senderBoost := func(c bench.Conversation, t bench.Turn, q string) float64 {
		if regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(t.Speaker) + `\b`).MatchString(q) {
			return 1
		}
		return 0
	}
	withPrev := func(c bench.Conversation, i int) string {
		t := c.Turns[i]
		if i > 0 && c.Turns[i-1].Session == t.Session {
			return bench.TurnContent(c.Turns[i-1], true) + "\n" + bench.TurnContent(t, true)
		}
		return bench.TurnContent(t, true)
	}
	withNext := func(c bench.Conversation, i int) string {
		t := c.Turns[i]
		if i+1 < len(c.Turns) && c.Turns[i+1].Session == t.Session {
			return bench.TurnContent(t, true) + "\n" + bench.TurnContent(c.Turns[i+1], true)
		}
		return bench.TurnContent(t, true)
	}
	prevItem := func(c bench.Conversation, t bench.Turn) string {
		for i := range c.Turns {
			if c.Turns[i].DiaID == t.DiaID {
				return withPrev(c, i)
			}
		}
		return bench.TurnContent(t, true)
	}
	type variant struct {
		name  string
		o     bench.LoCoMoStudyOptions
		boost []float64
	}
	all := []variant{
		{"base", bench.LoCoMoStudyOptions{}, nil},
		{"embed speaker", bench.LoCoMoStudyOptions{ItemText: speaker}, nil},
		{"embed speaker+date", bench.LoCoMoStudyOptions{ItemText: speakerDate}, nil},
		{"names out of semantic query", bench.LoCoMoStudyOptions{SemQuery: names}, nil},
		{"names out of both queries", bench.LoCoMoStudyOptions{SemQuery: names, KWQuery: names}, nil},
		{"embed speaker, names out of semantic query", bench.LoCoMoStudyOptions{ItemText: speaker, SemQuery: names}, nil},
		{"sender boost", bench.LoCoMoStudyOptions{Boost: senderBoost}, []float64{0.05, 0.1, 0.2}},
		{"names out of semantic query + sender boost", bench.LoCoMoStudyOptions{SemQuery: names, Boost: senderBoost}, []float64{0.05, 0.1, 0.2}},
		{"names out of both + sender boost", bench.LoCoMoStudyOptions{SemQuery: names, KWQuery: names, Boost: senderBoost}, []float64{0.05, 0.1, 0.2}},
		{"embed speaker+date, names out of both", bench.LoCoMoStudyOptions{ItemText: speakerDate, SemQuery: names, KWQuery: names}, nil},
		{"embed speaker+date, names out of both + sender boost", bench.LoCoMoStudyOptions{ItemText: speakerDate, SemQuery: names, KWQuery: names, Boost: senderBoost}, []float64{0.02, 0.05, 0.1}},
		{"embed speaker+date, names out of semantic", bench.LoCoMoStudyOptions{ItemText: speakerDate, SemQuery: names}, nil},
		{"engine", bench.LoCoMoStudyOptions{SemQuery: names, KWQuery: names, Boost: senderBoost}, []float64{0.1}},
		{"engine, embed with previous turn", bench.LoCoMoStudyOptions{ItemText: prevItem, SemQuery: names, KWQuery: names, Boost: senderBoost}, []float64{0.1}},
		{"engine, max-sim with previous turn", bench.LoCoMoStudyOptions{AltText: withPrev, SemQuery: names, KWQuery: names, Boost: senderBoost}, []float64{0.1}},
		{"engine, max-sim with next turn", bench.LoCoMoStudyOptions{AltText: withNext, SemQuery: names, KWQuery: names, Boost: senderBoost}, []float64{0.1}},
	}
	want := map[string]bool{}
	for _, v := range strings.Split(*variants, ";") {
		if v != "" {
			want[v] = true
		}
	}
	cats := bench.LoCoMoCategories()
	fmt.Printf("# LoCoMo study (offline replay), model %s\n\n| variant | fusion | R@10 | R@5 | hit@10 |", ne.name)
	for _, c := range cats {
		fmt.Printf(" %s R@10 |", c)
	}
	fmt.Print("\n|---|---|---:|---:|---:|" + strings.Repeat("---:|", len(cats)) + "\n")
	for _, v := range all {
		if len(want) > 0 && !want[v.name] {
			continue
		}
		s, err := bench.StudyLoCoMo(ctx, lc, ne.emb, v.o)
		if err != nil {
			return err
		}
		boosts := v.boost
		if boosts == nil {
			boosts = []float64{0}
		}
		for _, b := range boosts {
			for _, nw := range strings.Split(*nbrs, ",") {
				for _, prf := range strings.Split(*prfs, ",") {
					for _, rp := range strings.Split(*replies, ",") {
						s.BoostWeight = b
						fmt.Sscan(nw, &s.NbrWeight)
						ds, ws, _ := strings.Cut(prf, ":")
						fmt.Sscan(ds, &s.PRFDepth)
						fmt.Sscan(ws, &s.PRFWeight)
						rw, rt, _ := strings.Cut(rp, ":")
						fmt.Sscan(rw, &s.ReplyWeight)
						rt, asks := strings.CutSuffix(rt, "q")
						s.ReplyAsksOnly = asks
						fmt.Sscan(rt, &s.ReplyTop)
						name := v.name
						if b != 0 {
							name = fmt.Sprintf("%s %.2f", v.name, b)
						}
						if s.NbrWeight != 0 {
							name += " nbr " + nw
						}
						if s.PRFWeight != 0 {
							name += " prf " + prf
						}
						if s.ReplyWeight != 0 {
							name += " reply " + rp
						}
						for _, f := range append([]bench.Fuser{bench.Weighted(1), bench.Weighted(0)}, fusers...) {
							r := s.Run(f)
							fmt.Printf("| %s | %s | %.3f | %.3f | %.3f |", name, f.Name, r["R@10"], r["R@5"], r["hit@10"])
							for _, c := range cats {
								fmt.Printf(" %.3f |", r[c+"/R@10"])
							}
							fmt.Println()
						}
					}
				}
			}
		}
	}
	return nil
}

// openLoCoMo opens the embedding model spec (behind the cache) and the
// LoCoMo dev conversations of data stored in a fresh engine, which embeds
// with the model when embedded is set. closeFn closes both and removes
// the engine's directory.
func openLoCoMo(ctx context.Context, data, spec, cache string, embedded bool) (*bench.LoCoMoCorpus, namedEmbedder, func(), error) {
	ne, closeModel, err := openModel(ctx, spec, cache)
	if err != nil {
		return nil, ne, nil, err
	}
	convs, err := bench.LoadLoCoMo(filepath.Join(data, "locomo-dev"))
	if err != nil {
		closeModel()
		return nil, ne, nil, err
	}
	dir, err := os.MkdirTemp("", "locomo-")
	if err != nil {
		closeModel()
		return nil, ne, nil, err
	}
	var eo engine.Options
	if embedded {
		eo.Embedder = ne.emb
	}
	lc, err := bench.LoadLoCoMoCorpus(ctx, dir, convs, bench.LoCoMoOptions{Captions: true, Engine: eo})
	if err != nil {
		os.RemoveAll(dir)
		closeModel()
		return nil, ne, nil, err
	}
	return lc, ne, func() { lc.Close(); os.RemoveAll(dir); closeModel() }, nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/embed/builtin"
	"github.com/cairn-dev/cairn/engine"
)

type namedEmbedder struct {
	name, note string
	emb        engine.Embedder
}

// openModel opens a model given as [LABEL=]DIR, behind the disk cache
// when cacheDir is set.
func openModel(ctx context.Context, spec, cacheDir string) (namedEmbedder, func(), error) {
	label, dir := splitModelSpec(spec)
	var m *embed.Model
	var err error
	if dir == "builtin" {
		// The model compiled into the binary (embed/builtin).
		m, err = builtin.Open(ctx, embed.Options{})
	} else {
		m, err = embed.Open(ctx, dir, embed.Options{})
	}
	if err != nil {
		return namedEmbedder{}, nil, err
	}
	ne := namedEmbedder{name: label + " (" + m.ModelID()[:min(len(m.ModelID()), 40)] + "…)", note: "real weights", emb: m}
	if strings.HasSuffix(label, "random") {
		ne.note = "random weights: no semantics"
	}
	closeFn := func() { m.Close() }
	if cacheDir != "" {
		c, err := bench.OpenCachedEmbedder(m, cacheDir)
		if err != nil {
			m.Close()
			return namedEmbedder{}, nil, err
		}
		ne.emb = c
		closeFn = func() { c.Close(); m.Close() }
	}
	return ne, closeFn, nil
}

// runQuality measures retrieval quality on the dev datasets for each model
// and mode and prints the tables.
//
// It is long because it is a benchmark driver: its flag list, then one
// straight pass over models, datasets and modes that prints as it goes.
func runQuality(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("quality", flag.ExitOnError)
	data := fs.String("datasets", "../shared/datasets", "dev datasets `DIR`")
	models := fs.String("models", "", "comma-separated embedding models, each `[LABEL=]DIR` (DIR \"builtin\" = the built-in model; a label ending in \"random\" marks a random-weight test model)")
	cache := fs.String("cache", "/tmp/cairn-quality-cache", "embedding cache `DIR` (vectors keyed by model id and text; \"\" = none)")
	sets := fs.String("sets", "cranfield,cosqa,stsb", "sets to run")
	noBaselines := fs.Bool("no-baselines", false, "skip the noise and lexical-hash stand-in embedders")
	profiles := fs.Bool("profiles", false, "also run default hybrid search under every ranking profile")
	queryPrompt := fs.String("query-prompt", "", "also run each model with its prompt `NAME` (config_sentence_transformers.json) before queries, documents without")
	fs.Parse(args)

	var embs []namedEmbedder
	if !*noBaselines {
		embs = append(embs,
			namedEmbedder{"noise (random vector per text)", "no signal: worst case for fusion", bench.NoiseEmbedder{D: 384}},
			namedEmbedder{"lexical hash bag-of-words", "not a language model: lexical signal only", bench.LexicalEmbedder{D: 384}})
	}
	for _, spec := range strings.Split(*models, ",") {
		if spec == "" {
			continue
		}
		ne, closeFn, err := openModel(ctx, spec, *cache)
		if err != nil {
			return err
		}
		defer closeFn()
		embs = append(embs, ne)
		if *queryPrompt != "" {
			qp, closeQP, err := withQueryPrompt(ctx, ne, spec, *queryPrompt)
			if err != nil {
				return err
			}
			defer closeQP()
			embs = append(embs, qp)
		}
	}

	fmt.Printf("# hybrid search quality, %s, %s %s/%s, %d CPUs\n\n", time.Now().UTC().Format(time.DateOnly), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Println("| set | embedder | mode | nDCG@10 | recall@100 | MRR@10 |")
	fmt.Println("|---|---|---|---:|---:|---:|")
	row := func(set, emb, mode string, m bench.Metrics) {
		fmt.Printf("| %s | %s | %s | %.4f | %.4f | %.4f |\n", set, emb, mode, m.NDCG10, m.Recall100, m.MRR10)
	}
	var spearman []string
	for _, name := range strings.Split(*sets, ",") {
		var s *bench.RetrievalSet
		var pairs [][3]string
		var err error
		switch name {
		case "cranfield":
			s, err = bench.LoadBEIR("cranfield", filepath.Join(*data, "cranfield"))
		case "cosqa":
			s, err = bench.LoadBEIR("cosqa-dev", filepath.Join(*data, "cosqa", "dev"))
		case "stsb":
			s, pairs, err = bench.LoadSTSBRetrieval(filepath.Join(*data, "stsb", "dev", "pairs.tsv"))
		default:
			return fmt.Errorf("unknown set %q", name)
		}
		if err != nil {
			return err
		}
		run := func(emb engine.Embedder, label string, modes []engine.SearchRequest, names []string) error {
			dir, err := os.MkdirTemp("", "hybridbench-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			searchPhase(emb, false)
			c, err := bench.LoadCorpus(ctx, dir, s, emb)
			if err != nil {
				return err
			}
			defer c.Close()
			searchPhase(emb, true)
			for i, req := range modes {
				if req.Ranking.Profile == "" {
					req.Ranking = engine.Ranking{Profile: engine.ProfileSimilarity}
				}
				m, err := c.Evaluate(ctx, req)
				if err != nil {
					return err
				}
				row(s.Name, label, names[i], m)
			}
			return nil
		}
		if err := run(nil, "none", []engine.SearchRequest{{Mode: engine.ModeKeyword}}, []string{"keyword (BM25, FTS5)"}); err != nil {
			return err
		}
		for _, e := range embs {
			modes := []engine.SearchRequest{
				{Mode: engine.ModeSemantic},
				{Mode: engine.ModeHybrid, Fusion: engine.FusionCalibrated},
				{Mode: engine.ModeHybrid, Fusion: engine.FusionWeighted},
				{Mode: engine.ModeHybrid, Fusion: engine.FusionMinMax},
				{Mode: engine.ModeHybrid, Fusion: engine.FusionRRF},
			}
			names := []string{"semantic", "hybrid calibrated", "hybrid weighted", "hybrid minmax", "hybrid rrf k=60"}
			for i, m := range modes {
				if m.Fusion == engine.DefaultFusion {
					names[i] += " (default)"
				}
			}
			if *profiles {
				for _, p := range engine.Profiles() {
					if p != engine.ProfileCustom && p != engine.ProfileSimilarity {
						modes = append(modes, engine.SearchRequest{Mode: engine.ModeHybrid, Ranking: engine.Ranking{Profile: p}})
						names = append(names, "hybrid (default fusion), profile "+p)
					}
				}
			}
			if err := run(e.emb, e.name+"; "+e.note, modes, names); err != nil {
				return err
			}
			if _, apart := e.emb.(*queryPromptEmbedder); pairs != nil && !apart {
				var a, b []string
				var gold []float64
				for _, p := range pairs {
					a, b = append(a, p[0]), append(b, p[1])
					var g float64
					fmt.Sscan(p[2], &g)
					gold = append(gold, g)
				}
				va, err := e.emb.Embed(ctx, a)
				if err != nil {
					return err
				}
				vb, err := e.emb.Embed(ctx, b)
				if err != nil {
					return err
				}
				cos := make([]float64, len(va))
				for i := range va {
					cos[i] = engine.Cosine(va[i], vb[i])
				}
				spearman = append(spearman, fmt.Sprintf("| %s | %.4f |", e.name+"; "+e.note, bench.Spearman(cos, gold)))
			}
		}
	}
	if len(spearman) > 0 {
		fmt.Println("\nSTS-B dev, Spearman of cosine similarity vs gold score (1,500 pairs):\n\n| embedder | Spearman |\n|---|---:|")
		for _, l := range spearman {
			fmt.Println(l)
		}
	}
	return nil
}

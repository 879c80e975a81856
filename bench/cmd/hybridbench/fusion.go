package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/bench"
)

// runFusion replays hybrid search offline over the dev sets for a grid of
// fusion settings (bench/fusionstudy.go) and prints one row per setting.
func runFusion(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("fusion", flag.ExitOnError)
	data := fs.String("datasets", "../shared/datasets", "dev datasets `DIR`")
	model := fs.String("model", "", "embedding model `[LABEL=]DIR`")
	cache := fs.String("cache", "/tmp/cairn-quality-cache", "embedding cache `DIR`")
	sets := fs.String("sets", "cranfield,cosqa,stsb,locomo", "sets to study")
	grid := fs.String("grid", "", "comma-separated fusers (weighted:A, minmax:A, rrf:K:A); \"\" = the default grid")
	fs.Parse(args)
	ne, closeFn, err := openModel(ctx, *model, *cache)
	if err != nil {
		return err
	}
	defer closeFn()

	var studies []*bench.Study
	for _, name := range strings.Split(*sets, ",") {
		dir, err := os.MkdirTemp("", "fusionstudy-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		var s *bench.Study
		if name == "locomo" {
			convs, err := bench.LoadLoCoMo(filepath.Join(*data, "locomo-dev"))
			if err != nil {
				return err
			}
			lc, err := bench.LoadLoCoMoCorpus(ctx, dir, convs, bench.LoCoMoOptions{Captions: true})
			if err != nil {
				return err
			}
			s, err = bench.StudyLoCoMo(ctx, lc, ne.emb, bench.LoCoMoStudyOptions{})
			lc.Close()
			if err != nil {
				return err
			}
		} else {
			rs, err := loadRetrievalSet(*data, name)
			if err != nil {
				return err
			}
			c, err := bench.LoadCorpus(ctx, dir, rs, nil)
			if err != nil {
				return err
			}
			s, err = bench.StudyRetrieval(ctx, c, ne.emb, 100)
			c.Close()
			if err != nil {
				return err
			}
		}
		studies = append(studies, s)
		fmt.Fprintf(os.Stderr, "study %s: %d queries\n", s.Name, len(s.Queries))
	}
	fusers, err := parseGrid(*grid)
	if err != nil {
		return err
	}
	fmt.Printf("# fusion study (offline replay), model %s\n\n| fusion |", ne.name)
	cols := map[string][]string{}
	for _, s := range studies {
		if s.Name == "locomo-dev" {
			cols[s.Name] = []string{"R@10", "R@5", "hit@10", "multi-hop/R@10", "temporal/R@10", "open-domain/R@10", "single-hop/R@10"}
		} else {
			cols[s.Name] = []string{"nDCG@10", "recall@100"}
		}
		for _, c := range cols[s.Name] {
			fmt.Printf(" %s %s |", strings.Fields(s.Name)[0], c)
		}
	}
	fmt.Print("\n|---|")
	for _, s := range studies {
		fmt.Print(strings.Repeat("---:|", len(cols[s.Name])))
	}
	fmt.Println()
	for _, f := range fusers {
		fmt.Printf("| %s |", f.Name)
		for _, s := range studies {
			r := s.Run(f)
			for _, c := range cols[s.Name] {
				fmt.Printf(" %.4f |", r[c])
			}
		}
		fmt.Println()
	}
	return nil
}

func parseGrid(g string) ([]bench.Fuser, error) {
	if g == "" {
		g = "weighted:1,weighted:0,weighted:0.2,weighted:0.3,weighted:0.4,weighted:0.5,weighted:0.6,weighted:0.7," +
			"minmax:0.3,minmax:0.4,minmax:0.5,minmax:0.6,minmax:0.7,rrf:60:0.5,rrf:60:0.3,rrf:60:0.7,rrf:10:0.5,rrf:20:0.5"
	}
	var out []bench.Fuser
	for _, spec := range strings.Split(g, ",") {
		p := strings.Split(spec, ":")
		var a float64
		var k int
		switch {
		case p[0] == "weighted" && len(p) == 2:
			fmt.Sscan(p[1], &a)
			out = append(out, bench.Weighted(a))
		case p[0] == "minmax" && len(p) == 2:
			fmt.Sscan(p[1], &a)
			out = append(out, bench.MinMaxFuser(a))
		case p[0] == "rrf" && len(p) == 3:
			fmt.Sscan(p[1], &k)
			fmt.Sscan(p[2], &a)
			out = append(out, bench.RRF(k, a))
		default:
			return nil, fmt.Errorf("bad fuser %q (weighted:A, minmax:A, rrf:K:A)", spec)
		}
	}
	return out, nil
}

func loadRetrievalSet(data, name string) (*bench.RetrievalSet, error) {
	return bench.LoadDevSet(data, name)
}

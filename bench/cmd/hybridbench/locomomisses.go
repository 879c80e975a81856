package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/engine"
)

// runLoCoMoMisses prints, for every LoCoMo dev question whose evidence is
// not all in hybrid search's first 10, where each evidence turn ranks in
// the first -depth and what it says: the material for choosing the next
// retrieval change.
func runLoCoMoMisses(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("locomo-misses", flag.ExitOnError)
	data := fs.String("datasets", "../shared/datasets", "dev datasets `DIR` (reads DIR/locomo-dev)")
	model := fs.String("model", "builtin=builtin", "embedding model `[LABEL=]DIR`")
	cache := fs.String("cache", "/tmp/cairn-quality-cache", "embedding cache `DIR`")
	depth := fs.Int("depth", 50, "results searched per question")
	category := fs.String("category", "", "only this category (\"\" = all)")
	mode := fs.String("mode", "hybrid", "search mode")
	fs.Parse(args)
	lc, _, closeFn, err := openLoCoMo(ctx, *data, *model, *cache, true)
	if err != nil {
		return err
	}
	defer closeFn()
	for _, c := range lc.Convs {
		text := map[string]bench.Turn{}
		for _, t := range c.Turns {
			text[t.DiaID] = t
		}
		for _, q := range c.Questions {
			if *category != "" && q.Category != *category {
				continue
			}
			ranked, err := lc.Ranked(ctx, engine.SearchRequest{Limit: *depth, Mode: engine.SearchMode(*mode)}, c, q)
			if err != nil {
				return err
			}
			var lines []string
			missed := 0
			for _, ev := range q.Evidence {
				rank := slices.Index(ranked, ev) + 1
				if rank == 0 || rank > 10 {
					missed++
				}
				t := text[ev]
				lines = append(lines, fmt.Sprintf("    %-7s rank %2d  %s: %s", ev, rank, t.Speaker, bench.TurnContent(t, true)))
			}
			if missed == 0 {
				continue
			}
			fmt.Printf("[%s] %s (%d of %d missed)\n%s\n", q.Category, q.Text, missed, len(q.Evidence), strings.Join(lines, "\n"))
			for i, id := range ranked[:min(3, len(ranked))] {
				t := text[id]
				fmt.Printf("      top%d %-7s %s: %s\n", i+1, id, t.Speaker, bench.TurnContent(t, true))
			}
		}
	}
	return nil
}

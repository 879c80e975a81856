package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

// runRecall measures the per-prompt recall on LoCoMo dev: each scored
// question asked as a prompt in its conversation's project through the
// prompt hook's recall (engine/ops), at each budget; the share of the
// questions whose evidence hybrid search ranks in its top 10 that get an
// evidence turn injected; and the share of foreign prompts (the other
// conversations' questions asked in this project) that inject nothing.
func runRecall(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("recall", flag.ExitOnError)
	data := fs.String("datasets", "../shared/datasets", "dev datasets `DIR` (reads DIR/locomo-dev)")
	model := fs.String("model", "builtin", "embedding model `[LABEL=]DIR`")
	cache := fs.String("cache", "/tmp/cairn-quality-cache", "embedding cache `DIR` (\"\" = none)")
	budgetList := fs.String("budgets", "500,1000,2000", "comma-separated recall budgets in estimated `TOKENS`; the first is used for foreign prompts")
	fs.Parse(args)
	var budgets []int
	for _, b := range strings.Split(*budgetList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(b))
		if err != nil || n <= 0 {
			return fmt.Errorf("-budgets: %q is not a number of tokens", b)
		}
		budgets = append(budgets, n)
	}
	ne, closeModel, err := openModel(ctx, *model, *cache)
	if err != nil {
		return err
	}
	defer closeModel()
	convs, err := bench.LoadLoCoMo(filepath.Join(*data, "locomo-dev"))
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "recallbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lc, err := bench.LoadLoCoMoCorpus(ctx, dir, convs, bench.LoCoMoOptions{Captions: true, Projects: true, Engine: engine.Options{Embedder: ne.emb}})
	if err != nil {
		return err
	}
	defer lc.Close()
	rs, err := bench.EvaluateRecallInjection(ctx, lc, budgets, bench.LoCoMoNow(convs))
	if err != nil {
		return err
	}
	fmt.Printf("# Per-prompt recall on LoCoMo dev, %s, %s, %s %s/%s, %d CPUs\n\n", time.Now().UTC().Format(time.DateOnly), ne.name, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Println("Evidence injected: share of the questions whose evidence hybrid search ranks in its top 10 with an evidence turn in the injected text.")
	fmt.Printf("Silent: share of foreign prompts (the other conversations' questions asked in this project) that inject nothing (budget %d).\n", budgets[0])
	fmt.Printf("Tokens: mean injected per question, estimated as bytes / %d.\n\n", ops.BytesPerToken)
	fmt.Print("| conversation | questions | evidence in hybrid top 10 |")
	for _, b := range budgets {
		fmt.Printf(" injected @%d | tokens @%d |", b, b)
	}
	fmt.Println(" foreign prompts | silent |")
	fmt.Print("|---|---:|---:|")
	for range budgets {
		fmt.Print("---:|---:|")
	}
	fmt.Println("---:|---:|")
	total := bench.RecallInjection{Conversation: "all", Injected: map[int]int{}, Bytes: map[int]int{}}
	for _, r := range append(rs, total) {
		if r.Conversation == "all" {
			r = total
		} else {
			total.Questions += r.Questions
			total.Top10 += r.Top10
			total.Foreign += r.Foreign
			total.Silent += r.Silent
			for _, b := range budgets {
				total.Injected[b] += r.Injected[b]
				total.Bytes[b] += r.Bytes[b]
			}
		}
		fmt.Printf("| %s | %d | %d |", r.Conversation, r.Questions, r.Top10)
		for _, b := range budgets {
			fmt.Printf(" %.1f%% | %.0f |", pct(r.Injected[b], r.Top10), float64(r.Bytes[b])/float64(ops.BytesPerToken)/float64(max(r.Questions, 1)))
		}
		fmt.Printf(" %d | %.1f%% |\n", r.Foreign, pct(r.Silent, r.Foreign))
	}
	return nil
}

func pct(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return 100 * float64(n) / float64(d)
}

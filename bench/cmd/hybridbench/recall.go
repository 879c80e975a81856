package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/search"
)

// runRecall measures the per-prompt recall on LoCoMo dev: each scored
// question asked as a prompt in its conversation's project through the
// prompt hook's recall (engine/ops), at each budget; the share of the
// questions whose evidence hybrid search ranks in its top 10 that get an
// evidence turn injected; and the share of foreign prompts (the other
// conversations' questions asked in this project) that inject nothing.
// With -loco it also chooses the prompt gate (engine/search) leaving one
// conversation out, and prints each fold and the trade-off curve of the
// engine's exponent.
func runRecall(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("recall", flag.ExitOnError)
	data := fs.String("datasets", "../shared/datasets", "dev datasets `DIR` (reads DIR/locomo-dev)")
	model := fs.String("model", "builtin", "embedding model `[LABEL=]DIR`")
	cache := fs.String("cache", "/tmp/cairn-quality-cache", "embedding cache `DIR` (\"\" = none)")
	budgetList := fs.String("budgets", "500,1000,2000", "comma-separated recall budgets in estimated `TOKENS`")
	foreignBudget := fs.Int("foreign-budget", 1000, "budget in estimated `TOKENS` the foreign prompts are asked at, and the gate is judged at (the hook's default)")
	loco := fs.Bool("loco", false, "choose the prompt gate leaving one conversation out, and print each fold and the trade-off curve")
	fs.Parse(args)
	var budgets []int
	for _, b := range strings.Split(*budgetList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(b))
		if err != nil || n <= 0 {
			return fmt.Errorf("-budgets: %q is not a number of tokens", b)
		}
		budgets = append(budgets, n)
	}
	if *foreignBudget <= 0 {
		return fmt.Errorf("-foreign-budget: must be > 0, got %d", *foreignBudget)
	}
	if !slices.Contains(budgets, *foreignBudget) {
		budgets = append(budgets, *foreignBudget)
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
	ps, err := bench.RecallPrompts(ctx, lc, budgets, *foreignBudget, bench.LoCoMoNow(convs))
	if err != nil {
		return err
	}
	gate := bench.DefaultRecallGate()
	fmt.Printf("# Per-prompt recall on LoCoMo dev, %s, %s, %s %s/%s, %d CPUs\n\n", time.Now().UTC().Format(time.DateOnly), ne.name, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Println("Evidence injected: share of the questions whose evidence hybrid search ranks in its top 10 with an evidence turn in the injected text.")
	fmt.Printf("Silent: share of foreign prompts (the other conversations' questions asked in this project) that inject nothing (budget %d).\n", *foreignBudget)
	fmt.Printf("Tokens: mean injected per question, estimated as bytes / %d.\n", ops.BytesPerToken)
	fmt.Printf("Prompt gate: best relevance x coverage^%g >= %g (engine/search: coverage is the share of the prompt's content words the messages found hold); \"no gate\": the relevance floor only.\n\n", gate.Exponent, gate.Min)
	fmt.Print("| conversation | questions | evidence in hybrid top 10 |")
	for _, b := range budgets {
		fmt.Printf(" injected @%d | tokens @%d |", b, b)
	}
	fmt.Println(" foreign prompts | silent | silent, no gate | injected @" + strconv.Itoa(*foreignBudget) + ", no gate |")
	fmt.Print("|---|---:|---:|")
	for range budgets {
		fmt.Print("---:|---:|")
	}
	fmt.Println("---:|---:|---:|---:|")
	gated := withTotal(gate.Judge(ps, budgets, *foreignBudget), budgets)
	open := withTotal(bench.RecallGate{}.Judge(ps, budgets, *foreignBudget), budgets)
	for i, r := range gated {
		fmt.Printf("| %s | %d | %d |", r.Conversation, r.Questions, r.Top10)
		for _, b := range budgets {
			fmt.Printf(" %.1f%% | %.0f |", bench.Percent(r.Injected[b], r.Top10), float64(r.Bytes[b])/float64(ops.BytesPerToken)/float64(max(r.Questions, 1)))
		}
		o := open[i]
		fmt.Printf(" %d | %.1f%% | %.1f%% | %.1f%% |\n", r.Foreign, bench.Percent(r.Silent, r.Foreign), bench.Percent(o.Silent, o.Foreign), bench.Percent(o.Injected[*foreignBudget], o.Top10))
	}
	if *loco {
		return printGateLOCO(ps, *foreignBudget)
	}
	return nil
}

// recallTargets are the per-prompt recall's targets: evidence injected
// for 90% of the questions whose evidence hybrid search ranks in its top
// 10, nothing injected for 70% of the foreign prompts, per conversation.
var recallTargets = bench.RecallTargets{Evidence: 90, Silence: 70}

// printGateLOCO prints the prompt gate chosen leaving each conversation
// out, the gate chosen on all of them, and the trade-off between evidence
// and silence along the engine's exponent.
func printGateLOCO(ps []bench.RecallPrompt, budget int) error {
	folds, kept, err := bench.RecallGateLOCO(ps, budget, recallTargets)
	if err != nil {
		return err
	}
	fmt.Printf("\n## Prompt gate, leave one conversation out (budget %d)\n\n", budget)
	fmt.Printf("Chosen on three conversations: for each exponent, the thresholds at which each of the three injects the evidence for >= %.0f%% of its questions (unit: questions whose evidence hybrid search ranks in its top 10) and nothing for >= %.0f%% of its foreign prompts (unit: prompts); the exponent with the widest window of thresholds, measured in standard deviations of the log gate score over the three's prompts, at the window's middle (log scale).\n\n", recallTargets.Evidence, recallTargets.Silence)
	fmt.Println("| held out | exponent | threshold | window | held-out evidence | held-out silent | holds |")
	fmt.Println("|---|---:|---:|---|---:|---:|---|")
	for _, f := range folds {
		if !f.Fit.OK {
			fmt.Printf("| %s | - | - | none | - | - | no |\n", f.HeldOut)
			continue
		}
		fmt.Printf("| %s | %g | %.4f | %.4f-%.4f | %.1f%% | %.1f%% | %s |\n", f.HeldOut, f.Fit.Gate.Exponent, f.Fit.Gate.Min, f.Fit.Lo, f.Fit.Hi,
			bench.Percent(f.Result.Injected[budget], f.Result.Top10), bench.Percent(f.Result.Silent, f.Result.Foreign), yesNo(f.Holds))
	}
	all := map[string]bool{}
	for _, p := range ps {
		all[p.Conversation] = true
	}
	fit := bench.FitRecallGate(ps, all, budget, recallTargets)
	fmt.Printf("\nKept (every fold holds): %s. ", yesNo(kept))
	if fit.OK {
		fmt.Printf("Chosen on all four: exponent %g, threshold %.4f (window %.4f-%.4f); the engine's: exponent %g, threshold %g.\n", fit.Gate.Exponent, fit.Gate.Min, fit.Lo, fit.Hi, search.PromptCoverageExponent, search.DefaultPromptEvidence)
	} else {
		fmt.Println("No gate meets the targets on all four.")
	}
	fmt.Printf("\n## Trade-off along the threshold, exponent %g (evidence %% / silent %%, per conversation)\n\n", float64(search.PromptCoverageExponent))
	convs := []string{}
	for _, r := range (bench.RecallGate{}).Judge(ps, []int{budget}, budget) {
		convs = append(convs, r.Conversation)
	}
	fmt.Println("| threshold | " + strings.Join(convs, " | ") + " |")
	fmt.Println("|---:|" + strings.Repeat("---|", len(convs)))
	for _, min := range []float64{0, 0.005, 0.01, 0.0125, 0.015, 0.016, 0.02, 0.025, 0.03, 0.04, 0.05} {
		fmt.Printf("| %g |", min)
		for _, r := range (bench.RecallGate{Exponent: search.PromptCoverageExponent, Min: min}).Judge(ps, []int{budget}, budget) {
			fmt.Printf(" %.1f / %.1f |", bench.Percent(r.Injected[budget], r.Top10), bench.Percent(r.Silent, r.Foreign))
		}
		fmt.Println()
	}
	return nil
}

// withTotal appends the sum of rs as conversation "all".
func withTotal(rs []bench.RecallInjection, budgets []int) []bench.RecallInjection {
	total := bench.RecallInjection{Conversation: "all", Injected: map[int]int{}, Bytes: map[int]int{}}
	for _, r := range rs {
		total.Questions += r.Questions
		total.Top10 += r.Top10
		total.Foreign += r.Foreign
		total.Silent += r.Silent
		for _, b := range budgets {
			total.Injected[b] += r.Injected[b]
			total.Bytes[b] += r.Bytes[b]
		}
	}
	return append(rs, total)
}

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/engine"
)

// locoRule is a query-side or ranking rule of the engine, measured by
// leaving one LoCoMo conversation out: off is the engine's defaults with
// the rule switched off, settings the rule on with each value of its
// parameters (the engine's value first).
type locoRule struct {
	name     string
	off      engine.QueryAnalysis
	settings []locoSetting
	// mode is the search mode whose recall@10 judges the rule: hybrid,
	// or semantic for a rule hybrid search sees only through another.
	mode engine.SearchMode
}

type locoSetting struct {
	name string
	qa   engine.QueryAnalysis
}

// locoRules are the rules the engine keeps, as QueryAnalysis switches
// them, each with a small grid of its parameters around the engine's
// value. Each rule is judged with every other rule at its default.
func locoRules() []locoRule {
	def := locoSetting{"on, engine's value", engine.QueryAnalysis{}}
	grid := func(name string, vals []float64, set func(*engine.QueryAnalysis, float64)) []locoSetting {
		out := []locoSetting{def}
		for _, v := range vals {
			qa := def.qa
			set(&qa, v)
			out = append(out, locoSetting{fmt.Sprintf("on, %s %g", name, v), qa})
		}
		return out
	}
	return []locoRule{
		{name: "sender names: taken out of the query, their messages boosted (boost 0.1)", off: engine.QueryAnalysis{NoSenderNames: true}, mode: engine.ModeHybrid,
			settings: grid("boost", []float64{0.05, 0.2}, func(qa *engine.QueryAnalysis, v float64) { qa.SenderBoost = v })},
		{name: "time expressions: taken out of the query, their times boosted (boost 0.3)", off: engine.QueryAnalysis{NoTimes: true}, mode: engine.ModeHybrid,
			settings: grid("boost", []float64{0.2, 0.5}, func(qa *engine.QueryAnalysis, v float64) { qa.TimeBoost = v })},
		{name: "question keyword weight: a question in words fuses with keyword weight 0.3, not 0.1", off: engine.QueryAnalysis{NoQuestionWeight: true}, mode: engine.ModeHybrid,
			settings: grid("weight", []float64{0.2, 0.4}, func(qa *engine.QueryAnalysis, v float64) { qa.QuestionKeywordWeight = v })},
		{name: "reply lift (off by default): the reply to a best candidate that asks is lifted behind it (weight 0.95)", off: engine.QueryAnalysis{}, mode: engine.ModeHybrid,
			settings: func() []locoSetting {
				// The lift is off by default: each setting switches it on.
				out := grid("weight", []float64{0.9, 1}, func(qa *engine.QueryAnalysis, v float64) { qa.ReplyWeight = v })
				for i := range out {
					out[i].qa.LiftReplies = true
				}
				return out
			}()},
		{name: "rank blend: fused ranks blended with the semantic ranks with turn context (weight 1.5, k 5)", off: engine.QueryAnalysis{NoRankBlend: true}, mode: engine.ModeHybrid,
			settings: append(grid("weight", []float64{1, 2}, func(qa *engine.QueryAnalysis, v float64) { qa.BlendSemanticWeight = v }),
				grid("k", []float64{2, 10}, func(qa *engine.QueryAnalysis, v float64) { qa.BlendK = v })[1:]...)},
		{name: "turn context: a turn also scored with its neighbours (semantic search; hybrid sees it through the rank blend)", off: engine.QueryAnalysis{NoTurnContext: true}, mode: engine.ModeSemantic,
			settings: []locoSetting{def}},
	}
}

// locoFigures are the figures of one query analysis: per mode, the
// LoCoMo figures of each conversation, and the dev sets' nDCG@10.
type locoFigures struct {
	locomo map[engine.SearchMode][]bench.LoCoMoResult
	ndcg   map[engine.SearchMode]map[string]float64 // set name -> nDCG@10
}

// runLOCO is `hybridbench locomo -loco`: every rule of locoRules decided
// by leaving one LoCoMo dev conversation out (bench.LeaveOneOut on hybrid
// turn recall@10), checked against the other dev sets' nDCG@10, then
// cairn's figures in the units peers publish. The conversations are
// stored and embedded once; each query analysis reopens the same stores.
func runLOCO(ctx context.Context, dataDir, modelSpec, cacheDir string, captions bool, contexts []string, tol float64, devSets bool) error {
	convs, err := bench.LoadLoCoMo(filepath.Join(dataDir, "locomo-dev"))
	if err != nil {
		return err
	}
	ne, closeModel, err := openModel(ctx, modelSpec, cacheDir)
	if err != nil {
		return err
	}
	defer closeModel()
	ec := engine.EmbedContext(contexts[0])
	progress("storing and embedding the LoCoMo dev conversations (embed %s)", ec)
	lcDir, err := os.MkdirTemp("", "locomo-loco-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(lcDir)
	lc, err := bench.LoadLoCoMoCorpus(ctx, lcDir, convs, bench.LoCoMoOptions{Captions: captions, Engine: engine.Options{Embedder: ne.emb, EmbedContext: ec}})
	if err != nil {
		return err
	}
	defer lc.Close()
	var sets []*bench.Corpus
	if devSets {
		for _, s := range []struct{ name, dir string }{{"cranfield", "cranfield"}, {"cosqa-dev", filepath.Join("cosqa", "dev")}} {
			progress("storing and embedding %s", s.name)
			rs, err := bench.LoadBEIR(s.name, filepath.Join(dataDir, s.dir))
			if err != nil {
				return err
			}
			dir, err := os.MkdirTemp("", "loco-dev-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			c, err := bench.LoadCorpus(ctx, dir, rs, ne.emb)
			if err != nil {
				return err
			}
			defer c.Close()
			sets = append(sets, c)
		}
	}

	rules := locoRules()
	figures := map[engine.QueryAnalysis]*locoFigures{}
	modesOf := map[engine.QueryAnalysis]map[engine.SearchMode]bool{{}: {engine.ModeKeyword: true, engine.ModeSemantic: true, engine.ModeHybrid: true}}
	// The other dev sets judge a rule at its default against off only.
	devOf := map[engine.QueryAnalysis]bool{{}: true}
	var order []engine.QueryAnalysis
	need := func(qa engine.QueryAnalysis, mode engine.SearchMode) {
		if modesOf[qa] == nil {
			modesOf[qa] = map[engine.SearchMode]bool{}
		}
		if _, ok := figures[qa]; !ok {
			figures[qa] = nil
			order = append(order, qa)
		}
		modesOf[qa][mode] = true
	}
	need(engine.QueryAnalysis{}, engine.ModeHybrid)
	for _, r := range rules {
		need(r.off, r.mode)
		devOf[r.off], devOf[r.settings[0].qa] = true, true
		for _, s := range r.settings {
			need(s.qa, r.mode)
		}
	}
	for i, qa := range order {
		progress("query analysis %d/%d: %s", i+1, len(order), describeQA(qa))
		if err := lc.Reopen(ctx, qa); err != nil {
			return err
		}
		for _, c := range sets {
			if !devOf[qa] {
				break
			}
			if err := c.Reopen(ctx, qa); err != nil {
				return err
			}
		}
		f := &locoFigures{locomo: map[engine.SearchMode][]bench.LoCoMoResult{}, ndcg: map[engine.SearchMode]map[string]float64{}}
		for _, mode := range []engine.SearchMode{engine.ModeKeyword, engine.ModeSemantic, engine.ModeHybrid} {
			if !modesOf[qa][mode] {
				continue
			}
			all, each, err := lc.EvaluateEach(ctx, engine.SearchRequest{Mode: mode})
			if err != nil {
				return err
			}
			f.locomo[mode] = append(each, all)
			f.ndcg[mode] = map[string]float64{}
			for _, c := range sets {
				if !devOf[qa] {
					break
				}
				m, err := c.Evaluate(ctx, engine.SearchRequest{Mode: mode, Ranking: engine.Ranking{Profile: engine.ProfileSimilarity}})
				if err != nil {
					return err
				}
				f.ndcg[mode][c.Set.Name] = m.NDCG10
			}
		}
		figures[qa] = f
	}

	fmt.Printf("# Leave one LoCoMo dev conversation out, %s, embed %s\n\n", ne.name, ec)
	fmt.Printf("Each rule is judged with every other rule at its default. For each conversation held out, the setting with the best mean hybrid turn recall@10 (share of a question's evidence turns in the top 10, averaged over its questions) on the other three is chosen (a tie goes to off); the fold holds when a setting of the rule was chosen and it scores at least off - %.3f on the held-out conversation. A rule is kept when all %d folds hold and it lowers no other dev set's nDCG@10 (linear gains) by more than %.3f.\n\n", tol, len(convs), tol)
	var summary []string
	for _, r := range rules {
		line, err := printLOCORule(r, convs, figures, sets, tol)
		if err != nil {
			return err
		}
		summary = append(summary, line)
	}
	if len(contexts) > 1 {
		line, err := locoEmbedContext(ctx, convs, ne, captions, contexts, figures[engine.QueryAnalysis{}].locomo[engine.ModeHybrid], tol)
		if err != nil {
			return err
		}
		summary = append(summary, line)
	}
	fmt.Println("## Summary\n\n| rule | folds that hold | Cranfield nDCG@10 on - off | CoSQA dev nDCG@10 on - off | verdict |\n|---|---:|---:|---:|---|")
	for _, l := range summary {
		fmt.Println(l)
	}
	fmt.Println()
	printPeerUnits(convs, figures[engine.QueryAnalysis{}], ne.name, ec)
	return nil
}

// printLOCORule prints rule r's figures per conversation, its folds and
// its verdict, and returns its summary row.
func printLOCORule(r locoRule, convs []bench.Conversation, figures map[engine.QueryAnalysis]*locoFigures, sets []*bench.Corpus, tol float64) (string, error) {
	settings := append([]locoSetting{{"off", r.off}}, r.settings...)
	unit := string(r.mode) + " turn recall@10"
	fmt.Printf("## %s\n\n| setting |", r.name)
	for _, c := range convs {
		fmt.Printf(" conv %s %s |", c.ID, unit)
	}
	fmt.Printf(" all %s |", unit)
	for _, c := range sets {
		fmt.Printf(" %s %s nDCG@10 |", c.Set.Name, r.mode)
	}
	fmt.Print("\n|---|")
	for range len(convs) + 1 + len(sets) {
		fmt.Print("---:|")
	}
	fmt.Println()
	grid := make([][]float64, len(settings))
	for i, s := range settings {
		f := figures[s.qa]
		fmt.Printf("| %s |", s.name)
		res := f.locomo[r.mode]
		for c := range convs {
			grid[i] = append(grid[i], res[c]["overall"].Recall10)
			fmt.Printf(" %.3f |", res[c]["overall"].Recall10)
		}
		fmt.Printf(" %.3f |", res[len(convs)]["overall"].Recall10)
		for _, c := range sets {
			if v, ok := f.ndcg[r.mode][c.Set.Name]; ok {
				fmt.Printf(" %.4f |", v)
			} else {
				fmt.Print(" |")
			}
		}
		fmt.Println()
	}
	folds, kept, err := bench.LeaveOneOut(grid, tol)
	if err != nil {
		return "", err
	}
	fmt.Printf("\n| held out | chosen on the other three | their mean %s | held-out %s, chosen | held-out, off | holds |\n|---|---|---:|---:|---:|---|\n", unit, unit)
	holding := 0
	for _, f := range folds {
		if f.Holds {
			holding++
		}
		fmt.Printf("| conv %s | %s | %.3f | %.3f | %.3f | %s |\n", convs[f.HeldOut].ID, settings[f.Chosen].name, f.TrainMean, f.HeldOutChosen, f.HeldOutOff, yesNo(f.Holds))
	}
	best, bestMean := bench.BestSetting(grid)
	fmt.Printf("\nChosen on all %d conversations: %s (mean %s %.3f).\n", len(convs), settings[best].name, unit, bestMean)
	// The other dev sets judge the engine's default setting of the rule.
	var deltas []string
	lowers := false
	for _, c := range sets {
		d := figures[r.settings[0].qa].ndcg[r.mode][c.Set.Name] - figures[r.off].ndcg[r.mode][c.Set.Name]
		lowers = lowers || d < -tol
		deltas = append(deltas, fmt.Sprintf("%+.4f", d))
	}
	for len(deltas) < 2 {
		deltas = append(deltas, "not measured")
	}
	verdict := "kept"
	switch {
	case !kept:
		verdict = fmt.Sprintf("fails: holds on %d of %d held-out conversations", holding, len(folds))
	case lowers:
		verdict = "fails: lowers another dev set"
	}
	fmt.Printf("\nVerdict: %s.\n\n", verdict)
	return fmt.Sprintf("| %s | %d of %d | %s | %s | %s |", r.name, holding, len(folds), deltas[0], deltas[1], verdict), nil
}

// locoEmbedContext decides the embedding context contexts[1] against
// contexts[0] (whose default-rule hybrid figures are base) the same way,
// on a second store of the conversations embedded with it.
func locoEmbedContext(ctx context.Context, convs []bench.Conversation, ne namedEmbedder, captions bool, contexts []string, base []bench.LoCoMoResult, tol float64) (string, error) {
	ec := engine.EmbedContext(contexts[1])
	progress("storing and embedding the LoCoMo dev conversations (embed %s)", ec)
	dir, err := os.MkdirTemp("", "locomo-loco-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	lc, err := bench.LoadLoCoMoCorpus(ctx, dir, convs, bench.LoCoMoOptions{Captions: captions, Engine: engine.Options{Embedder: ne.emb, EmbedContext: ec}})
	if err != nil {
		return "", err
	}
	defer lc.Close()
	all, each, err := lc.EvaluateEach(ctx, engine.SearchRequest{Mode: engine.ModeHybrid})
	if err != nil {
		return "", err
	}
	with := append(each, all)
	name := fmt.Sprintf("embed context %s (against %s)", ec, contexts[0])
	fmt.Printf("## %s\n\n| embed context |", name)
	for _, c := range convs {
		fmt.Printf(" conv %s hybrid turn recall@10 |", c.ID)
	}
	fmt.Print(" all hybrid turn recall@10 |\n|---|")
	for range len(convs) + 1 {
		fmt.Print("---:|")
	}
	fmt.Println()
	grid := make([][]float64, 2)
	for i, row := range [][]bench.LoCoMoResult{base, with} {
		fmt.Printf("| %s |", contexts[i])
		for c := range convs {
			grid[i] = append(grid[i], row[c]["overall"].Recall10)
			fmt.Printf(" %.3f |", row[c]["overall"].Recall10)
		}
		fmt.Printf(" %.3f |\n", row[len(convs)]["overall"].Recall10)
	}
	folds, kept, err := bench.LeaveOneOut(grid, tol)
	if err != nil {
		return "", err
	}
	holding := 0
	fmt.Println("\n| held out | chosen on the other three | their mean hybrid turn recall@10 | held-out, chosen | held-out, " + contexts[0] + " | holds |\n|---|---|---:|---:|---:|---|")
	for _, f := range folds {
		if f.Holds {
			holding++
		}
		fmt.Printf("| conv %s | %s | %.3f | %.3f | %.3f | %s |\n", convs[f.HeldOut].ID, contexts[f.Chosen], f.TrainMean, f.HeldOutChosen, f.HeldOutOff, yesNo(f.Holds))
	}
	verdict := "passes on LoCoMo"
	if !kept {
		verdict = fmt.Sprintf("fails: holds on %d of %d held-out conversations", holding, len(folds))
	}
	fmt.Printf("\nVerdict: %s (the other dev sets would need re-embedding with it: not measured).\n\n", verdict)
	return fmt.Sprintf("| %s | %d of %d | not measured | not measured | %s |", name, holding, len(folds), verdict), nil
}

// printPeerUnits prints keyword, semantic and hybrid search with the
// engine's defaults per conversation and overall in cairn's unit and in
// the two units peers publish LoCoMo retrieval in.
func printPeerUnits(convs []bench.Conversation, f *locoFigures, model string, ec engine.EmbedContext) {
	fmt.Printf("# LoCoMo dev in the peers' units, %s, embed %s, engine defaults\n\n", model, ec)
	fmt.Println("Turn recall@10 (cairn's protocol) and fractional turn-level recall@5 (mcp-memory-service's unit; the same as the protocol's recall@5): the share of a question's evidence turns among its top 10 or 5 turns, averaged over questions. Session-level recall@10 (MemPalace's unit): the share of a question's evidence sessions among the first 10 sessions of its ranking, a session ranked by its best turn, averaged over questions. Questions of categories 1-4 with evidence.")
	fmt.Println()
	fmt.Print("| mode | unit |")
	for _, c := range convs {
		fmt.Printf(" conv %s (%d q) |", c.ID, len(c.Questions))
	}
	fmt.Print(" all |\n|---|---|")
	for range len(convs) + 1 {
		fmt.Print("---:|")
	}
	fmt.Println()
	for _, mode := range []engine.SearchMode{engine.ModeKeyword, engine.ModeSemantic, engine.ModeHybrid} {
		res := f.locomo[mode]
		for _, u := range []struct {
			name string
			get  func(bench.TurnMetrics) float64
		}{
			{"turn recall@10", func(m bench.TurnMetrics) float64 { return m.Recall10 }},
			{"fractional turn-level recall@5", func(m bench.TurnMetrics) float64 { return m.Recall5 }},
			{"session-level recall@10", func(m bench.TurnMetrics) float64 { return m.SessionRecall10 }},
		} {
			fmt.Printf("| %s | %s |", mode, u.name)
			for _, r := range res {
				fmt.Printf(" %.3f |", u.get(r["overall"]))
			}
			fmt.Println()
		}
	}
	fmt.Println()
}

// describeQA names the fields of qa that differ from the engine's
// defaults ("defaults" when none).
func describeQA(qa engine.QueryAnalysis) string {
	v := reflect.ValueOf(qa)
	var parts []string
	for i := range v.NumField() {
		if f := v.Field(i); !f.IsZero() {
			parts = append(parts, fmt.Sprintf("%s=%v", v.Type().Field(i).Name, f.Interface()))
		}
	}
	if len(parts) == 0 {
		return "defaults"
	}
	return strings.Join(parts, " ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// progress reports a step on stderr, so that stdout stays the report.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "hybridbench: "+format+"\n", args...)
}

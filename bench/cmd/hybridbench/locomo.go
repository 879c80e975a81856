package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/engine"
)

// runLoCoMo runs the LoCoMo dev protocol (../shared/datasets/README.md):
// one message per turn in a channel per conversation, each question
// searched in its channel through Engine.Search, turn-level recall@5,
// recall@10 and hit@10 per category and overall.
//
// It is long because it is a benchmark driver: its flag list, then one
// straight pass over models and conversations that prints as it goes.
func runLoCoMo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("locomo", flag.ExitOnError)
	data := fs.String("datasets", "../shared/datasets", "dev datasets `DIR` (reads DIR/locomo-dev)")
	models := fs.String("models", "", "comma-separated embedding models, each `[LABEL=]DIR`")
	cache := fs.String("cache", "/tmp/cairn-quality-cache", "embedding cache `DIR` (\"\" = none)")
	captions := fs.Bool("captions", true, "append shared photos' captions to the turn text")
	profiles := fs.Bool("profiles", false, "also run hybrid search under every ranking profile")
	chromaJS := fs.String("chroma", "", "testdata/js `DIR` with the chromadb package installed (make js-deps): also run Chroma 1.0.0 as a peer with each model's embeddings")
	contexts := fs.String("embed-context", "content", "comma-separated engine EmbedContext values to run each model with (content, sender-date)")
	queryPrompt := fs.String("query-prompt", "", "also run each model with its prompt `NAME` (config_sentence_transformers.json) before queries, documents without")
	ablations := fs.Bool("ablations", true, "also run default hybrid search with each part of the query analysis switched off, and all of them")
	loco := fs.Bool("loco", false, "instead: decide every query-side and ranking rule by leaving one conversation out (first model, first -embed-context; a second -embed-context is decided against the first), then report the peers' units")
	locoTol := fs.Float64("loco-tol", 0, "with -loco: how far below the rule switched off a held-out conversation's recall@10 (and another dev set's nDCG@10) may fall for the rule to hold")
	locoDev := fs.Bool("loco-dev", true, "with -loco: also check each rule on Cranfield and CoSQA dev (nDCG@10)")
	fs.Parse(args)

	if *loco {
		spec, _, _ := strings.Cut(*models, ",")
		if spec == "" {
			return fmt.Errorf("-loco needs -models")
		}
		return runLOCO(ctx, *data, spec, *cache, *captions, strings.Split(*contexts, ","), *locoTol, *locoDev)
	}

	convs, err := bench.LoadLoCoMo(filepath.Join(*data, "locomo-dev"))
	if err != nil {
		return err
	}
	nq, nt := 0, 0
	for _, c := range convs {
		nq += len(c.Questions)
		nt += len(c.Turns)
	}
	fmt.Printf("# LoCoMo dev, turn-level retrieval, %s, %s %s/%s, %d CPUs\n\n", time.Now().UTC().Format(time.DateOnly), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Printf("%d conversations, %d turns, %d questions (categories 1-4); top 10 per question in its channel; captions appended: %v\n\n", len(convs), nt, nq, *captions)
	cats := bench.LoCoMoCategories()
	fmt.Print("| system | mode | R@5 | R@10 | hit@10 |")
	for _, c := range cats {
		fmt.Printf(" %s R@10 |", c)
	}
	fmt.Print("\n|---|---|---:|---:|---:|")
	for range cats {
		fmt.Print("---:|")
	}
	fmt.Println()
	row := func(system, mode string, r bench.LoCoMoResult) {
		o := r["overall"]
		fmt.Printf("| %s | %s | %.3f | %.3f | %.3f |", system, mode, o.Recall5, o.Recall10, o.Hit10)
		for _, c := range cats {
			fmt.Printf(" %.3f |", r[c].Recall10)
		}
		fmt.Println()
	}
	run := func(emb engine.Embedder, ec engine.EmbedContext, qa engine.QueryAnalysis, anonymous bool, system string, reqs []engine.SearchRequest, names []string) error {
		dir, err := os.MkdirTemp("", "locomobench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		lc, err := bench.LoadLoCoMoCorpus(ctx, dir, convs, bench.LoCoMoOptions{Captions: *captions, AnonymousSenders: anonymous, Engine: engine.Options{Embedder: emb, EmbedContext: ec, QueryAnalysis: qa}})
		if err != nil {
			return err
		}
		defer lc.Close()
		searchPhase(emb, true)
		for i, req := range reqs {
			r, err := lc.Evaluate(ctx, req)
			if err != nil {
				return err
			}
			row(system, names[i], r)
		}
		return nil
	}
	// BM25 alone: no query analysis either (no names, no times).
	plain := queryAnalysisAblations()[len(queryAnalysisAblations())-1].qa
	if err := run(nil, "", plain, true, "BM25 alone (FTS5 scoring, senders anonymous, no query analysis)", []engine.SearchRequest{{Mode: engine.ModeKeyword}}, []string{"keyword"}); err != nil {
		return err
	}
	if err := run(nil, "", engine.QueryAnalysis{}, false, "cairn", []engine.SearchRequest{{Mode: engine.ModeKeyword}}, []string{"keyword"}); err != nil {
		return err
	}
	for _, spec := range strings.Split(*models, ",") {
		if spec == "" {
			continue
		}
		ne, closeFn, err := openModel(ctx, spec, *cache)
		if err != nil {
			return err
		}
		reqs := []engine.SearchRequest{
			{Mode: engine.ModeSemantic},
			{Mode: engine.ModeHybrid},
			{Mode: engine.ModeHybrid, Fusion: engine.FusionWeighted},
			{Mode: engine.ModeHybrid, Fusion: engine.FusionMinMax},
			{Mode: engine.ModeHybrid, Fusion: engine.FusionRRF},
		}
		names := []string{"semantic", "hybrid (default: " + string(engine.DefaultFusion) + ")", "hybrid weighted", "hybrid minmax", "hybrid rrf"}
		if *profiles {
			for _, p := range engine.Profiles() {
				if p == engine.ProfileCustom {
					continue
				}
				reqs = append(reqs, engine.SearchRequest{Mode: engine.ModeHybrid, Ranking: engine.Ranking{Profile: p}})
				names = append(names, "hybrid, profile "+p)
			}
		}
		if *chromaJS != "" {
			r, err := runChromaPeer(ctx, *chromaJS, convs, ne.emb, *captions)
			if err != nil {
				closeFn()
				return err
			}
			row("Chroma 1.0.0, "+ne.name+" embeddings", "vector query", r)
		}
		for _, ec := range strings.Split(*contexts, ",") {
			if err = run(ne.emb, engine.EmbedContext(ec), engine.QueryAnalysis{}, false, "cairn "+ne.name+", embed "+ec, reqs, names); err != nil {
				break
			}
		}
		if err == nil && *queryPrompt != "" {
			var qp namedEmbedder
			var closeQP func()
			if qp, closeQP, err = withQueryPrompt(ctx, ne, spec, *queryPrompt); err == nil {
				err = run(qp.emb, "content", engine.QueryAnalysis{}, false, "cairn "+qp.name, reqs, names)
				closeQP()
			}
		}
		if err == nil && *ablations {
			for _, a := range queryAnalysisAblations() {
				hyb := []engine.SearchRequest{{Mode: engine.ModeSemantic}, {Mode: engine.ModeHybrid}}
				if err = run(ne.emb, "", a.qa, false, "cairn "+ne.name+", "+a.name, hyb, []string{"semantic", "hybrid (default)"}); err != nil {
					break
				}
			}
		}
		closeFn()
		if err != nil {
			return err
		}
	}
	return nil
}

// runChromaPeer starts the real Chroma server from jsDir on 127.0.0.1 with
// a fresh data dir, runs the protocol against it, and stops it.
func runChromaPeer(ctx context.Context, jsDir string, convs []bench.Conversation, emb engine.Embedder, captions bool) (bench.LoCoMoResult, error) {
	dir, err := os.MkdirTemp("", "locomo-chroma-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	url, cmd, err := startChroma(ctx, jsDir, filepath.Join(dir, "data"))
	if err != nil {
		return nil, err
	}
	defer stopChroma(cmd)
	return bench.EvaluateLoCoMoChroma(ctx, url, convs, emb, captions)
}

// startChroma starts the real Chroma server from jsDir on 127.0.0.1 with
// its data in dataDir and waits for its heartbeat; stopChroma kills it.
func startChroma(ctx context.Context, jsDir, dataDir string) (string, *exec.Cmd, error) {
	// node runs in jsDir: the script's path must not be relative to ours.
	jsDir, err := filepath.Abs(jsDir)
	if err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(jsDir, "node_modules", "chromadb", "dist", "cli.mjs"), "run",
		"--path", dataDir, "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	cmd.Dir = jsDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(url + "/api/v2/heartbeat")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(start) > 2*time.Minute {
			stopChroma(cmd)
			return "", nil, fmt.Errorf("chroma did not answer on %s within 2 minutes", url)
		}
	}
	return url, cmd, nil
}

func stopChroma(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
}

// queryAnalysisAblations are the engine's query analysis with each part
// switched off (the reply lift, off by default, switched on), then all of
// them off.
func queryAnalysisAblations() []struct {
	name string
	qa   engine.QueryAnalysis
} {
	return []struct {
		name string
		qa   engine.QueryAnalysis
	}{
		{"without sender names", engine.QueryAnalysis{NoSenderNames: true}},
		{"without time expressions", engine.QueryAnalysis{NoTimes: true}},
		{"without the question weight", engine.QueryAnalysis{NoQuestionWeight: true}},
		{"with the reply lift (off by default)", engine.QueryAnalysis{LiftReplies: true}},
		{"without turn context (and so without the rank blend)", engine.QueryAnalysis{NoTurnContext: true}},
		{"without the rank blend", engine.QueryAnalysis{NoRankBlend: true}},
		{"without any of them", engine.QueryAnalysis{NoSenderNames: true, NoTimes: true, NoQuestionWeight: true, NoTurnContext: true, NoRankBlend: true}},
	}
}

// Command embedbench measures embedding throughput and latency of the native
// and hugot backends on one model directory in one run, each backend in a
// child process (so peak RSS and load time are its own):
//
//	go run [-tags hugot] ./embed/internal/embedbench -model DIR|builtin [-backends native,hugot] [-dur 5s]
//
// Texts are built from whole-word vocabulary entries so that each has exactly
// the requested token count ([CLS] and [SEP] included). The cache is off.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/embed/builtin"
)

type result struct {
	Backend    string             `json:"backend"`
	Kernels    string             `json:"kernels"`
	LoadMS     float64            `json:"load_ms"`
	PeakRSSMB  float64            `json:"peak_rss_mb"`
	Throughput map[string]float64 `json:"throughput"`  // "tokens=20/batch=8" -> sentences/s (wall clock)
	PerCPUSec  map[string]float64 `json:"per_cpu_sec"` // sentences per CPU-second (user+sys of the process)
	QueryCPUMS float64            `json:"query_cpu_ms"`
	P50MS      float64            `json:"query_p50_ms"`
	P99MS      float64            `json:"query_p99_ms"`
}

func main() {
	model := flag.String("model", "", `model directory, or "builtin" for the built-in model`)
	backends := flag.String("backends", "native", "backends to measure (hugot needs -tags hugot)")
	child := flag.String("child", "", "internal: measure one backend and print JSON")
	kernels := flag.String("kernels", "", "native kernels (default: fastest)")
	dur := flag.Duration("dur", 4*time.Second, "minimum measuring time per cell")
	queries := flag.Int("queries", 200, "single-query latency samples")
	flag.Parse()
	if *model == "" {
		fmt.Fprintln(os.Stderr, "embedbench: -model DIR is required")
		os.Exit(2)
	}
	if *child != "" {
		r, err := measure(*model, embed.Backend(*child), embed.Kernels(*kernels), *dur, *queries)
		if err != nil {
			fmt.Fprintln(os.Stderr, "embedbench:", err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(r)
		return
	}
	fmt.Printf("# %s, GOMAXPROCS=%d, %s/%s, %s\n", time.Now().UTC().Format(time.RFC3339), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, runtime.Version())
	var rs []result
	for _, b := range strings.Split(*backends, ",") {
		cmd := exec.Command(os.Args[0], "-model", *model, "-child", b, "-kernels", *kernels, "-dur", dur.String(), "-queries", fmt.Sprint(*queries))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			fmt.Fprintf(os.Stderr, "embedbench: %s: %v\n", b, err)
			os.Exit(1)
		}
		var r result
		if err := json.Unmarshal(out, &r); err != nil {
			fmt.Fprintf(os.Stderr, "embedbench: %s: %v\n", b, err)
			os.Exit(1)
		}
		rs = append(rs, r)
	}
	cells := []string{}
	for _, tok := range []int{20, 60} {
		for _, bs := range []int{1, 8, 32} {
			cells = append(cells, fmt.Sprintf("tokens=%d/batch=%d", tok, bs))
		}
	}
	fmt.Printf("| metric |")
	for _, r := range rs {
		fmt.Printf(" %s (%s) |", r.Backend, r.Kernels)
	}
	if len(rs) == 2 {
		fmt.Printf(" ratio |")
	}
	fmt.Println()
	fmt.Println("|---|" + strings.Repeat("---|", len(rs)+min(1, len(rs)-1)))
	row := func(name string, f func(r result) float64, ratio bool, format string) {
		fmt.Printf("| %s |", name)
		for _, r := range rs {
			fmt.Printf(" "+format+" |", f(r))
		}
		if len(rs) == 2 {
			a, b := f(rs[0]), f(rs[1])
			if ratio {
				fmt.Printf(" %.1fx |", a/b)
			} else {
				fmt.Printf(" %.1fx |", b/a)
			}
		}
		fmt.Println()
	}
	for _, c := range cells {
		row("sentences/s "+c, func(r result) float64 { return r.Throughput[c] }, true, "%.1f")
	}
	for _, c := range cells {
		row("sentences per CPU-second "+c, func(r result) float64 { return r.PerCPUSec[c] }, true, "%.1f")
	}
	row("query CPU ms (15 tokens)", func(r result) float64 { return r.QueryCPUMS }, false, "%.2f")
	row("query p50 ms (15 tokens)", func(r result) float64 { return r.P50MS }, false, "%.2f")
	row("query p99 ms (15 tokens)", func(r result) float64 { return r.P99MS }, false, "%.2f")
	row("load ms", func(r result) float64 { return r.LoadMS }, false, "%.0f")
	row("peak RSS MB", func(r result) float64 { return r.PeakRSSMB }, false, "%.0f")
}

// texts returns n texts of exactly tokens tokens each.
func texts(tok *embed.Tokenizer, words []string, rng *rand.Rand, n, tokens int) []string {
	out := make([]string, n)
	for i := range out {
		var w []string
		for {
			w = append(w, words[rng.IntN(len(words))])
			ids, _ := tok.Encode(strings.Join(w, " "))
			if len(ids) == tokens {
				break
			}
			if len(ids) > tokens {
				w = w[:len(w)-1]
			}
		}
		out[i] = strings.Join(w, " ")
	}
	return out
}

func vocabWords(fsys fs.FS) ([]string, error) {
	b, err := fs.ReadFile(fsys, "tokenizer.json")
	if err != nil {
		return nil, err
	}
	var tj struct {
		Model struct{ Vocab map[string]int } `json:"model"`
	}
	if err := json.Unmarshal(b, &tj); err != nil {
		return nil, err
	}
	var ws []string
	for w, id := range tj.Model.Vocab {
		if id > 2000 && len(w) > 2 && strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") == "" {
			ws = append(ws, w)
		}
	}
	slices.Sort(ws)
	return ws, nil
}

func measure(dir string, backend embed.Backend, k embed.Kernels, dur time.Duration, queries int) (result, error) {
	ctx := context.Background()
	start := time.Now()
	opts := embed.Options{Backend: backend, Kernels: k, CacheSize: -1, BatchSize: 32}
	var m *embed.Model
	var err error
	fsys := fs.FS(builtin.Files())
	if dir == "builtin" {
		m, err = builtin.Open(ctx, opts)
	} else {
		m, err = embed.Open(ctx, dir, opts)
		fsys = os.DirFS(dir)
	}
	if err != nil {
		return result{}, err
	}
	defer m.Close()
	r := result{Backend: string(backend), Kernels: string(m.Kernels()), LoadMS: float64(time.Since(start).Microseconds()) / 1000, Throughput: map[string]float64{}, PerCPUSec: map[string]float64{}}
	words, err := vocabWords(fsys)
	if err != nil {
		return r, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// Warm up (hugot compiles its graph per shape).
	if _, err := m.Embed(ctx, texts(m.Tokenizer(), words, rng, 1, 15)); err != nil {
		return r, err
	}
	for _, tok := range []int{20, 60} {
		for _, bs := range []int{1, 8, 32} {
			pool := texts(m.Tokenizer(), words, rng, 64, tok)
			if _, err := m.Embed(ctx, pool[:bs]); err != nil { // warm-up for this shape
				return r, err
			}
			n := 0
			t0, c0 := time.Now(), cpuTime()
			for time.Since(t0) < dur || n < 2*bs {
				batch := make([]string, bs)
				for i := range batch {
					batch[i] = pool[(n+i)%len(pool)]
				}
				if _, err := m.Embed(ctx, batch); err != nil {
					return r, err
				}
				n += bs
			}
			cell := fmt.Sprintf("tokens=%d/batch=%d", tok, bs)
			r.Throughput[cell] = float64(n) / time.Since(t0).Seconds()
			r.PerCPUSec[cell] = float64(n) / (cpuTime() - c0).Seconds()
		}
	}
	qs := texts(m.Tokenizer(), words, rng, 50, 15)
	lat := make([]float64, 0, queries)
	c0 := cpuTime()
	for i := 0; i < queries; i++ {
		t0 := time.Now()
		if _, err := m.Embed(ctx, qs[i%len(qs):i%len(qs)+1]); err != nil {
			return r, err
		}
		lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
	}
	r.QueryCPUMS = float64((cpuTime() - c0).Microseconds()) / 1000 / float64(queries)
	slices.Sort(lat)
	r.P50MS = lat[len(lat)/2]
	r.P99MS = lat[len(lat)*99/100]
	r.PeakRSSMB = peakRSS()
	return r, nil
}

// cpuTime is the user+system CPU time of this process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func peakRSS() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "VmHWM:") {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(s.Text(), "VmHWM:")), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

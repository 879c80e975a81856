// Command embedspeed is cairn's side of the embedding speed comparison that
// bench/embedspeed/run.py drives (make bench-embed-peers): it loads one model
// (a sentence-transformers directory, or the built-in form), embeds the
// sentences of a JSON file at each batch size and prints one JSON result.
// run.py runs it in a fresh process per configuration, GOMAXPROCS set by the
// caller, so load time and peak RSS are its own.
//
//	embedspeed -model DIR|builtin -sentences FILE -batches 1,8,32
//
// FILE is {"<set name>": ["sentence", ...], ...}. The cache is off, so every
// sentence is encoded each time.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/embed/builtin"
)

// result is the JSON line run.py reads; peers.py prints the same shape.
type result struct {
	Runtime    string             `json:"runtime"`
	Threads    int                `json:"threads"`
	LoadMS     float64            `json:"load_ms"`
	PeakRSSMB  float64            `json:"peak_rss_mb"`
	Throughput map[string]float64 `json:"throughput"`  // "<set>/batch=<b>" -> sentences/s, wall clock
	PerCPUSec  map[string]float64 `json:"per_cpu_sec"` // "<set>/batch=<b>" -> sentences per CPU-second of the process
	P50MS      map[string]float64 `json:"p50_ms"`      // "<set>" -> single-query latency, batch 1
	P99MS      map[string]float64 `json:"p99_ms"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "embedspeed:", err)
		os.Exit(1)
	}
}

func run() error {
	model := flag.String("model", "builtin", "sentence-transformers `DIR`, or builtin")
	sentences := flag.String("sentences", "", "JSON `FILE` of sentence sets")
	batches := flag.String("batches", "1,8,32", "batch sizes")
	name := flag.String("name", "", "runtime name in the result (default cairn-<model>)")
	flag.Parse()
	var sets map[string][]string
	b, err := os.ReadFile(*sentences)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &sets); err != nil {
		return fmt.Errorf("%s: %w", *sentences, err)
	}
	var sizes []int
	for _, f := range strings.Split(*batches, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return fmt.Errorf("-batches: %q is not a positive integer", f)
		}
		sizes = append(sizes, n)
	}

	ctx := context.Background()
	opts := embed.Options{CacheSize: -1}
	start := time.Now()
	var m *embed.Model
	if *model == "builtin" {
		m, err = builtin.Open(ctx, opts)
	} else {
		m, err = embed.Open(ctx, *model, opts)
	}
	if err != nil {
		return err
	}
	defer m.Close()
	res := result{
		Runtime:    *name,
		Threads:    runtime.GOMAXPROCS(0),
		LoadMS:     ms(time.Since(start)),
		Throughput: map[string]float64{},
		PerCPUSec:  map[string]float64{},
		P50MS:      map[string]float64{},
		P99MS:      map[string]float64{},
	}
	if res.Runtime == "" {
		res.Runtime = "cairn-" + map[bool]string{true: "builtin", false: "fp32"}[*model == "builtin"]
	}
	names := make([]string, 0, len(sets))
	for k := range sets {
		names = append(names, k)
	}
	slices.Sort(names)
	// Warm up once on every set (first-touch page faults, pools).
	for _, set := range names {
		if _, err := m.Embed(ctx, sets[set][:min(32, len(sets[set]))]); err != nil {
			return err
		}
	}
	for _, set := range names {
		texts := sets[set]
		for _, bs := range sizes {
			var lat []time.Duration
			cpu0 := cpuTime()
			t0 := time.Now()
			for i := 0; i < len(texts); i += bs {
				q := time.Now()
				if _, err := m.Embed(ctx, texts[i:min(i+bs, len(texts))]); err != nil {
					return err
				}
				lat = append(lat, time.Since(q))
			}
			wall, cpu := time.Since(t0), cpuTime()-cpu0
			key := fmt.Sprintf("%s/batch=%d", set, bs)
			res.Throughput[key] = float64(len(texts)) / wall.Seconds()
			res.PerCPUSec[key] = float64(len(texts)) / cpu.Seconds()
			if bs == 1 {
				slices.Sort(lat)
				res.P50MS[set] = ms(lat[len(lat)/2])
				res.P99MS[set] = ms(lat[min(len(lat)-1, len(lat)*99/100)])
			}
		}
	}
	res.PeakRSSMB = peakRSSMB()
	return json.NewEncoder(os.Stdout).Encode(res)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// cpuTime is the user+system time of this process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSSMB is the process's peak resident set, VmHWM in /proc/self/status
// (getrusage's maxrss would carry the parent's peak over exec).
func peakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

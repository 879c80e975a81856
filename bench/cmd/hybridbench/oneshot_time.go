package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// oneShotRun is one whole `cairn search` process: wall time from start to
// exit, its CPU time and peak resident memory (the kernel's rusage).
type oneShotRun struct {
	wall, cpu time.Duration
	maxRSS    int64 // KiB
}

// timeOneShot runs bin search QUERY on data dir store, output discarded.
func timeOneShot(ctx context.Context, bin, store, query string) (oneShotRun, error) {
	cmd := exec.CommandContext(ctx, bin, "search", "--limit", "5", query)
	cmd.Env = append(os.Environ(), "CAIRN_DATA_DIR="+store)
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(t0)
	if err != nil {
		return oneShotRun{}, fmt.Errorf("%s search: %w: %s", bin, err, out)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r := oneShotRun{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru != nil {
		r.maxRSS = ru.Maxrss
	}
	return r, nil
}

// runOneShot times one-shot `cairn search` processes on a store written by
// oneshot-store, interleaved with a baseline binary on its own copy of the
// store when -base is given (a newer binary may write a format the older
// one refuses), and gates the median wall time.
func runOneShot(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("oneshot", flag.ExitOnError)
	bin := fs.String("bin", "bin/cairn", "cairn `binary` to time")
	store := fs.String("store", "", "data `DIR` written by oneshot-store")
	base := fs.String("base", "", "baseline cairn `binary` (optional)")
	baseStore := fs.String("base-store", "", "baseline's copy of the store (default -store)")
	runs := fs.Int("runs", 20, "processes per binary")
	gate := fs.Duration("gate", 0, "fail when the median wall time exceeds this (0: no gate)")
	fs.Parse(args)
	if *store == "" {
		return fmt.Errorf("oneshot: -store is required")
	}
	if *baseStore == "" {
		*baseStore = *store
	}
	queries := []string{"sulo kamine tari", "deploy failed again", "wal mode busy timeout", "why did the build break"}
	type arm struct {
		label, bin, store string
		runs              []oneShotRun
	}
	arms := []*arm{{label: filepath.Base(*bin), bin: *bin, store: *store}}
	if *base != "" {
		arms = append(arms, &arm{label: "baseline " + filepath.Base(*base), bin: *base, store: *baseStore})
	}
	// One warm-up each, so that both read the store from the page cache.
	for _, a := range arms {
		if _, err := timeOneShot(ctx, a.bin, a.store, queries[0]); err != nil {
			return err
		}
	}
	for i := range *runs {
		for _, a := range arms {
			r, err := timeOneShot(ctx, a.bin, a.store, queries[i%len(queries)])
			if err != nil {
				return err
			}
			a.runs = append(a.runs, r)
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("# one-shot cairn search, %d processes per binary, interleaved; load average %s\n", *runs, load)
	fmt.Println("| binary | wall p50 | wall p90 | CPU p50 | peak RSS p50 |\n|---|---:|---:|---:|---:|")
	median := func(rs []oneShotRun, f func(oneShotRun) int64, p float64) int64 {
		v := make([]int64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[int(p*float64(len(v)-1))]
	}
	wall := func(r oneShotRun) int64 { return int64(r.wall) }
	for _, a := range arms {
		fmt.Printf("| %s | %s | %s | %s | %.0f MiB |\n", a.label,
			ms(time.Duration(median(a.runs, wall, .5))), ms(time.Duration(median(a.runs, wall, .9))),
			ms(time.Duration(median(a.runs, func(r oneShotRun) int64 { return int64(r.cpu) }, .5))),
			float64(median(a.runs, func(r oneShotRun) int64 { return r.maxRSS }, .5))/1024)
	}
	if len(arms) == 2 {
		fmt.Printf("\nwall p50 ratio %s / baseline: %.3f\n", arms[0].label,
			float64(median(arms[0].runs, wall, .5))/float64(median(arms[1].runs, wall, .5)))
	}
	if p50 := time.Duration(median(arms[0].runs, wall, .5)); *gate > 0 && p50 > *gate {
		return gateFailure{fmt.Sprintf("one-shot search wall p50: %s, limit %s", ms(p50), ms(*gate))}
	}
	return nil
}

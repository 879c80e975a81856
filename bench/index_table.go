package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// RecallTargets are the recall@10 levels at which IndexMarkdown compares
// latencies.
var recallTargets = []float64{0.90, 0.95, 0.99, 0.995}

// LatencyAtRecall interpolates p50 (or p99 with p99=true) linearly in recall
// along one peer's ef curve and returns the latency at which recall first
// reaches target; ok is false if the curve never reaches it.
//
// When the lowest ef already reaches target, that point's latency is
// returned (an upper bound); atFloor reports it.
func LatencyAtRecall(curve []IndexRow, target float64, p99 bool) (us float64, ok bool) {
	us, ok, _ = latencyAtRecall(curve, target, p99)
	return us, ok
}

func latencyAtRecall(curve []IndexRow, target float64, p99 bool) (us float64, ok, atFloor bool) {
	c := slices.Clone(curve)
	slices.SortFunc(c, func(a, b IndexRow) int { return a.Ef - b.Ef })
	lat := func(r IndexRow) float64 {
		if p99 {
			return r.P99us
		}
		return r.P50us
	}
	for i, r := range c {
		if r.Recall+1e-9 < target {
			continue
		}
		if i == 0 || c[i-1].Recall >= r.Recall {
			return lat(r), true, i == 0
		}
		prev := c[i-1]
		f := (target - prev.Recall) / (r.Recall - prev.Recall)
		return lat(prev) + f*(lat(r)-lat(prev)), true, false
	}
	return 0, false, false
}

func fmtUs(us float64, atFloor bool) string {
	if atFloor {
		return fmt.Sprintf("≤%.0f", us)
	}
	return fmt.Sprintf("%.0f", us)
}

// IndexMarkdown renders the comparison tables: build, recall/latency curves,
// cairn/peer latency ratios at equal recall, filtered search and memory.
//
// When every query row carries thread CPU times, the tables use them (p50,
// p99) and show the wall-time p50 beside them; otherwise wall time.
//
// It is long because it writes the tables one after another into one
// document, each a short loop over the same rows.
func IndexMarkdown(rows []IndexRow) string {
	var b strings.Builder
	useCPU := true
	for _, r := range rows {
		if (r.Kind == "query" || r.Kind == "filter") && r.CPUP50 == 0 {
			useCPU = false
		}
	}
	clock := "wall time"
	if useCPU {
		clock = "thread CPU time"
		rows = slices.Clone(rows)
		for i := range rows {
			r := &rows[i]
			r.P50us, r.CPUP50 = r.CPUP50, r.P50us
			r.P99us, r.CPUP99 = r.CPUP99, r.P99us
		}
	}
	pick := func(f func(IndexRow) bool) []IndexRow {
		var out []IndexRow
		for _, r := range rows {
			if f(r) {
				out = append(out, r)
			}
		}
		return out
	}
	var datasets, peers []string
	for _, r := range rows {
		if r.Kind != "memory" && !slices.Contains(datasets, r.Dataset) {
			datasets = append(datasets, r.Dataset)
		}
		if !slices.Contains(peers, r.Peer) {
			peers = append(peers, r.Peer)
		}
	}
	curve := func(peer, ds string) []IndexRow {
		return pick(func(r IndexRow) bool {
			return r.Kind == "query" && r.Peer == peer && r.Dataset == ds && r.N == nOf(rows, ds)
		})
	}

	// Build.
	builds := pick(func(r IndexRow) bool { return r.Kind == "build" })
	if len(builds) > 0 {
		b.WriteString("### Build time (CPU s = process user+sys over all threads; wall s is only meaningful on an idle machine)\n\n| data set | peer | threads | build CPU s | cairn / peer (CPU) | build wall s | cairn / peer (wall) |\n|---|---|---:|---:|---:|---:|---:|\n")
		for _, r := range builds {
			ratio, wratio := "-", "-"
			for _, c := range builds {
				if r.Peer != "cairn" && c.Peer == "cairn" && c.Dataset == r.Dataset && c.Threads == r.Threads && c.N == r.N {
					if r.BuildC > 0 && c.BuildC > 0 {
						ratio = fmt.Sprintf("**%.2f**", c.BuildC/r.BuildC)
					}
					if r.BuildS > 0 {
						wratio = fmt.Sprintf("%.2f", c.BuildS/r.BuildS)
					}
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %.1f | %s | %.1f | %s |\n", r.Dataset, r.Peer, r.Threads, r.BuildC, ratio, r.BuildS, wratio)
		}
		b.WriteString("\n")
	}

	// Equal-recall ratios.
	fmt.Fprintf(&b, "### cairn / peer query latency at equal recall@10 (single-threaded, %s, interpolated along the ef curve; ≤ = reached at the lowest ef)\n\n", clock)
	b.WriteString("| data set | recall@10 | cairn p50 µs | cairn p99 µs | peer | peer p50 µs | peer p99 µs | p50 ratio | p99 ratio |\n|---|---:|---:|---:|---|---:|---:|---:|---:|\n")
	for _, ds := range datasets {
		cc := curve("cairn", ds)
		if len(cc) == 0 {
			continue
		}
		for _, t := range recallTargets {
			c50, ok, cf := latencyAtRecall(cc, t, false)
			c99, _, _ := latencyAtRecall(cc, t, true)
			for _, p := range peers {
				if p == "cairn" || p == "exact" {
					continue
				}
				pc := curve(p, ds)
				if len(pc) == 0 {
					continue
				}
				p50, pok, pf := latencyAtRecall(pc, t, false)
				p99, _, _ := latencyAtRecall(pc, t, true)
				switch {
				case ok && pok:
					fmt.Fprintf(&b, "| %s | %.3f | %s | %.0f | %s | %s | %.0f | **%.2f** | %.2f |\n", ds, t, fmtUs(c50, cf), c99, p, fmtUs(p50, pf), p99, c50/p50, c99/p99)
				case ok:
					fmt.Fprintf(&b, "| %s | %.3f | %s | %.0f | %s | not reached (max %.3f) | | | |\n", ds, t, fmtUs(c50, cf), c99, p, maxRecall(pc))
				case pok:
					fmt.Fprintf(&b, "| %s | %.3f | not reached (max %.3f) | | %s | %s | %.0f | | |\n", ds, t, maxRecall(cc), p, fmtUs(p50, pf), p99)
				}
			}
		}
		if ex := curve("exact", ds); len(ex) > 0 {
			if c50, ok := LatencyAtRecall(cc, 0.99, false); ok {
				fmt.Fprintf(&b, "| %s | 1.000 | (cairn at 0.99: %.0f) | | exact scan | %.0f | %.0f | %.3f | |\n", ds, c50, ex[0].P50us, ex[0].P99us, c50/ex[0].P50us)
			}
		}
	}
	b.WriteString("\n")

	// Curves.
	for _, ds := range datasets {
		fmt.Fprintf(&b, "### Recall@10 / latency curve, data set %s (single-threaded queries, %s µs; wall = wall-time p50)\n\n", ds, clock)
		var ps []string
		for _, p := range peers {
			if len(curve(p, ds)) > 0 {
				ps = append(ps, p)
			}
		}
		b.WriteString("| ef |")
		for _, p := range ps {
			fmt.Fprintf(&b, " %s recall | p50 | p99 | wall |", p)
		}
		b.WriteString("\n|---:|")
		for range ps {
			b.WriteString("---:|---:|---:|---:|")
		}
		b.WriteString("\n")
		var efs []int
		for _, p := range ps {
			for _, r := range curve(p, ds) {
				if !slices.Contains(efs, r.Ef) {
					efs = append(efs, r.Ef)
				}
			}
		}
		slices.Sort(efs)
		for _, ef := range efs {
			label := fmt.Sprint(ef)
			if ef == 0 {
				label = "exact"
			}
			fmt.Fprintf(&b, "| %s |", label)
			for _, p := range ps {
				found := false
				for _, r := range curve(p, ds) {
					if r.Ef == ef {
						fmt.Fprintf(&b, " %.4f | %.0f | %.0f | %.0f |", r.Recall, r.P50us, r.P99us, r.CPUP50)
						found = true
					}
				}
				if !found {
					b.WriteString(" | | | |")
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}

	// Filters.
	filters := pick(func(r IndexRow) bool { return r.Kind == "filter" })
	if len(filters) > 0 {
		// The wall column matters here: cairn's exact scan of a large
		// allowed set runs on several goroutines, which the calling
		// thread's CPU time does not see.
		fmt.Fprintf(&b, "### Filtered search (allowed ids uniform at random, not correlated with clusters; %s; wall = wall-time p50)\n\n", clock)
		b.WriteString("| data set | selectivity | peer | ef | recall@10 | p50 µs | p99 µs | wall | cairn p50 / peer p50 |\n|---|---:|---|---:|---:|---:|---:|---:|---:|\n")
		for _, r := range filters {
			ratio := "-"
			for _, c := range filters {
				if r.Peer != "cairn" && c.Peer == "cairn" && c.Dataset == r.Dataset && c.Sel == r.Sel && r.P50us > 0 && (c.Ef == r.Ef || r.Ef == 0) {
					ratio = fmt.Sprintf("%.2f", c.P50us/r.P50us)
				}
			}
			wall := r.CPUP50
			if !useCPU {
				wall = r.P50us
			}
			fmt.Fprintf(&b, "| %s | %g%% | %s | %d | %.4f | %.0f | %.0f | %.0f | %s |\n", r.Dataset, r.Sel*100, r.Peer, r.Ef, r.Recall, r.P50us, r.P99us, wall, ratio)
		}
		b.WriteString("\n")
	}

	// Footprints.
	if fps := pick(func(r IndexRow) bool { return r.Kind == "footprint" }); len(fps) > 0 {
		b.WriteString("### Footprint: the saved index on disk, and a fresh process that loaded it and answered one query (raw float32 is 4 x dim bytes a vector)\n\n")
		b.WriteString("| data set | n | peer | bytes on disk | per vector | process RSS | RSS added by the load | per vector |\n|---|---:|---|---:|---:|---:|---:|---:|\n")
		for _, r := range fps {
			n := float64(max(r.N, 1))
			fmt.Fprintf(&b, "| %s | %d | %s | %.1f MB | %.0f B | %.1f MB | %.1f MB | %.0f B |\n", r.Dataset, r.N, r.Peer,
				float64(r.DiskB)/1e6, float64(r.DiskB)/n, float64(r.RSSB)/1e6, float64(r.Bytes)/1e6, float64(r.Bytes)/n)
		}
		b.WriteString("\n")
	}

	// Memory.
	mem := pick(func(r IndexRow) bool { return r.Kind == "memory" })
	if len(mem) > 0 {
		b.WriteString("### Memory and build at scale\n\n| peer | n | threads | build CPU s | build wall s | bytes used | raw vectors+lists | ratio |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, r := range mem {
			fmt.Fprintf(&b, "| %s | %d | %d | %.1f | %.1f | %.1f MiB | %.1f MiB | %.2f |\n", r.Peer, r.N, r.Threads, r.BuildC, r.BuildS,
				float64(r.Bytes)/(1<<20), float64(r.RawB)/(1<<20), float64(r.Bytes)/float64(r.RawB))
		}
		big := pick(func(r IndexRow) bool {
			return r.Kind == "query" && r.N != nOf(rows, r.Dataset) &&
				slices.ContainsFunc(mem, func(m IndexRow) bool { return m.N == r.N && m.Peer == r.Peer })
		})
		if len(big) > 0 {
			b.WriteString("\n| peer | n | ef | recall@10 | p50 µs | p99 µs |\n|---|---:|---:|---:|---:|---:|\n")
			for _, r := range big {
				fmt.Fprintf(&b, "| %s | %d | %d | %.4f | %.0f | %.0f |\n", r.Peer, r.N, r.Ef, r.Recall, r.P50us, r.P99us)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func maxRecall(c []IndexRow) float64 {
	m := math.Inf(-1)
	for _, r := range c {
		m = max(m, r.Recall)
	}
	return m
}

// nOf is the n of a data set's curve rows (the smallest, so that 1M memory
// runs of the same data set do not mix into the 100k curves).
func nOf(rows []IndexRow, ds string) int {
	n := 0
	for _, r := range rows {
		if r.Dataset == ds && r.Kind != "memory" && (n == 0 || r.N < n) {
			n = r.N
		}
	}
	return n
}

package bench

import (
	"math"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// IndexRow is one measurement of the index comparison. External peers
// (bench/peers/*.py, *.cpp) print the same fields as JSON lines.
type IndexRow struct {
	Peer    string  `json:"peer"`
	Dataset string  `json:"dataset"`
	N       int     `json:"n"`
	Kind    string  `json:"kind"` // build, query, filter, memory, footprint
	Threads int     `json:"threads,omitempty"`
	BuildS  float64 `json:"build_s,omitempty"`     // wall seconds
	BuildC  float64 `json:"build_cpu_s,omitempty"` // process CPU seconds (user+sys, all threads)
	Ef      int     `json:"ef,omitempty"`
	Sel     float64 `json:"sel,omitempty"` // filter selectivity (fraction allowed)
	Recall  float64 `json:"recall,omitempty"`
	P50us   float64 `json:"p50_us,omitempty"`
	P99us   float64 `json:"p99_us,omitempty"`
	MeanUs  float64 `json:"mean_us,omitempty"`
	CPUP50  float64 `json:"cpu_p50_us,omitempty"` // per-query thread CPU time: immune to preemption by other processes
	CPUP99  float64 `json:"cpu_p99_us,omitempty"`
	Bytes   int64   `json:"bytes,omitempty"`      // memory used by the index
	RawB    int64   `json:"raw_bytes,omitempty"`  // float32 vectors + neighbour lists
	DiskB   int64   `json:"disk_bytes,omitempty"` // footprint: the saved index (file or directory)
	RSSB    int64   `json:"rss_bytes,omitempty"`  // footprint: VmRSS of a process that loaded it and answered one query
	Note    string  `json:"note,omitempty"`
	Space   string  `json:"space,omitempty"` // cairn's and vecstore's rows: the space they were built in
}

// QueryFunc answers one k-NN query at the given ef.
type QueryFunc func(q []float32, k, ef int) []uint32

// QueryStats is the result of MeasureQueries.
type QueryStats struct {
	Recall, P50us, P99us, MeanUs float64
	CPUP50, CPUP99               float64 // thread CPU time per query
}

// MeasureQueries runs every query reps times single-threaded, after a
// warm-up over the first 100 queries, and returns recall@k of the first pass
// and the median over passes of each pass's p50, p99 and mean latency, in
// wall time and in thread CPU time (the goroutine is locked to its thread;
// CPU time leaves out the time the thread waited for a core, which on a
// shared machine dominates the wall-time tail).
func MeasureQueries(f QueryFunc, queries []float32, dim, k, ef int, gt [][]uint32, reps int) QueryStats {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	nq := len(queries) / dim
	for i := 0; i < min(nq, 100); i++ {
		f(queries[i*dim:(i+1)*dim], k, ef)
	}
	reps = max(reps, 1)
	var p50s, p99s, means, c50s, c99s []float64
	var recall float64
	lat := make([]float64, nq)
	cpu := make([]float64, nq)
	for r := 0; r < reps; r++ {
		runtime.GC()
		var sum float64
		for i := 0; i < nq; i++ {
			q := queries[i*dim : (i+1)*dim]
			c0 := threadCPU()
			t0 := time.Now()
			got := f(q, k, ef)
			d := float64(time.Since(t0).Nanoseconds()) / 1e3
			cpu[i] = float64(threadCPU()-c0) / 1e3
			lat[i] = d
			sum += d
			if r == 0 {
				recall += Recall(got, gt[i])
			}
		}
		s := slices.Clone(lat)
		slices.Sort(s)
		p50s = append(p50s, Percentile(s, 0.50))
		p99s = append(p99s, Percentile(s, 0.99))
		means = append(means, sum/float64(nq))
		s = slices.Clone(cpu)
		slices.Sort(s)
		c50s = append(c50s, Percentile(s, 0.50))
		c99s = append(c99s, Percentile(s, 0.99))
	}
	return QueryStats{Recall: recall / float64(nq), P50us: median(p50s), P99us: median(p99s), MeanUs: median(means),
		CPUP50: median(c50s), CPUP99: median(c99s)}
}

// processCPU is the CPU time of the whole process (user + system, all
// threads).
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadCPU is the calling thread's CPU time in nanoseconds.
func threadCPU() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// Percentile of sorted values (nearest rank).
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return math.NaN()
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// RawHNSWBytes is the memory floor of an HNSW graph over n float32 vectors of
// dim: the vectors, 2*M uint32 neighbour slots per node at layer 0 and M
// slots per node-level above it (expected n/(M-1) with level multiplier
// 1/ln M).
func RawHNSWBytes(n, dim, m int) int64 {
	upper := float64(n) / float64(m-1)
	return int64(n)*int64(dim)*4 + int64(n)*int64(2*m)*4 + int64(upper*float64(m)*4)
}

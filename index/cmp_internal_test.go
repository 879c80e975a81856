package index

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// processCPU returns the process's user+system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadCPU returns this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), less
// disturbed than wall time on a shared machine.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// TestCompareDump measures this index on a data set dumped by
// TestDumpBenchData ($CAIRN_CMP names the dump; the built index is cached
// next to it as .idx): build time, then per ef the p50/p99 latency,
// recall@10 and distance evaluations per query, a machine-independent
// measure of the work to compare with hnswlib's metric_distance_computations.
// Skipped unless CAIRN_CMP is set.
func TestCompareDump(t *testing.T) {
	path := os.Getenv("CAIRN_CMP")
	if path == "" {
		t.Skip("CAIRN_CMP not set")
	}
	n, _ := strconv.Atoi(os.Getenv("CAIRN_CMP_N"))
	if n == 0 {
		n = 100000
	}
	const dim, nq = 384, 1000
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	vec := func(i int) []float32 {
		v := make([]float32, dim)
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(i*dim+j):]))
		}
		return v
	}
	traw, _ := os.ReadFile(path + ".truth")
	var x *Index
	if b, err := os.ReadFile(path + ".idx"); err == nil && os.Getenv("CAIRN_CMP_REBUILD") == "" {
		if x, err = Unmarshal(b); err != nil {
			t.Fatal(err)
		}
	} else {
		data := make([][]float32, n)
		ids := make([]uint32, n)
		for i := range data {
			data[i] = vec(i)
			ids[i] = uint32(i)
		}
		workers, _ := strconv.Atoi(os.Getenv("CAIRN_CMP_WORKERS"))
		x, _ = New(Options{Dim: dim, Space: IP, Seed: 1, Workers: workers})
		start, cpu0 := time.Now(), processCPU()
		if err := x.InsertBatch(context.Background(), ids, data); err != nil {
			t.Fatal(err)
		}
		t.Logf("build %v wall, %v process CPU (workers %d)", time.Since(start), processCPU()-cpu0, x.opts.Workers)
		b, _ := x.MarshalBinary()
		os.WriteFile(path+".idx", b, 0o644)
	}
	queries := make([][]float32, nq)
	for i := range queries {
		queries[i] = vec(n + i)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := rand.New(rand.NewPCG(1, 2))
	for _, sel := range []float64{0.5, 0.2, 0.1, 0.05, 0.03, 0.02, 0.01, 0.001} {
		allow := randomAllow(r, n, sel)
		e, g, rec, nd := filterPaths(x, queries[:300], allow, 100)
		t.Logf("filter sel=%g exact p50=%v | walk p50=%v recall=%.4f dist/q=%d", sel, e, g, rec, nd)
	}
	for _, ef := range []int{10, 20, 40, 100, 200} {
		var lat []time.Duration
		hit, nd := 0, 0
		for rep := 0; rep < 2; rep++ {
			for qi, q := range queries {
				t0 := threadCPU()
				res, _ := x.Search(q, 10, SearchOptions{Ef: ef})
				lat = append(lat, threadCPU()-t0)
				for _, r := range res {
					for j := 0; j < 10; j++ {
						if binary.LittleEndian.Uint32(traw[4*(qi*10+j):]) == r.ID {
							hit++
							break
						}
					}
				}
				s := x.getScratch(len(x.mu.state))
				s.ndist = 0
				x.mu.RLock()
				x.searchLocked(s, x.newQuery(q), ef, nil)
				x.mu.RUnlock()
				nd += s.ndist
				x.putScratch(s)
			}
		}
		slices.Sort(lat)
		t.Logf("cairn ef=%d p50=%v p99=%v recall=%.4f dist/q=%d", ef, lat[len(lat)/2], lat[len(lat)*99/100],
			float64(hit)/float64(len(lat)*10), nd/len(lat))
	}
}

package vecstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/vecstore"
	"github.com/cairn-dev/cairn/vecstore/chroma"
	"github.com/cairn-dev/cairn/vecstore/where"
)

var seedFlag = flag.Uint64("seed", 0, "seed for randomized tests (0: time-based)")

func testSeed(t *testing.T) uint64 {
	s := *seedFlag
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed=%d)", s, s)
	return s
}

func runHelper(role string) int {
	var err error
	switch role {
	case "crash-writer":
		err = crashWriter()
	case "mp-worker":
		err = mpWorker()
	case "recoder":
		err = recoder()
	default:
		err = fmt.Errorf("unknown helper role %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	return 0
}

func helperCmd(t *testing.T, role string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"VECSTORE_HELPER=" + role}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

func randVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

const crashBatch = 40

// crashWriter adds batches of crashBatch records forever (until killed),
// deleting earlier batches now and then, and prints "ack N" / "del N" after
// each acknowledged write.
func crashWriter() error {
	ctx := context.Background()
	dir := os.Getenv("VS_DIR")
	seed, _ := strconv.ParseUint(os.Getenv("VS_SEED"), 10, 64)
	start, _ := strconv.Atoi(os.Getenv("VS_START"))
	r := rand.New(rand.NewPCG(seed, 7))
	s, err := vecstore.Open(ctx, dir, vecstore.Options{SnapshotMinOps: 200, SnapshotRatio: 0.2})
	if err != nil {
		return err
	}
	c, err := s.CreateCollection(ctx, chroma.CreateCollectionRequest{Name: "crash", GetOrCreate: true,
		Metadata: chroma.Metadata{chroma.MetaVectorCode: where.String(os.Getenv("VS_CODE"))}})
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	for b := start; ; b++ {
		if b > start && r.IntN(5) == 0 {
			victim := start + r.IntN(b-start)
			fmt.Fprintf(out, "try-del %d\n", victim)
			out.Flush()
			if err := s.Delete(ctx, c.ID, chroma.DeleteRequest{Where: where.Eq("batch", where.Int(int64(victim)))}); err != nil {
				return err
			}
			fmt.Fprintf(out, "del %d\n", victim)
			out.Flush()
		}
		req := chroma.AddRequest{}
		for i := 0; i < crashBatch; i++ {
			req.IDs = append(req.IDs, fmt.Sprintf("b%d-%d", b, i))
			req.Embeddings = append(req.Embeddings, randVec(r, 16))
			req.Metadatas = append(req.Metadatas, chroma.Metadata{"batch": where.Int(int64(b)), "i": where.Int(int64(i))})
		}
		if r.IntN(3) == 0 {
			err = s.Upsert(ctx, c.ID, req)
		} else {
			err = s.Add(ctx, c.ID, req)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "ack %d\n", b)
		out.Flush()
	}
}

// TestCrashAtomicity kills a real writer process with SIGKILL at random
// moments, repeatedly, and checks after each reopen that every batch is
// wholly present or wholly absent, every acknowledged write survived, and
// the graph and metadata index agree with the records (Store.Check), in a
// float32, an SQ8 and an sq8r collection (which trains its centroids in
// the write that reaches 4,096 records, at some kill or other).
func TestCrashAtomicity(t *testing.T) {
	rounds := 12
	if testing.Short() {
		rounds = 4
	}
	t.Run("float32", func(t *testing.T) { crashRounds(t, "float32", rounds) })
	t.Run("sq8", func(t *testing.T) { crashRounds(t, "sq8", max(3, rounds/2)) })
	t.Run("sq8r", func(t *testing.T) { crashRounds(t, "sq8r", max(4, rounds/2)) })
}

func crashRounds(t *testing.T, code string, rounds int) {
	seed := testSeed(t)
	r := rand.New(rand.NewPCG(seed, 1))
	dir := t.TempDir()
	ctx := context.Background()
	acked := map[int]bool{}   // batches acknowledged and not (acknowledged) deleted
	deleted := map[int]bool{} // acknowledged deletes
	next := 0
	for round := 0; round < rounds; round++ {
		cmd := helperCmd(t, "crash-writer", "VS_DIR="+dir, fmt.Sprintf("VS_SEED=%d", seed+uint64(round)),
			fmt.Sprintf("VS_START=%d", next), "VS_CODE="+code)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var lines []string
		done := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				mu.Lock()
				lines = append(lines, sc.Text())
				mu.Unlock()
			}
			close(done)
		}()
		time.Sleep(time.Duration(300+r.IntN(900)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		_ = cmd.Wait()
		maxBatch := next - 1
		inflightDel := -1 // a delete that may have committed without being acknowledged
		for _, l := range lines {
			var kind string
			var b int
			fmt.Sscanf(l, "%s %d", &kind, &b)
			switch kind {
			case "ack":
				acked[b] = true
				maxBatch = max(maxBatch, b)
			case "try-del":
				inflightDel = b
			case "del":
				delete(acked, b)
				deleted[b] = true
				inflightDel = -1
			}
		}
		// The batch in flight when killed may have committed.
		next = maxBatch + 2
		s, err := vecstore.Open(ctx, dir, vecstore.Options{})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		if err := s.Check(ctx); err != nil {
			t.Fatalf("round %d: check after kill: %v", round, err)
		}
		c, err := s.GetCollection(ctx, chroma.DefaultTenant, chroma.DefaultDatabase, "crash")
		if err != nil {
			s.Close()
			if round == 0 && len(lines) == 0 {
				continue // killed before creating anything
			}
			t.Fatalf("round %d: %v", round, err)
		}
		res, err := s.Get(ctx, c.ID, chroma.GetRequest{Include: []chroma.Include{chroma.IncludeMetadatas}})
		if err != nil {
			t.Fatal(err)
		}
		perBatch := map[int]int{}
		for _, md := range res.Metadatas {
			perBatch[int(md["batch"].Int)]++
		}
		for b, n := range perBatch {
			if n != crashBatch {
				t.Errorf("round %d: batch %d has %d of %d records (torn batch)", round, b, n, crashBatch)
			}
			if deleted[b] && !acked[b] {
				t.Errorf("round %d: batch %d was deleted (acknowledged) but is present", round, b)
			}
		}
		for b := range acked {
			if b == inflightDel && perBatch[b] == 0 {
				continue // the unacknowledged delete committed
			}
			if perBatch[b] != crashBatch {
				t.Errorf("round %d: acknowledged batch %d lost (%d records)", round, b, perBatch[b])
			}
		}
		// A query must only return existing records.
		q, err := s.Query(ctx, c.ID, chroma.QueryRequest{Embeddings: [][]float32{make([]float32, 16)}, NResults: ptrInt(20)})
		if err != nil {
			t.Fatal(err)
		}
		_ = q
		t.Logf("round %d: %d writer lines, %d batches on disk, %d records", round, len(lines), len(perBatch), len(res.IDs))
		// Present-but-unacknowledged batches count as written from now on.
		for b := range perBatch {
			acked[b] = true
			delete(deleted, b)
		}
		for b := range deleted {
			if perBatch[b] == 0 {
				delete(acked, b)
			}
		}
		if inflightDel >= 0 && perBatch[inflightDel] == 0 {
			delete(acked, inflightDel)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func ptrInt(i int) *int { return &i }

// mpStats is what each multi-process worker reports.
type mpStats struct {
	Proc       int       `json:"proc"`
	Writes     int       `json:"writes"`
	Reads      int       `json:"reads"`
	Queries    int       `json:"queries"`
	VisChecks  int       `json:"visibility_checks"`
	VisMisses  int       `json:"visibility_misses"`
	Errors     int       `json:"errors"`
	FirstError string    `json:"first_error,omitempty"`
	LatP50ms   float64   `json:"write_p50_ms"`
	LatP99ms   float64   `json:"write_p99_ms"`
	LatMaxms   float64   `json:"write_max_ms"`
	Latencies  []float64 `json:"latencies_ms"`
}

// mpWorker writes one record at a time for VS_DURATION, publishing each
// acknowledged write in ack-<proc>; between writes it reads another
// process's last acknowledged record (which must be visible at once) and
// runs a filtered query.
func mpWorker() error {
	ctx := context.Background()
	dir := os.Getenv("VS_DIR")
	proc, _ := strconv.Atoi(os.Getenv("VS_PROC"))
	nproc, _ := strconv.Atoi(os.Getenv("VS_NPROC"))
	dur, _ := time.ParseDuration(os.Getenv("VS_DURATION"))
	r := rand.New(rand.NewPCG(uint64(proc), 3))
	s, err := vecstore.Open(ctx, dir, vecstore.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	c, err := s.CreateCollection(ctx, chroma.CreateCollectionRequest{Name: "shared", GetOrCreate: true})
	if err != nil {
		return err
	}
	st := mpStats{Proc: proc}
	fail := func(err error) {
		st.Errors++
		if st.FirstError == "" {
			st.FirstError = err.Error()
		}
	}
	deadline := time.Now().Add(dur)
	for n := 0; time.Now().Before(deadline); n++ {
		id := fmt.Sprintf("p%d-%d", proc, n)
		t0 := time.Now()
		err := s.Add(ctx, c.ID, chroma.AddRequest{IDs: []string{id}, Embeddings: [][]float32{randVec(r, 32)},
			Metadatas: []chroma.Metadata{{"p": where.Int(int64(proc)), "n": where.Int(int64(n))}}})
		if err != nil {
			fail(err)
			continue
		}
		st.Latencies = append(st.Latencies, float64(time.Since(t0).Microseconds())/1000)
		st.Writes++
		tmp := filepath.Join(dir, fmt.Sprintf("ack-%d.tmp", proc))
		if err := os.WriteFile(tmp, []byte(strconv.Itoa(n)), 0o644); err == nil {
			_ = os.Rename(tmp, filepath.Join(dir, fmt.Sprintf("ack-%d", proc)))
		}
		// Visibility: the last write another process acknowledged must be
		// visible to this process's next read.
		j := r.IntN(nproc)
		if b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("ack-%d", j))); err == nil {
			nj, _ := strconv.Atoi(string(b))
			res, err := s.Get(ctx, c.ID, chroma.GetRequest{IDs: []string{fmt.Sprintf("p%d-%d", j, nj)}})
			st.Reads++
			if err != nil {
				fail(err)
			} else {
				st.VisChecks++
				if len(res.IDs) != 1 {
					st.VisMisses++
				}
			}
		}
		if n%4 == 0 {
			_, err := s.Query(ctx, c.ID, chroma.QueryRequest{Embeddings: [][]float32{randVec(r, 32)}, NResults: ptrInt(5),
				Where: where.Eq("p", where.Int(int64(j)))})
			st.Queries++
			if err != nil {
				fail(err)
			}
		}
	}
	lat := slices.Clone(st.Latencies)
	slices.Sort(lat)
	if len(lat) > 0 {
		st.LatP50ms = lat[len(lat)/2]
		st.LatP99ms = lat[len(lat)*99/100]
		st.LatMaxms = lat[len(lat)-1]
	}
	return json.NewEncoder(os.Stdout).Encode(st)
}

// TestMultiProcess runs 8 processes writing and querying one store
// concurrently (60 s; 5 s under -short): no errors, no write lost, every
// acknowledged write visible to every other process's next read, p99 write
// latency reported.
func TestMultiProcess(t *testing.T) {
	const nproc = 8
	dur := 60 * time.Second
	if testing.Short() {
		dur = 5 * time.Second
	}
	if d := os.Getenv("VECSTORE_MP_DURATION"); d != "" {
		dur, _ = time.ParseDuration(d)
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	stats := make([]mpStats, nproc)
	errs := make([]error, nproc)
	for p := 0; p < nproc; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			cmd := helperCmd(t, "mp-worker", "VS_DIR="+dir, fmt.Sprintf("VS_PROC=%d", p),
				fmt.Sprintf("VS_NPROC=%d", nproc), "VS_DURATION="+dur.String())
			out, err := cmd.Output()
			if err != nil {
				errs[p] = fmt.Errorf("worker %d: %v", p, err)
				return
			}
			errs[p] = json.Unmarshal(out, &stats[p])
		}(p)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var all []float64
	total, checks := 0, 0
	for _, st := range stats {
		if st.Errors > 0 {
			t.Errorf("worker %d: %d errors, first: %s", st.Proc, st.Errors, st.FirstError)
		}
		if st.VisMisses > 0 {
			t.Errorf("worker %d: %d of %d acknowledged writes of other processes not visible", st.Proc, st.VisMisses, st.VisChecks)
		}
		total += st.Writes
		checks += st.VisChecks
		all = append(all, st.Latencies...)
		t.Logf("worker %d: %d writes, %d reads, %d queries, write p50 %.1f ms p99 %.1f ms max %.1f ms",
			st.Proc, st.Writes, st.Reads, st.Queries, st.LatP50ms, st.LatP99ms, st.LatMaxms)
	}
	slices.Sort(all)
	ctx := context.Background()
	s := openStore(t, dir)
	c, err := s.GetCollection(ctx, chroma.DefaultTenant, chroma.DefaultDatabase, "shared")
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Count(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n != total {
		t.Errorf("%d records stored, %d writes acknowledged", n, total)
	}
	for _, st := range stats {
		res, err := s.Get(ctx, c.ID, chroma.GetRequest{Where: where.Eq("p", where.Int(int64(st.Proc)))})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.IDs) != st.Writes {
			t.Errorf("worker %d: %d writes acknowledged, %d stored", st.Proc, st.Writes, len(res.IDs))
		}
	}
	if len(all) > 0 {
		summary := fmt.Sprintf("multi-process: %d processes x %v: %d writes (%.0f/s), %d visibility checks, 0 misses required; write latency p50 %.1f ms, p99 %.1f ms, max %.1f ms",
			nproc, dur, total, float64(total)/dur.Seconds(), checks, all[len(all)/2], all[len(all)*99/100], all[len(all)-1])
		t.Log(summary)
		if f := os.Getenv("VECSTORE_REPORT"); f != "" {
			_ = os.WriteFile(f, []byte(summary+"\n"), 0o644)
		}
	}
}

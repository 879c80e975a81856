package index_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/cairn-dev/cairn/index"
)

// TestDumpBenchData writes the benchmark data set (n vectors then 1,000
// queries, raw little-endian float32) and the exact top 10 ids per query
// to $CAIRN_DUMP and $CAIRN_DUMP.truth, for running peers on identical
// data. Skipped unless CAIRN_DUMP is set; CAIRN_DUMP_N and
// CAIRN_DUMP_SPREAD pick the size and cluster spread.
func TestDumpBenchData(t *testing.T) {
	path := os.Getenv("CAIRN_DUMP")
	if path == "" {
		t.Skip("CAIRN_DUMP not set")
	}
	n, _ := strconv.Atoi(os.Getenv("CAIRN_DUMP_N"))
	if n == 0 {
		n = 100000
	}
	spread, _ := strconv.ParseFloat(os.Getenv("CAIRN_DUMP_SPREAD"), 64)
	if spread == 0 {
		spread = 0.35
	}
	const dim = 384
	r := rand.New(rand.NewPCG(2026, 1122))
	all := clustered(r, n+1000, dim, 500, spread)
	buf := make([]byte, 0, len(all)*dim*4)
	for _, v := range all {
		for _, f := range v {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
		}
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	buf = buf[:0]
	for _, q := range all[n:] {
		res := exactTop(all[:n], q, 10)
		for _, id := range res {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(id))
		}
	}
	if err := os.WriteFile(path+".truth", buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

func exactTop(data [][]float32, q []float32, k int) []int {
	type pair struct {
		d  float32
		id int
	}
	best := make([]pair, 0, k+1)
	for id, v := range data {
		d := index.Distance(index.IP, q, v)
		if len(best) == k && d >= best[k-1].d {
			continue
		}
		i := len(best)
		best = append(best, pair{d, id})
		for i > 0 && best[i-1].d > d {
			best[i] = best[i-1]
			i--
		}
		best[i] = pair{d, id}
		if len(best) > k {
			best = best[:k]
		}
	}
	out := make([]int, len(best))
	for i, p := range best {
		out[i] = p.id
	}
	return out
}

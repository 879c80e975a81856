package index_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairn-dev/cairn/index"
)

// TestConcurrentSearchDuringWrites runs searches while batches insert,
// replace and delete; run it under -race. Every result must be a live id at
// some point of the search and never a deleted id that stays deleted.
// Each code runs, and the index is recoded into the other while searches
// run.
func TestConcurrentSearchDuringWrites(t *testing.T) {
	t.Run("float32", func(t *testing.T) { testConcurrentWrites(t, index.Float32, index.SQ8) })
	t.Run("sq8", func(t *testing.T) { testConcurrentWrites(t, index.SQ8, index.Float32) })
}

func testConcurrentWrites(t *testing.T, code, recode index.Code) {
	r := testRand(t)
	n := 6000
	if testing.Short() || index.RaceEnabled {
		n = 2000
	}
	data := clustered(r, 2*n, 24, 30, 0.5)
	x := newChecked(t, index.Options{Dim: 24, Space: index.Cosine, Seed: 9, Workers: 4, Code: code})
	if err := x.InsertBatch(context.Background(), seqIDs(0, n/2), data[:n/2]); err != nil {
		t.Fatal(err)
	}
	// Ids at or above gone are deleted before any reader starts and never
	// come back.
	gone := uint32(n / 2)
	for id := gone - 200; id < gone; id++ {
		if err := x.Delete(id); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	var searches atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				q := data[(i*31+g)%len(data)]
				res, err := x.Search(q, 10, index.SearchOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				for _, rr := range res {
					if rr.ID >= gone-200 && rr.ID < gone {
						t.Errorf("deleted id %d returned", rr.ID)
						return
					}
				}
				searches.Add(1)
			}
		}()
	}
	ctx := context.Background()
	// Inserts in batches (new ids), replacements, and deletes of other ids.
	for lo := n / 2; lo < n; lo += 500 {
		if err := x.InsertBatch(ctx, seqIDs(lo, 500), data[lo:lo+500]); err != nil {
			t.Fatal(err)
		}
		for id := uint32(lo - n/2); id < uint32(lo-n/2+20); id++ {
			if err := x.Insert(id, data[n+int(id)]); err != nil {
				t.Fatal(err)
			}
		}
		for id := uint32(lo); id < uint32(lo+10); id++ {
			if err := x.Delete(id); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := x.Recode(recode); err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	wg.Wait()
	if searches.Load() == 0 {
		t.Fatal("no search ran")
	}
	if rec := recallAt(t, x, data[n:n+100], 10, index.SearchOptions{}); rec < 0.95 {
		t.Errorf("recall after concurrent writes = %.3f", rec)
	}
}

package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/engine"
)

// The LoCoMo dev split loads with the counts its README gives, and keyword
// search through the engine finds evidence turns (a smoke test of the
// harness, not a quality gate).
func TestLoCoMoHarness(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "datasets", "locomo-dev")
	if _, err := os.Stat(dir); err != nil {
		dir = "/work/shared/datasets/locomo-dev"
		if _, err := os.Stat(dir); err != nil {
			t.Skip("LoCoMo dev split not found")
		}
	}
	convs, err := bench.LoadLoCoMo(dir)
	if err != nil {
		t.Fatal(err)
	}
	turns, questions := 0, 0
	for _, c := range convs {
		turns += len(c.Turns)
		questions += len(c.Questions)
		for _, q := range c.Questions {
			if len(q.Evidence) == 0 {
				t.Errorf("question %q kept without evidence", q.Text)
			}
		}
	}
	// 2,080 turns; 584 questions of categories 1-4, two of them without evidence.
	if len(convs) != 4 || turns != 2080 || questions != 582 {
		t.Fatalf("loaded %d conversations, %d turns, %d questions; want 4, 2080, 582", len(convs), turns, questions)
	}
	if testing.Short() {
		return
	}
	ctx := context.Background()
	lc, err := bench.LoadLoCoMoCorpus(ctx, t.TempDir(), convs, bench.LoCoMoOptions{Captions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	r, err := lc.Evaluate(ctx, engine.SearchRequest{Mode: engine.ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	o := r["overall"]
	if o.Questions != 582 || o.Recall10 <= 0 || o.Recall10 > 1 || o.Recall5 > o.Recall10 || o.Hit10 < o.Recall10 {
		t.Errorf("overall %+v: want 582 questions and 0 < R@5 <= R@10 <= hit@10 <= 1", o)
	}
}

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
	// The counts the dev split's README gives per conversation: turns, and
	// questions of categories 1-4 (two of 26's have no evidence and are dropped).
	want := map[string][2]int{"26": {419, 150}, "30": {369, 81}, "41": {663, 152}, "42": {629, 199}}
	questions := 0
	for _, c := range convs {
		questions += len(c.Questions)
		for _, q := range c.Questions {
			if len(q.Evidence) == 0 {
				t.Errorf("question %q kept without evidence", q.Text)
			}
		}
		w, ok := want[c.ID]
		if !ok {
			t.Errorf("conversation %s is not in the dev split", c.ID)
			continue
		}
		if got := [2]int{len(c.Turns), len(c.Questions)}; got != w {
			t.Errorf("conversation %s: %d turns, %d questions; want %d, %d", c.ID, got[0], got[1], w[0], w[1])
		}
	}
	if len(convs) != len(want) {
		t.Fatalf("loaded %d conversations, want %d", len(convs), len(want))
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
	if o.Questions != questions || o.Recall10 <= 0 || o.Recall10 > 1 || o.Recall5 > o.Recall10 || o.Hit10 < o.Recall10 {
		t.Errorf("overall %+v: want %d questions and 0 < R@5 <= R@10 <= hit@10 <= 1", o, questions)
	}
}

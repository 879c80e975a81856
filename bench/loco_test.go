package bench_test

import (
	"math"
	"testing"

	"github.com/cairn-dev/cairn/bench"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// Fractional recall@k counts each distinct evidence turn once, among the
// first k results only.
func TestFractionalRecall(t *testing.T) {
	ranked := []string{"D1:1", "D2:4", "D1:1", "D3:2", "D5:5", "D4:1", "D1:2"}
	for _, c := range []struct {
		name     string
		evidence []string
		k        int
		want     float64
	}{
		{"one of two in the top 5", []string{"D2:4", "D4:1"}, 5, 0.5},
		{"both in the top 6", []string{"D2:4", "D4:1"}, 6, 1},
		{"a turn ranked twice counts once", []string{"D1:1", "D9:9"}, 5, 0.5},
		{"duplicate evidence counts once", []string{"D3:2", "D3:2", "D8:1"}, 5, 0.5},
		{"found only below k", []string{"D1:2"}, 5, 0},
		{"k beyond the ranking", []string{"D1:2", "D7:7", "D7:8", "D7:9"}, 10, 0.25},
		{"no evidence", nil, 5, 0},
	} {
		if got := bench.FractionalRecall(ranked, c.evidence, c.k); !near(got, c.want) {
			t.Errorf("%s: FractionalRecall(k=%d) = %v, want %v", c.name, c.k, got, c.want)
		}
	}
}

// Session recall@k ranks sessions by their best turn and looks at the
// first k distinct sessions.
func TestSessionRecall(t *testing.T) {
	// Sessions in rank order: D1, D2, D3, D5, D4 (D1 seen twice).
	ranked := []string{"D1:1", "D2:4", "D1:9", "D3:2", "D5:5", "D4:1"}
	for _, c := range []struct {
		name     string
		evidence []string
		k        int
		want     float64
	}{
		{"the evidence turn itself need not be ranked", []string{"D2:1"}, 2, 1},
		{"a repeated session takes no slot", []string{"D3:7"}, 3, 1},
		{"one of two sessions in the first 3", []string{"D3:1", "D4:1"}, 3, 0.5},
		{"two turns of one session are one session", []string{"D5:1", "D5:2"}, 4, 1},
		{"beyond the first k sessions", []string{"D4:1"}, 4, 0},
		{"all in when k exceeds the sessions", []string{"D4:1", "D1:3"}, 10, 1},
		{"malformed ids are not sessions", []string{"x", "D:1", "D0:1"}, 10, 0},
	} {
		if got := bench.SessionRecall(ranked, c.evidence, c.k); !near(got, c.want) {
			t.Errorf("%s: SessionRecall(k=%d) = %v, want %v", c.name, c.k, got, c.want)
		}
	}
	for id, want := range map[string]int{"D3:14": 3, "D12:1": 12, "D0:1": 0, "3:14": 0, "Dx:1": 0, "D3": 0} {
		if got := bench.SessionOf(id); got != want {
			t.Errorf("SessionOf(%q) = %d, want %d", id, got, want)
		}
	}
}

// The leave-one-out decision chooses on the other conversations and
// checks on the held-out one.
func TestLeaveOneOut(t *testing.T) {
	t.Run("a rule that helps everywhere is kept", func(t *testing.T) {
		folds, kept, err := bench.LeaveOneOut([][]float64{
			{0.70, 0.80, 0.60, 0.75}, // off
			{0.72, 0.81, 0.60, 0.78}, // on: ties off on the third conversation only
		}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !kept {
			t.Fatalf("kept = false, want true (folds %+v)", folds)
		}
		// Held out the third: mean on the others (0.72+0.81+0.78)/3 = 0.77
		// beats off's 0.75, and on ties off there, which holds.
		f := folds[2]
		if f.Chosen != 1 || !near(f.TrainMean, 0.77) || f.HeldOutChosen != 0.60 || f.HeldOutOff != 0.60 || !f.Holds {
			t.Errorf("fold 3 = %+v, want setting 1 chosen at mean 0.77, 0.60 against 0.60, holds", f)
		}
	})
	t.Run("a rule that hurts the held-out conversation fails that fold", func(t *testing.T) {
		folds, kept, err := bench.LeaveOneOut([][]float64{
			{0.70, 0.80, 0.60, 0.75},
			{0.75, 0.85, 0.65, 0.70}, // worse on the fourth
		}, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		if kept {
			t.Error("kept = true, want false")
		}
		holds := []bool{true, true, true, false}
		for i, f := range folds {
			if f.Holds != holds[i] {
				t.Errorf("fold %d holds = %v, want %v (%+v)", i+1, f.Holds, holds[i], f)
			}
		}
	})
	t.Run("within the tolerance holds", func(t *testing.T) {
		_, kept, err := bench.LeaveOneOut([][]float64{
			{0.70, 0.80, 0.60, 0.75},
			{0.75, 0.85, 0.65, 0.745},
		}, 0.01)
		if err != nil || !kept {
			t.Errorf("kept = %v, err %v; want kept (0.745 is within 0.01 of 0.75)", kept, err)
		}
	})
	t.Run("a tie on the other three goes to off, which fails the fold", func(t *testing.T) {
		folds, kept, err := bench.LeaveOneOut([][]float64{
			{0.70, 0.80, 0.60, 0.75},
			{0.70, 0.80, 0.60, 0.90},
		}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if kept || folds[3].Chosen != 0 || folds[3].Holds {
			t.Errorf("kept %v, fold 4 %+v; want off chosen on the first three and the fold failed", kept, folds[3])
		}
	})
	t.Run("the best of several settings is chosen per fold", func(t *testing.T) {
		folds, _, err := bench.LeaveOneOut([][]float64{
			{0.50, 0.50, 0.50, 0.50},
			{0.60, 0.60, 0.60, 0.40}, // best on the first three
			{0.55, 0.55, 0.55, 0.90}, // best once the fourth counts
		}, 0)
		if err != nil {
			t.Fatal(err)
		}
		// Held out the fourth: setting 1 (mean 0.60) is chosen and scores
		// 0.40 < 0.50 there. Held out the first: means 0.50, 0.533, 0.667.
		if folds[3].Chosen != 1 || folds[3].Holds {
			t.Errorf("fold 4 = %+v, want setting 1 chosen and failing", folds[3])
		}
		if folds[0].Chosen != 2 || !folds[0].Holds {
			t.Errorf("fold 1 = %+v, want setting 2 chosen and holding", folds[0])
		}
		// On all four: means 0.50, 0.55 and 0.6375.
		grid := [][]float64{{0.50, 0.50, 0.50, 0.50}, {0.60, 0.60, 0.60, 0.40}, {0.55, 0.55, 0.55, 0.90}}
		if s, mean := bench.BestSetting(grid); s != 2 || !near(mean, 0.6375) {
			t.Errorf("BestSetting = %d at %v, want 2 at 0.6375", s, mean)
		}
	})
	t.Run("bad shapes are refused", func(t *testing.T) {
		for _, grid := range [][][]float64{
			{{0.5, 0.5}},
			{{0.5}, {0.6}},
			{{0.5, 0.5}, {0.6}},
		} {
			if _, _, err := bench.LeaveOneOut(grid, 0); err == nil {
				t.Errorf("LeaveOneOut(%v) gave no error", grid)
			}
		}
	})
}

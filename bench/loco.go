package bench

import (
	"fmt"
	"math"
)

// LOCOFold is one fold of a leave-one-conversation-out choice: the
// setting of a rule chosen on every conversation but HeldOut, and how it
// does on HeldOut against the rule switched off.
type LOCOFold struct {
	// HeldOut is the held-out conversation's index.
	HeldOut int
	// Chosen is the index of the setting chosen on the other
	// conversations (0: the rule off), TrainMean its mean figure there.
	Chosen    int
	TrainMean float64
	// HeldOutChosen and HeldOutOff are the held-out conversation's figure
	// with the chosen setting and with the rule off.
	HeldOutChosen, HeldOutOff float64
	// Holds says the choice holds on the held-out conversation: a setting
	// of the rule was chosen (not off), and it scores at least
	// HeldOutOff - tol there.
	Holds bool
}

// LeaveOneOut decides a rule by leaving one conversation out:
// figures[s][c] is conversation c's figure (higher is better) with
// setting s, where setting 0 is the rule switched off and the others are
// the rule on with each value of its parameters. For each conversation
// held out in turn it chooses the setting with the best mean figure over
// the other conversations (a tie goes to the earlier setting, so to off),
// and checks that choice on the held-out one. The rule is kept when every
// fold holds: chosen on three, it is on, and it does not score below off
// by more than tol on the fourth.
func LeaveOneOut(figures [][]float64, tol float64) ([]LOCOFold, bool, error) {
	if len(figures) < 2 {
		return nil, false, fmt.Errorf("bench: leave-one-out needs the rule off and at least one setting, got %d settings", len(figures))
	}
	n := len(figures[0])
	if n < 2 {
		return nil, false, fmt.Errorf("bench: leave-one-out needs at least two conversations, got %d", n)
	}
	for s, f := range figures {
		if len(f) != n {
			return nil, false, fmt.Errorf("bench: setting %d has %d figures, setting 0 has %d", s, len(f), n)
		}
	}
	folds := make([]LOCOFold, n)
	kept := true
	for held := range n {
		f := LOCOFold{HeldOut: held}
		f.Chosen, f.TrainMean = bestSetting(figures, held)
		f.HeldOutChosen, f.HeldOutOff = figures[f.Chosen][held], figures[0][held]
		f.Holds = f.Chosen != 0 && f.HeldOutChosen >= f.HeldOutOff-tol
		kept = kept && f.Holds
		folds[held] = f
	}
	return folds, kept, nil
}

// BestSetting is the setting of figures (as LeaveOneOut takes them) with
// the best mean figure over every conversation, and that mean; a tie goes
// to the earlier setting.
func BestSetting(figures [][]float64) (int, float64) { return bestSetting(figures, -1) }

// bestSetting is BestSetting without conversation held (-1: none).
func bestSetting(figures [][]float64, held int) (int, float64) {
	// A mean must beat the best so far by more than rounding to win, so
	// that settings that rank identically tie.
	const eps = 1e-9
	best, bestMean := 0, math.Inf(-1)
	for s, fig := range figures {
		sum, n := 0.0, 0
		for c, v := range fig {
			if c != held {
				sum, n = sum+v, n+1
			}
		}
		if mean := sum / float64(n); mean > bestMean+eps {
			best, bestMean = s, mean
		}
	}
	return best, bestMean
}

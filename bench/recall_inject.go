package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/search"
)

// RecallInjection is what the per-prompt recall injected for one
// conversation's questions (asked in its own project) and for the other
// conversations' questions asked in its project (foreign prompts, about
// which nothing relevant is stored there).
type RecallInjection struct {
	Conversation string
	Questions    int
	// Top10 counts the questions one of whose evidence turns hybrid
	// search ranks in its top 10 of the conversation.
	Top10 int
	// Injected counts, per budget, the Top10 questions one of whose
	// evidence turns is in the injected text.
	Injected map[int]int
	// Bytes sums, per budget, the injected bytes over all the questions.
	Bytes map[int]int
	// Foreign counts the foreign prompts, Silent those that injected
	// nothing (at the foreign budget).
	Foreign, Silent int
}

// RecallPrompt is one prompt of the recall benchmark, recalled without
// the prompt gate, with what the gate weighs: any gate's outcome follows
// from it (RecallGate.Judge).
type RecallPrompt struct {
	// Conversation is the conversation whose project the prompt is asked
	// in; Foreign says the prompt is another conversation's question.
	Conversation string
	Foreign      bool
	// Top10 says hybrid search ranks one of the question's evidence turns
	// in its top 10 (own questions only).
	Top10 bool
	// Best and Coverage are ops.Recalled's.
	Best, Coverage float64
	// Evidence says, per budget, that an evidence turn is in the injected
	// text (own questions); Bytes is the injected text's length, 0 when
	// nothing is injected.
	Evidence map[int]bool
	Bytes    map[int]int
}

// RecallPrompts asks every scored question as a prompt in its
// conversation's project through ops.ForPrompt (the code the prompt hook
// runs, with a fresh session per prompt and no prompt gate) at each
// budget, and every other conversation's questions in it at
// foreignBudget. lc must be stored with Projects.
func RecallPrompts(ctx context.Context, lc *LoCoMoCorpus, budgets []int, foreignBudget int, now time.Time) ([]RecallPrompt, error) {
	noGate := 0.0
	recall := func(q Question, project string, budget int) (ops.Recalled, error) {
		return ops.ForPrompt(ctx, lc.Engine, ops.PromptRecall{Prompt: q.Text, Project: project, BudgetTokens: budget, MinEvidence: &noGate, Now: now})
	}
	var out []RecallPrompt
	for _, c := range lc.Convs {
		project := LoCoMoChannel(c)
		for _, q := range c.Questions {
			ranked, err := lc.Ranked(ctx, engine.SearchRequest{Limit: 10}, c, q)
			if err != nil {
				return nil, err
			}
			p := RecallPrompt{Conversation: c.ID, Top10: anyOf(ranked, q.Evidence), Evidence: map[int]bool{}, Bytes: map[int]int{}}
			for _, b := range budgets {
				got, err := recall(q, project, b)
				if err != nil {
					return nil, err
				}
				p.Best, p.Coverage = got.Best, got.Coverage
				p.Bytes[b] = len(got.Text)
				dias := make([]string, len(got.IDs))
				for i, id := range got.IDs {
					dias[i] = lc.DiaID(id)
				}
				p.Evidence[b] = anyOf(dias, q.Evidence)
			}
			out = append(out, p)
		}
		for _, other := range lc.Convs {
			if other.ID == c.ID {
				continue
			}
			for _, q := range other.Questions {
				got, err := recall(q, project, foreignBudget)
				if err != nil {
					return nil, err
				}
				out = append(out, RecallPrompt{Conversation: c.ID, Foreign: true, Best: got.Best, Coverage: got.Coverage,
					Bytes: map[int]int{foreignBudget: len(got.Text)}})
			}
		}
	}
	return out, nil
}

// RecallGate is a prompt gate: recall injects when
// search.PromptEvidenceWith(best, coverage, Exponent) >= Min (Min 0:
// no gate).
type RecallGate struct {
	Exponent, Min float64
}

// DefaultRecallGate is the engine's gate.
func DefaultRecallGate() RecallGate {
	return RecallGate{Exponent: search.PromptCoverageExponent, Min: search.DefaultPromptEvidence}
}

// Passes reports whether the gate lets p's recall through.
func (g RecallGate) Passes(p RecallPrompt) bool {
	return g.Min <= 0 || search.PromptEvidenceWith(p.Best, p.Coverage, g.Exponent) >= g.Min
}

// Judge counts, per conversation (in order of first appearance), what the
// recall injects behind gate at each budget; foreignBudget is the budget
// the foreign prompts were asked at.
func (g RecallGate) Judge(ps []RecallPrompt, budgets []int, foreignBudget int) []RecallInjection {
	var out []RecallInjection
	at := map[string]int{}
	for _, p := range ps {
		i, ok := at[p.Conversation]
		if !ok {
			i = len(out)
			at[p.Conversation] = i
			out = append(out, RecallInjection{Conversation: p.Conversation, Injected: map[int]int{}, Bytes: map[int]int{}})
		}
		r := &out[i]
		pass := g.Passes(p)
		if p.Foreign {
			r.Foreign++
			if !pass || p.Bytes[foreignBudget] == 0 {
				r.Silent++
			}
			continue
		}
		r.Questions++
		if p.Top10 {
			r.Top10++
		}
		if !pass {
			continue
		}
		for _, b := range budgets {
			r.Bytes[b] += p.Bytes[b]
			if p.Top10 && p.Evidence[b] {
				r.Injected[b]++
			}
		}
	}
	return out
}

// EvaluateRecallInjection is RecallPrompts judged behind the engine's
// gate, the foreign prompts at the first budget.
func EvaluateRecallInjection(ctx context.Context, lc *LoCoMoCorpus, budgets []int, now time.Time) ([]RecallInjection, error) {
	ps, err := RecallPrompts(ctx, lc, budgets, budgets[0], now)
	if err != nil {
		return nil, err
	}
	return DefaultRecallGate().Judge(ps, budgets, budgets[0]), nil
}

// RecallTargets are the shares a prompt gate must reach on every
// conversation, in percent: the questions whose evidence hybrid search
// ranks in its top 10 that get it injected, and the foreign prompts that
// inject nothing.
type RecallTargets struct {
	Evidence, Silence float64
}

// Meets reports whether r reaches t at budget.
func (t RecallTargets) Meets(r RecallInjection, budget int) bool {
	return Percent(r.Injected[budget], r.Top10) >= t.Evidence && Percent(r.Silent, r.Foreign) >= t.Silence
}

// Percent is 100 n / d, 0 when d is 0.
func Percent(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return 100 * float64(n) / float64(d)
}

// GateFit is a prompt gate chosen on some conversations: for each exponent
// of a grid, the thresholds (on a log grid) at which every one of them
// meets the targets; the exponent whose window of such thresholds is the
// widest, measured in standard deviations of the gate's log score over
// those conversations' prompts (a larger exponent spreads the scores, and
// its windows, further: raw widths would favour it), at the middle of
// that window. Window is [Lo, Hi]; OK is false when no exponent meets the
// targets anywhere.
type GateFit struct {
	Gate   RecallGate
	Lo, Hi float64
	OK     bool
}

// Fit exponents and thresholds of FitRecallGate.
var (
	gateExponents = []float64{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 5, 6, 8}
	// gateLogMins are the thresholds tried: e^-8 to e^0 in steps of 0.02.
	gateLogMins = func() []float64 {
		var out []float64
		for i := -400; i <= 0; i++ {
			out = append(out, float64(i)/50)
		}
		return out
	}()
)

// FitRecallGate chooses a gate on the prompts of the conversations in
// on (GateFit), judged at budget.
func FitRecallGate(ps []RecallPrompt, on map[string]bool, budget int, t RecallTargets) GateFit {
	var train []RecallPrompt
	for _, p := range ps {
		if on[p.Conversation] {
			train = append(train, p)
		}
	}
	var best GateFit
	bestWidth := 0.0
	for _, e := range gateExponents {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, lm := range gateLogMins {
			ok := true
			for _, r := range (RecallGate{Exponent: e, Min: math.Exp(lm)}).Judge(train, []int{budget}, budget) {
				ok = ok && t.Meets(r, budget)
			}
			if ok {
				lo, hi = min(lo, lm), max(hi, lm)
			}
		}
		if lo > hi {
			continue
		}
		width := (hi - lo) / logScoreSpread(train, e)
		if best.OK && width <= bestWidth {
			continue
		}
		best, bestWidth = GateFit{Gate: RecallGate{Exponent: e, Min: math.Exp((lo + hi) / 2)}, Lo: math.Exp(lo), Hi: math.Exp(hi), OK: true}, width
	}
	return best
}

// logScoreSpread is the standard deviation of the log gate score with
// exponent e over the prompts that have one (some relevance and coverage).
func logScoreSpread(ps []RecallPrompt, e float64) float64 {
	var n, sum, sq float64
	for _, p := range ps {
		if s := search.PromptEvidenceWith(p.Best, p.Coverage, e); s > 0 {
			l := math.Log(s)
			n, sum, sq = n+1, sum+l, sq+l*l
		}
	}
	if n < 2 {
		return 1
	}
	v := sq/n - (sum/n)*(sum/n)
	if v <= 0 {
		return 1
	}
	return math.Sqrt(v)
}

// GateFold is one fold of RecallGateLOCO.
type GateFold struct {
	HeldOut string
	Fit     GateFit
	// Result is the held-out conversation behind the fitted gate.
	Result RecallInjection
	Holds  bool
}

// RecallGateLOCO fits a gate on every conversation but one (FitRecallGate)
// and judges it on that one, for each conversation; kept is true when
// every fold meets the targets on its held-out conversation.
func RecallGateLOCO(ps []RecallPrompt, budget int, t RecallTargets) (folds []GateFold, kept bool, err error) {
	var convs []string
	seen := map[string]bool{}
	for _, p := range ps {
		if !seen[p.Conversation] {
			seen[p.Conversation] = true
			convs = append(convs, p.Conversation)
		}
	}
	if len(convs) < 2 {
		return nil, false, fmt.Errorf("bench: leave-one-out needs at least two conversations, got %d", len(convs))
	}
	kept = true
	for _, held := range convs {
		on := map[string]bool{}
		for _, c := range convs {
			on[c] = c != held
		}
		f := GateFold{HeldOut: held, Fit: FitRecallGate(ps, on, budget, t)}
		if f.Fit.OK {
			for _, r := range f.Fit.Gate.Judge(ps, []int{budget}, budget) {
				if r.Conversation == held {
					f.Result = r
				}
			}
			f.Holds = t.Meets(f.Result, budget)
		}
		kept = kept && f.Holds
		folds = append(folds, f)
	}
	return folds, kept, nil
}

func anyOf(ids, want []string) bool {
	for _, id := range ids {
		for _, w := range want {
			if id == w {
				return true
			}
		}
	}
	return false
}

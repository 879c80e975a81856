package bench

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
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
	// nothing (at the first budget: the floor, not the budget, decides).
	Foreign, Silent int
}

// EvaluateRecallInjection asks every scored question as a prompt in its
// conversation's project through ops.ForPrompt (the code the prompt hook
// runs, with a fresh session per prompt) at each budget, and every other
// conversation's questions in it. lc must be stored with Projects.
func EvaluateRecallInjection(ctx context.Context, lc *LoCoMoCorpus, budgets []int, now time.Time) ([]RecallInjection, error) {
	var out []RecallInjection
	for _, c := range lc.Convs {
		project := LoCoMoChannel(c)
		r := RecallInjection{Conversation: c.ID, Injected: map[int]int{}, Bytes: map[int]int{}}
		for _, q := range c.Questions {
			r.Questions++
			ranked, err := lc.Ranked(ctx, engine.SearchRequest{Limit: 10}, c, q)
			if err != nil {
				return nil, err
			}
			top10 := anyOf(ranked, q.Evidence)
			if top10 {
				r.Top10++
			}
			for _, b := range budgets {
				got, err := ops.ForPrompt(ctx, lc.Engine, ops.PromptRecall{Prompt: q.Text, Project: project, BudgetTokens: b, Now: now})
				if err != nil {
					return nil, err
				}
				r.Bytes[b] += len(got.Text)
				dias := make([]string, len(got.IDs))
				for i, id := range got.IDs {
					dias[i] = lc.DiaID(id)
				}
				if top10 && anyOf(dias, q.Evidence) {
					r.Injected[b]++
				}
			}
		}
		for _, other := range lc.Convs {
			if other.ID == c.ID {
				continue
			}
			for _, q := range other.Questions {
				got, err := ops.ForPrompt(ctx, lc.Engine, ops.PromptRecall{Prompt: q.Text, Project: project, BudgetTokens: budgets[0], Now: now})
				if err != nil {
					return nil, err
				}
				r.Foreign++
				if got.Text == "" {
					r.Silent++
				}
			}
		}
		out = append(out, r)
	}
	return out, nil
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

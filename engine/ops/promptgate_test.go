package ops_test

import (
	"context"
	"strings"
	"testing"
	"time"

	cembed "github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/embed/builtin"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// TestPromptGate: with the built-in model on a real store, a prompt about
// what the project's memory holds gets its note, and a prompt about
// someone and something the memory never mentions gets nothing, although
// the relevance floor alone lets a note through (it shares a word or a
// theme with the prompt).
func TestPromptGate(t *testing.T) {
	ctx := context.Background()
	m, err := builtin.Open(ctx, cembed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	eng, err := sqlite.OpenEngine(ctx, t.TempDir(), engine.Options{Embedder: m}, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := eng.Close(); err != nil {
			t.Error(err)
		}
	})
	for _, n := range []string{
		"Invoices are immutable: correct an invoice by issuing a credit note, never by editing it",
		"Card numbers are never written to logs; the logger masks them",
		"Refunds go through the refund queue worker, which retries failed refunds three times",
		"Deploys run on Fridays after the release checklist is signed off",
		"The nightly invoice export job writes CSV files to the reports bucket",
		"Customers download their invoices as PDF from the account page",
		"Prices are stored in cents as integers to avoid rounding errors",
		"The checkout page calls the payment provider with an idempotency key per order",
	} {
		if _, err := eng.WriteNote(ctx, engine.NewNote{Agent: "ann", Project: "shop", Type: engine.TypeDecision, Content: n}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ops.SyncVectors(ctx, eng, nil); err != nil {
		t.Fatal(err)
	}
	recall := func(prompt string, minEvidence *float64) ops.Recalled {
		t.Helper()
		got, err := ops.ForPrompt(ctx, eng, ops.PromptRecall{Prompt: prompt, Project: "shop", BudgetTokens: 1000, MinEvidence: minEvidence, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for prompt, want := range map[string]string{
		"How do I correct a wrong invoice?": "Invoices are immutable",
		"Which weekday do deploys run on?":  "Deploys run on Fridays",
	} {
		if got := recall(prompt, nil); !strings.Contains(got.Text, want) {
			t.Errorf("%q recalled %q (best %.3f, coverage %.2f), want %q", prompt, got.Text, got.Best, got.Coverage, want)
		}
	}
	floorOnly := 0.0
	for _, prompt := range []string{
		"What rounding did Gina's bakery use for its cents?",
		"Where does Joanna download her screenplay drafts as PDF?",
	} {
		if got := recall(prompt, &floorOnly); got.Text == "" {
			t.Errorf("%q: the floor alone recalls nothing, so the gate is not what silences it", prompt)
		}
		if got := recall(prompt, nil); got.Text != "" {
			t.Errorf("%q recalled (best %.3f, coverage %.2f):\n%s", prompt, got.Best, got.Coverage, got.Text)
		}
	}
	bad := -0.1
	if _, err := ops.ForPrompt(ctx, eng, ops.PromptRecall{Prompt: "invoices", Project: "shop", BudgetTokens: 1000, MinEvidence: &bad, Now: time.Now()}); err == nil || !strings.Contains(err.Error(), "min evidence") {
		t.Errorf("negative min evidence: %v", err)
	}
}

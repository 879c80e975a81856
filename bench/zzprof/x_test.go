package zz

import (
	"context"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/bench"
	"github.com/cairn-dev/cairn/engine"
)

func TestHyb(t *testing.T) {
	ctx := context.Background()
	s, err := bench.LoadBEIR("cranfield", "/work/shared/datasets/cranfield")
	if err != nil { t.Fatal(err) }
	c, err := bench.LoadCorpus(ctx, t.TempDir(), s, bench.NoiseEmbedder{D: 384})
	if err != nil { t.Fatal(err) }
	defer c.Close()
	for _, m := range []engine.SearchMode{engine.ModeKeyword, engine.ModeSemantic, engine.ModeHybrid} {
		t0 := time.Now()
		for _, q := range s.Queries[:20] {
			r, err := c.Engine.Search(ctx, engine.SearchRequest{Query: q.Text, Mode: m, Limit: 100})
			if err != nil { t.Fatal(err) }
			if m != engine.ModeSemantic && r[0].Snippet == "" { t.Fatal("no snippet") }
		}
		t.Logf("%s: %v/query", m, time.Since(t0)/20)
	}
}

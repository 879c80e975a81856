package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/internal/enginetest"
)

// trapEmbedder embeds like enginetest.HashEmbedder, except the query text trap: its
// Embed blocks until ctx ends (block) or panics (panics), and says when it
// is entered and whether it returned.
type trapEmbedder struct {
	*enginetest.HashEmbedder
	trap    string
	panics  bool
	entered chan struct{}
	inside  atomic.Int32
}

func (t *trapEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 1 && texts[0] == t.trap {
		t.inside.Add(1)
		defer t.inside.Add(-1)
		close(t.entered)
		if t.panics {
			panic("trapEmbedder: the trap query")
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return t.HashEmbedder.Embed(ctx, texts)
}

// conversations stores n turns in 4 channels, two senders taking turns a
// minute apart, some of them questions, so that every step of hybrid
// search has work: reply lift, turn context and the rank blend.
func conversations(t *testing.T, e *engine.Engine, n int) []string {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 8))
	words := strings.Fields("garden studio opening night dance store fashion camping beach painting pottery kids family career support group parade hike museum concert trip horse sunset lake")
	text := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = words[r.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
	start := time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)
	var in []engine.NewMessage
	for i := range n {
		c := text(4 + r.IntN(8))
		if i%5 == 0 {
			c += "?"
		}
		in = append(in, engine.NewMessage{Channel: fmt.Sprintf("talk%d", i%4), Sender: []string{"Caroline", "Melanie"}[i/4%2], Content: c, CreatedAt: start.Add(time.Duration(i/4) * time.Minute)})
	}
	ctx := context.Background()
	if _, err := e.StoreMessages(ctx, in); err != nil {
		t.Fatal(err)
	}
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	var qs []string
	for i := range 4 {
		qs = append(qs, "What did Melanie say about "+text(2)+"?", text(3), fmt.Sprintf("When did Caroline go to the %s in November %d?", text(1), 2025-i%2))
	}
	return qs
}

// TestConcurrentSearchesMatchOneAtATime: each search runs its vector and
// keyword sides at once (engine/retrieve.go); many searches at once, under
// -race, answer exactly what each answers alone.
func TestConcurrentSearchesMatchOneAtATime(t *testing.T) {
	ctx := context.Background()
	e, _ := enginetest.Open(t, engine.Options{Embedder: enginetest.NewHashEmbedder("hash-retrieve", 64)})
	qs := conversations(t, e, 400)
	// The first keyword search starts the in-memory keyword index's build;
	// until it is ready FTS5 answers with the same hits but scores summed
	// in another order (equal to the last bits). Both passes below must
	// read the same index.
	if _, err := e.Search(ctx, engine.SearchRequest{Query: qs[0], Mode: engine.ModeKeyword}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !enginetest.StoreOf(e).KeywordIndexReady(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the in-memory keyword index is not ready after a minute")
		}
	}
	var reqs []engine.SearchRequest
	for _, q := range qs {
		for _, mode := range []engine.SearchMode{engine.ModeHybrid, engine.ModeSemantic, engine.ModeKeyword} {
			reqs = append(reqs, engine.SearchRequest{Query: q, Mode: mode, Limit: 10, MinScore: new(float64)})
		}
		reqs = append(reqs, engine.SearchRequest{Query: q, Limit: 5, Filter: engine.Filter{ChannelIDs: []string{"talk1"}}, MinScore: new(float64)})
	}
	alone := make([]engine.SearchResponse, len(reqs))
	for i, req := range reqs {
		resp, err := e.SearchDetailed(ctx, req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		if len(resp.Results) == 0 {
			t.Fatalf("%+v: no results", req)
		}
		alone[i] = resp
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for k := range reqs {
				i := (k + w*7) % len(reqs)
				got, err := e.SearchDetailed(ctx, reqs[i])
				if err != nil {
					t.Errorf("%+v: %v", reqs[i], err)
					return
				}
				if !reflect.DeepEqual(got, alone[i]) {
					t.Errorf("%+v at once with others:\n got %+v\nwant %+v", reqs[i], got, alone[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestSearchCancelledWhileEmbedding: a search whose context ends while the
// query is being embedded returns the context's error, and the goroutine
// that embedded has returned by then (the search leaves none behind).
func TestSearchCancelledWhileEmbedding(t *testing.T) {
	emb := &trapEmbedder{HashEmbedder: enginetest.NewHashEmbedder("hash-retrieve", 64), trap: "beach trip", entered: make(chan struct{})}
	e, _ := enginetest.Open(t, engine.Options{Embedder: emb})
	conversations(t, e, 40)
	for _, mode := range []engine.SearchMode{engine.ModeHybrid, engine.ModeSemantic} {
		emb.entered = make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-emb.entered
			cancel()
		}()
		_, err := e.SearchDetailed(ctx, engine.SearchRequest{Query: "beach trip", Mode: mode})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: got %v, want context.Canceled", mode, err)
		}
		if n := emb.inside.Load(); n != 0 {
			t.Errorf("%s: %d query embeddings still running after the search returned", mode, n)
		}
	}
	// The engine still answers.
	if _, err := e.Search(context.Background(), engine.SearchRequest{Query: "beach"}); err != nil {
		t.Fatal(err)
	}
}

// TestSearchPanicOnCallersGoroutine: a panic while the query is embedded
// (on the vector side's goroutine) reaches the caller of Search, where the
// adapters recover it, rather than ending the process.
func TestSearchPanicOnCallersGoroutine(t *testing.T) {
	emb := &trapEmbedder{HashEmbedder: enginetest.NewHashEmbedder("hash-retrieve", 64), trap: "beach trip", panics: true, entered: make(chan struct{})}
	e, _ := enginetest.Open(t, engine.Options{Embedder: emb})
	conversations(t, e, 40)
	func() {
		defer func() {
			if p := recover(); p == nil {
				t.Error("no panic reached the caller")
			}
		}()
		e.Search(context.Background(), engine.SearchRequest{Query: "beach trip"})
	}()
	if n := emb.inside.Load(); n != 0 {
		t.Errorf("%d query embeddings still running", n)
	}
	if _, err := e.Search(context.Background(), engine.SearchRequest{Query: "beach"}); err != nil {
		t.Fatal(err)
	}
}

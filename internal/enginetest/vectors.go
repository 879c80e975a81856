package enginetest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
)

// HashEmbedder is a deterministic test double for engine.Embedder: a
// feature-hashed bag of words (each lower-cased word adds ±1 to one of dim
// buckets), L2-normalized. Texts sharing words get similar vectors. It
// counts how often each text was embedded and can be made to fail.
type HashEmbedder struct {
	model string
	dim   int

	mu    sync.Mutex
	count map[string]int
	texts atomic.Int64 // written under mu, read without it
	// Fail, when set, is asked before each batch (with the count of texts
	// embedded so far and the batch's size); a non-nil error fails it.
	// Set it before the embedder is in use, or while no batch runs.
	Fail func(done, batch int) error
}

// NewHashEmbedder is a HashEmbedder of model id model and dimension dim.
func NewHashEmbedder(model string, dim int) *HashEmbedder {
	return &HashEmbedder{model: model, dim: dim, count: map[string]int{}}
}

func (h *HashEmbedder) Dim() int        { return h.dim }
func (h *HashEmbedder) ModelID() string { return h.model }

func (h *HashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.Fail != nil {
		if err := h.Fail(int(h.texts.Load()), len(texts)); err != nil {
			return nil, err
		}
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h.count[t]++
		h.texts.Add(1)
		out[i] = HashVector(h.model, t, h.dim)
	}
	return out, nil
}

// Embedded is how many times text was embedded.
func (h *HashEmbedder) Embedded(text string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count[text]
}

// Texts is how many texts were embedded in all.
func (h *HashEmbedder) Texts() int { return int(h.texts.Load()) }

// Lock holds off the embedder's batches (Fail runs under the same lock),
// so a test can read what its Fail recorded; Unlock lets them go on.
func (h *HashEmbedder) Lock()   { h.mu.Lock() }
func (h *HashEmbedder) Unlock() { h.mu.Unlock() }

// HashVector is HashEmbedder's vector of text.
func HashVector(model, text string, dim int) []float32 {
	// Each word adds a dense pseudo-random vector seeded by its hash (so
	// texts sharing words are similar and cosines have no exact ties).
	v := make([]float32, dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		f := fnv.New64a()
		f.Write([]byte(model + "\x00" + w))
		r := rand.New(rand.NewPCG(f.Sum64(), 1))
		for i := range v {
			v[i] += float32(r.Float64()*2 - 1)
		}
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		v[0] = 1
		return v
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(n))
	}
	return v
}

// OpenDir opens an engine on dir; its store is checked (unless the test
// closed it) and the engine closed when the test ends.
func OpenDir(t testing.TB, dir string, opts engine.Options) *engine.Engine {
	t.Helper()
	e, err := OpenEngine(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ops.Check(context.Background(), e); err != nil && !errors.Is(err, engine.ErrClosed) {
			t.Errorf("invariant check: %v", err)
		}
		e.Close()
	})
	return e
}

// MustSync fills every vector set of e (ops.SyncVectors).
func MustSync(t testing.TB, e *engine.Engine) {
	t.Helper()
	if err := ops.SyncVectors(context.Background(), e, nil); err != nil {
		t.Fatal(err)
	}
}

// MustConsistent fails the test unless e's messages and vectors agree
// (ops.Consistency), and returns the report.
func MustConsistent(t testing.TB, e *engine.Engine) engine.CheckReport {
	t.Helper()
	rep, err := ops.Consistency(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("inconsistent: %v", rep.Problems)
	}
	return rep
}

// Words is the vocabulary of Batch's messages.
var Words = strings.Fields(`alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november
oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu sqlite vector index keyword
graph outbox embed filter recency confidence`)

// Batch is n messages of seed's words, over three agents' note channels,
// an hour apart from 2026-01-01.
func Batch(n, seed int) []engine.NewMessage {
	out := make([]engine.NewMessage, n)
	for i := range out {
		var b strings.Builder
		for j := 0; j < 3+(i*7+seed)%5; j++ {
			b.WriteString(Words[(i*31+j*17+seed*13)%len(Words)] + " ")
		}
		fmt.Fprintf(&b, "item%d", i)
		out[i] = engine.NewMessage{Channel: "agent-notes:agent" + fmt.Sprint(i%3), Sender: "agent" + fmt.Sprint(i%3), Content: b.String(),
			Confidence: Ptr(float64(i%10) / 10), CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)}
	}
	return out
}

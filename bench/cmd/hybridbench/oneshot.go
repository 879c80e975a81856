package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/embed/builtin"
	"github.com/cairn-dev/cairn/engine"
	"github.com/cairn-dev/cairn/engine/ops"
	"github.com/cairn-dev/cairn/engine/sqlite"
)

// builtinStandIn is the synthetic bag-of-words embedder under the built-in
// model's id: a store it fills is opened by `cairn search` with the
// built-in model as its own, so a one-shot search over it runs the real
// query embedding and a vector search over n vectors of the built-in
// model's dimension, without embedding n messages with the real encoder
// first (hours on 2 cores). The stored vectors are not the model's, so
// the results mean nothing; only the timing does.
type builtinStandIn struct{ *synthEmbedder }

func (builtinStandIn) ModelID() string { return builtin.ModelID() }

// runOneShotStore fills a data dir with the speed suite's corpus and
// stand-in vectors, for timing one-shot `cairn search` processes on it.
func runOneShotStore(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("oneshot-store", flag.ExitOnError)
	n := fs.Int("n", 100000, "messages")
	dir := fs.String("out", "", "data `DIR` to fill (new or empty)")
	fs.Parse(args)
	if *dir == "" {
		return fmt.Errorf("oneshot-store: -out is required")
	}
	g := newGen(1)
	emb := builtinStandIn{newSynth(builtin.Dim, g.vocab)}
	e, err := sqlite.OpenEngine(ctx, *dir, engine.Options{Embedder: emb, NoVectorWorker: true}, sqlite.Options{})
	if err != nil {
		return err
	}
	defer e.Close()
	for c := range 10 {
		if _, err := e.CreateChannel(ctx, engine.NewChannel{ID: fmt.Sprintf("c%d", c)}); err != nil {
			return err
		}
	}
	t0 := time.Now()
	for i := 0; i < *n; i += 1000 {
		msgs := make([]engine.NewMessage, 0, 1000)
		for j := i; j < min(i+1000, *n); j++ {
			msgs = append(msgs, g.message(j))
		}
		if _, err := e.StoreMessages(ctx, msgs); err != nil {
			return err
		}
	}
	if err := ops.SyncVectors(ctx, e, nil); err != nil {
		return err
	}
	fmt.Printf("%d messages with stand-in vectors of %s in %s (%.1f s)\n", *n, builtin.ModelID(), *dir, time.Since(t0).Seconds())
	return nil
}

// runEncoderGate runs only the encoder part of the speed suite (step 4 of
// `speed -model`): the same 600 messages of the same corpus seed, the
// encoder alone, the write pipeline with it and the query embedding, with
// the same gates. It skips the 100,000-message store, so its combined p95
// is the query embedding's alone. It prints the process CPU time too, for
// comparisons on a shared machine.
func runEncoderGate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("encoder-gate", flag.ExitOnError)
	model := fs.String("model", "builtin", "embedding model `DIR` (builtin: the built-in model)")
	seed := fs.Uint64("seed", 1, "corpus seed (the speed suite's default)")
	fs.Parse(args)
	g := newGen(*seed)
	msgs := make([]engine.NewMessage, 600)
	for i := range msgs {
		msgs[i] = g.message(i)
	}
	var fails gateFailure
	check := func(name string, ok bool, figure, limit string) {
		status := "ok"
		if !ok {
			status = "FAIL"
			fails = append(fails, fmt.Sprintf("%s: %s, limit %s", name, figure, limit))
		}
		fmt.Printf("| gate | %s | %s | %s | %s |\n", name, figure, limit, status)
	}
	fmt.Println("| kind | measurement | figure | limit | status |\n|---|---|---|---|---|")
	m, err := openSpeedModel(ctx, *model)
	if err != nil {
		return err
	}
	tokens, most := 0, 0
	for _, x := range msgs {
		ids, _ := m.Tokenizer().Encode(x.Content)
		tokens += len(ids)
		most = max(most, len(ids))
	}
	m.Close()
	fmt.Printf("| figure | tokens per text, with [CLS] and [SEP] (mean / max) | %.1f / %d | | |\n", float64(tokens)/float64(len(msgs)), most)
	t0, c0 := time.Now(), cpuTime()
	if err := encoderSpeed(ctx, *model, msgs, 0, check); err != nil {
		return err
	}
	fmt.Printf("| figure | process CPU time / wall time of the encoder steps | %.2f s / %.2f s | | |\n", (cpuTime() - c0).Seconds(), time.Since(t0).Seconds())
	if len(fails) > 0 {
		return fails
	}
	return nil
}

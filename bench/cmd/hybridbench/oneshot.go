package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/embed/builtin"
	"github.com/cairn-dev/cairn/engine"
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
	e, err := engine.Open(ctx, *dir, engine.Options{Embedder: emb, NoVectorWorker: true})
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
	if err := e.SyncVectors(ctx, nil); err != nil {
		return err
	}
	fmt.Printf("%d messages with stand-in vectors of %s in %s (%.1f s)\n", *n, builtin.ModelID(), *dir, time.Since(t0).Seconds())
	return nil
}

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/engine"
)

// queryPromptEmbedder embeds the corpus with one model and, once searching
// starts, the queries with the same weights opened with a prompt (the
// instruction models such as bge put before queries). The engine has one
// embedder for both, so this is the benchmark's way to measure what a query
// prompt would give; the model id stays the documents', which the stored
// vectors carry. Query vectors are not cached on disk: the cache is keyed by
// model id and text, which the prompt does not change.
type queryPromptEmbedder struct {
	engine.Embedder
	queries   *embed.Model
	searching atomic.Bool
}

func (q *queryPromptEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if q.searching.Load() {
		return q.queries.Embed(ctx, texts)
	}
	return q.Embedder.Embed(ctx, texts)
}

// searchPhase tells emb, if it embeds queries apart, whether the corpus is
// in (on) or about to be loaded (off).
func searchPhase(emb engine.Embedder, on bool) {
	if q, ok := emb.(*queryPromptEmbedder); ok {
		q.searching.Store(on)
	}
}

// withQueryPrompt returns ne with its queries embedded under the model's
// prompt named prompt (config_sentence_transformers.json).
func withQueryPrompt(ctx context.Context, ne namedEmbedder, spec, prompt string) (namedEmbedder, func(), error) {
	_, dir := splitModelSpec(spec)
	if dir == "builtin" {
		return namedEmbedder{}, nil, fmt.Errorf("-query-prompt: the built-in model has no prompts")
	}
	m, err := embed.Open(ctx, dir, embed.Options{Prompt: prompt})
	if err != nil {
		return namedEmbedder{}, nil, fmt.Errorf("-query-prompt %q: %w", prompt, err)
	}
	ne.name += ", queries with prompt " + prompt
	ne.emb = &queryPromptEmbedder{Embedder: ne.emb, queries: m}
	return ne, func() { m.Close() }, nil
}

// splitModelSpec splits [LABEL=]DIR; the label defaults to DIR's base name.
func splitModelSpec(spec string) (label, dir string) {
	label, dir, ok := strings.Cut(spec, "=")
	if !ok {
		return filepath.Base(spec), spec
	}
	return label, dir
}

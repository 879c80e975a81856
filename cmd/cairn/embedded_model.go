//go:build !nobuiltinmodel

package main

import (
	"context"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/embed/builtin"
)

// openBuiltinModel opens the model compiled into this binary
// (embed/builtin: all-MiniLM-L6-v2, int8), read from the binary's own
// bytes. Build with -tags nobuiltinmodel for a binary without it.
func openBuiltinModel(ctx context.Context, opts embed.Options) (*embed.Model, error) {
	return builtin.Open(ctx, opts)
}

// builtinModel describes the built-in model; ok is false in a binary
// without one.
func builtinModel() (m embed.Manifest, ok bool) {
	return embed.Manifest{Name: builtin.Name, ModelID: builtin.ModelID(), Dim: builtin.Dim, Source: "built-in"}, true
}

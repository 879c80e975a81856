//go:build nobuiltinmodel

package main

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/embed"
	"github.com/cairn-dev/cairn/engine"
)

// openBuiltinModel reports that this binary was built without the built-in
// model, and how to get a model.
func openBuiltinModel(context.Context, embed.Options) (*embed.Model, error) {
	return nil, fmt.Errorf("%w: this cairn was built without the built-in model (-tags nobuiltinmodel); add one with 'cairn model import DIR'", engine.ErrNoModel)
}

// builtinModel reports that this binary has no built-in model.
func builtinModel() (embed.Manifest, bool) { return embed.Manifest{}, false }

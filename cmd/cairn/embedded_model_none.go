//go:build nobuiltinmodel

package main

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/embed"
)

// openBuiltinModel reports that this binary was built without the built-in
// model, and how to get a model.
func openBuiltinModel(context.Context, embed.Options) (*embed.Model, error) {
	return nil, fmt.Errorf("%w: this cairn was built without the built-in model (-tags nobuiltinmodel); add one with 'cairn model import DIR'", embed.ErrNoModel)
}

// builtinModelID is "": this binary has no built-in model.
func builtinModelID() string { return "" }

//go:build !embedmodel

package main

// extractEmbeddedModel reports that this binary has no built-in model
// (build with `make build-embedded-model MODEL=DIR` for one).
func extractEmbeddedModel(string) (string, bool, error) { return "", false, nil }

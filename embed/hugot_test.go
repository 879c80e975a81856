//go:build hugot

package embed_test

// hugotBuilt: this test binary has the hugot backend (-tags hugot), so the
// tests cross-check it against the native encoder.
const hugotBuilt = true

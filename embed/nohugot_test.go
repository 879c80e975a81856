//go:build !hugot

package embed_test

const hugotBuilt = false

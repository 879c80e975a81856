//go:build embedmodel

package main

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
)

// embeddedModelFS holds the model copied into cmd/cairn/embeddedmodel/ by
// `make build-embedded-model MODEL=DIR` (air-gapped single-file binaries).
//
//go:embed embeddedmodel
var embeddedModelFS embed.FS

// extractEmbeddedModel writes the built-in model once to
// models/embedded-<hash of its files>/ and returns that directory.
func extractEmbeddedModel(models string) (string, bool, error) {
	sub, err := fs.Sub(embeddedModelFS, "embeddedmodel")
	if err != nil {
		return "", false, err
	}
	h := sha256.New()
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		h.Write([]byte(p))
		h.Write(b)
		return err
	})
	if err != nil {
		return "", false, err
	}
	dir := filepath.Join(models, "embedded-"+hex.EncodeToString(h.Sum(nil))[:12])
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err == nil {
		return dir, true, nil
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := os.CopyFS(tmp, sub); err != nil {
		return "", false, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", false, err
	}
	return dir, true, nil
}

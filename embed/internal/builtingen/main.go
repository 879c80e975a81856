// Command builtingen writes the built-in model's files (embed/builtin) from
// the fp32 sentence-transformers directory of all-MiniLM-L6-v2:
//
//	go run ./embed/internal/builtingen -src DIR -out embed/builtin/minilm
//
// The weights become int8 with one float32 scale per group of 64 values of a
// row (embed/internal/quant, format version 2) for the word embeddings and every Linear weight; LayerNorm weights, biases,
// position and token-type embeddings stay float32; integer buffers are
// dropped. The Linear weights are then stored in the layout the encoder's
// integer kernels read (format version 3: the same numbers, used in place
// at load; the file records the SHA-256 of the version-2 file it unpacks
// to, which stays the model's identity). The configuration and tokenizer files are copied unchanged, and
// LICENSE, NOTICE and SHA256SUMS are added. The output depends only on the
// input files' bytes (sorted tensor order, no timestamps), so running it
// again gives byte-identical files.
package main

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/embed/internal/quant"
)

// apacheLicense is the text of the Apache License 2.0, under which
// all-MiniLM-L6-v2 is published.
//
//go:embed LICENSE-2.0.txt
var apacheLicense []byte

const notice = `all-MiniLM-L6-v2
Copyright the sentence-transformers authors (Nils Reimers and contributors).
https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2

The model is licensed under the Apache License, Version 2.0 (see LICENSE);
its model card is README.md.

Modified by cairn: model.safetensors holds the original float32 weights with
the word embeddings and every Linear weight quantized to int8 with one
float32 scale per group of 64 values of a row, the Linear weights laid out
in column panels for cairn's encoder (go run ./embed/internal/builtingen);
the other files are copied unchanged from the original model.
`

// copied are the files taken unchanged from the source directory; the
// pooling configuration's directory comes from modules.json.
var copied = []string{
	"README.md",
	"config.json",
	"config_sentence_transformers.json",
	"modules.json",
	"sentence_bert_config.json",
	"tokenizer.json",
}

func main() {
	src := flag.String("src", "", "fp32 sentence-transformers model directory (model.safetensors, tokenizer.json, ...)")
	out := flag.String("out", "", "output directory (created or replaced)")
	flag.Parse()
	if *src == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: go run ./embed/internal/builtingen -src DIR -out DIR")
		os.Exit(2)
	}
	if err := run(*src, *out); err != nil {
		fmt.Fprintln(os.Stderr, "builtingen:", err)
		os.Exit(1)
	}
}

func run(src, out string) error {
	files := map[string][]byte{"LICENSE": apacheLicense, "NOTICE": []byte(notice)}
	names := slices.Clone(copied)
	pool, err := poolingConfig(src)
	if err != nil {
		return err
	}
	names = append(names, pool)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(n)))
		if err != nil {
			return err
		}
		files[n] = b
	}
	st, err := os.ReadFile(filepath.Join(src, "model.safetensors"))
	if err != nil {
		return err
	}
	q, err := quant.Quantize(st, quant.V2)
	if err != nil {
		return fmt.Errorf("model.safetensors: %w", err)
	}
	if files["model.safetensors"], err = quant.Pack(q); err != nil {
		return fmt.Errorf("model.safetensors: %w", err)
	}
	var sums bytes.Buffer
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		h := sha256.Sum256(files[p])
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(h[:]), p)
	}
	files["SHA256SUMS"] = sums.Bytes()
	return writeDir(out, files)
}

// poolingConfig returns the path of the Pooling module's config.json.
func poolingConfig(src string) (string, error) {
	b, err := os.ReadFile(filepath.Join(src, "modules.json"))
	if err != nil {
		return "", err
	}
	var modules []struct{ Path, Type string }
	if err := json.Unmarshal(b, &modules); err != nil {
		return "", fmt.Errorf("modules.json: %w", err)
	}
	for _, m := range modules {
		if strings.HasSuffix(m.Type, ".Pooling") && m.Path != "" && path.Clean(m.Path) == m.Path && !strings.HasPrefix(m.Path, ".") {
			return path.Join(m.Path, "config.json"), nil
		}
	}
	return "", errors.New("modules.json names no Pooling module directory")
}

// writeDir replaces dir with files (a previous output, recognized by its
// SHA256SUMS, is removed first; any other non-empty directory is refused).
func writeDir(dir string, files map[string][]byte) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		if _, err := os.Stat(filepath.Join(dir, "SHA256SUMS")); err != nil {
			return fmt.Errorf("%s is not empty and holds no SHA256SUMS: refusing to replace it", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	for p, b := range files {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

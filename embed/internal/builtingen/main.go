// Command builtingen writes the built-in model's files (embed/builtin) from
// the fp32 sentence-transformers directory of all-MiniLM-L6-v2:
//
//	go run ./embed/internal/builtingen -src DIR -out embed/builtin/minilm
//
// The weights become int8 with one float32 scale per row (embed/internal/quant)
// for the word embeddings and every Linear weight; LayerNorm weights, biases,
// position and token-type embeddings stay float32; integer buffers are
// dropped. The configuration and tokenizer files are copied unchanged, and
// LICENSE, NOTICE and SHA256SUMS are added. The output depends only on the
// input files' bytes (sorted tensor order, no timestamps), so running it
// again gives byte-identical files.
package main

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
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
float32 scale per row (go run ./embed/internal/builtingen); the other files
are copied unchanged from the original model.
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
	if files["model.safetensors"], err = quantize(st); err != nil {
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

type tensor struct {
	name  string
	dtype string
	shape []int
	data  []byte
}

// quantized reports whether a tensor is stored as int8: the word embeddings
// and the Linear weights (rank 2, ".weight"); small tables that every token
// adds (positions, token types) keep float32.
func quantized(name string, shape []int) bool {
	return len(shape) == 2 && strings.HasSuffix(name, ".weight") &&
		!strings.Contains(name, "position_embeddings") && !strings.Contains(name, "token_type_embeddings")
}

// quantize rewrites an fp32 safetensors file in the built-in form.
func quantize(b []byte) ([]byte, error) {
	if len(b) < 8 {
		return nil, errors.New("short file")
	}
	hl := binary.LittleEndian.Uint64(b)
	if hl > uint64(len(b)-8) {
		return nil, errors.New("header length exceeds the file")
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+hl], &header); err != nil {
		return nil, err
	}
	data := b[8+hl:]
	var ts []tensor
	for name, raw := range header {
		if name == "__metadata__" {
			continue
		}
		var h struct {
			Dtype   string   `json:"dtype"`
			Shape   []int    `json:"shape"`
			Offsets []uint64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(h.Offsets) != 2 || h.Offsets[0] > h.Offsets[1] || h.Offsets[1] > uint64(len(data)) {
			return nil, fmt.Errorf("%s: bad offsets %v", name, h.Offsets)
		}
		seg := data[h.Offsets[0]:h.Offsets[1]]
		switch {
		case h.Dtype != "F32":
			continue // integer buffers (position_ids) are not weights
		case len(seg) != 4*numel(h.Shape):
			return nil, fmt.Errorf("%s: %d bytes for shape %v", name, len(seg), h.Shape)
		case !quantized(name, h.Shape):
			ts = append(ts, tensor{name, "F32", h.Shape, seg})
			continue
		}
		rows, cols := h.Shape[0], h.Shape[1]
		q := make([]int8, rows*cols)
		scales := make([]byte, 4*rows)
		w := make([]float32, cols)
		for r := range rows {
			for c := range w {
				w[c] = math.Float32frombits(binary.LittleEndian.Uint32(seg[4*(r*cols+c):]))
			}
			s := quant.Row(w, q[r*cols:(r+1)*cols])
			binary.LittleEndian.PutUint32(scales[4*r:], math.Float32bits(s))
		}
		qb := make([]byte, len(q))
		for i, v := range q {
			qb[i] = byte(v)
		}
		ts = append(ts, tensor{name, "I8", h.Shape, qb}, tensor{name + quant.ScaleSuffix, "F32", []int{rows}, scales})
	}
	// float32 tensors first, so every one starts 4-byte aligned; then by name.
	slices.SortFunc(ts, func(a, b tensor) int {
		if (a.dtype == "I8") != (b.dtype == "I8") {
			if a.dtype == "I8" {
				return 1
			}
			return -1
		}
		return strings.Compare(a.name, b.name)
	})
	type entry struct {
		Dtype   string   `json:"dtype"`
		Shape   []int    `json:"shape"`
		Offsets []uint64 `json:"data_offsets"`
	}
	hdr := map[string]any{"__metadata__": map[string]string{"format": "pt", quant.Key: quant.Int8PerRow, quant.VersionKey: quant.V1}}
	var off uint64
	for _, t := range ts {
		hdr[t.name] = entry{t.dtype, t.shape, []uint64{off, off + uint64(len(t.data))}}
		off += uint64(len(t.data))
	}
	hj, err := json.Marshal(hdr) // map keys are sorted: deterministic
	if err != nil {
		return nil, err
	}
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	var buf bytes.Buffer
	binary.Write(&buf, binary.LittleEndian, uint64(len(hj)))
	buf.Write(hj)
	for _, t := range ts {
		buf.Write(t.data)
	}
	return buf.Bytes(), nil
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

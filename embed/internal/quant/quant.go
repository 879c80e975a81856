// Package quant is the int8 weight format shared by embed (which reads it)
// and the built-in model's generator (which writes it with Quantize): a standard
// safetensors file in which some tensors are I8 with one float32 scale per
// row, value = int8 * scale (symmetric, no zero point).
//
// Byte layout: safetensors (8-byte little-endian header length, JSON header,
// data). The header's __metadata__ holds Key = Int8PerRow and VersionKey =
// V1; an I8 tensor "name" of shape [rows, ...] has its scales in the F32
// tensor "name"+ScaleSuffix of shape [rows]. Readers refuse another scheme
// or version. It is safe for concurrent use (no state) and imports only the
// standard library.
package quant

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

const (
	// Key is the metadata entry naming the quantization scheme.
	Key = "cairn.quantization"
	// Int8PerRow is the scheme: symmetric int8 with one scale per row.
	Int8PerRow = "int8-per-row-symmetric"
	// VersionKey is the metadata entry holding the format version.
	VersionKey = "cairn.quantization.version"
	// V1 is the only version written and read.
	V1 = "1"
	// ScaleSuffix names a tensor's scales: "<name>_scale".
	ScaleSuffix = "_scale"
)

// Row quantizes one row: scale = max|w| / 127 (as float32), q[i] =
// round(w[i] / scale) in [-127, 127]. An all-zero row has scale 0. The result
// depends only on the input's bits (plain IEEE operations), so the
// generator's output is byte-identical on every machine.
func Row(w []float32, q []int8) float32 {
	var mx float32
	for _, v := range w {
		mx = max(mx, float32(math.Abs(float64(v))))
	}
	if mx == 0 {
		clear(q[:len(w)])
		return 0
	}
	scale := mx / 127
	for i, v := range w {
		r := math.Round(float64(v / scale))
		q[i] = int8(max(-127, min(127, r)))
	}
	return scale
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

// Quantize rewrites an fp32 safetensors file in this format: the word
// embeddings and every Linear weight (rank 2, ".weight", not position or
// token-type embeddings) become int8 with per-row scales, other float32
// tensors are kept, integer buffers are dropped. float32 tensors come first
// (each 4-byte aligned), then int8 ones, each group sorted by name; the
// header's keys are sorted: the output depends only on the input.
func Quantize(b []byte) ([]byte, error) {
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
			s := Row(w, q[r*cols:(r+1)*cols])
			binary.LittleEndian.PutUint32(scales[4*r:], math.Float32bits(s))
		}
		qb := make([]byte, len(q))
		for i, v := range q {
			qb[i] = byte(v)
		}
		ts = append(ts, tensor{name, "I8", h.Shape, qb}, tensor{name + ScaleSuffix, "F32", []int{rows}, scales})
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
	hdr := map[string]any{"__metadata__": map[string]string{"format": "pt", Key: Int8PerRow, VersionKey: V1}}
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

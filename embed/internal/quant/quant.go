// Package quant is the int8 weight format shared by embed (which reads it)
// and the built-in model's generator (which writes it with Quantize): a standard
// safetensors file in which some tensors are I8 with float32 scales, value =
// int8 * scale (symmetric, no zero point).
//
// Byte layout: safetensors (8-byte little-endian header length, JSON header,
// data). Two format versions, named in the header's __metadata__ by Key and
// VersionKey:
//
//   - V1, Key = Int8PerRow: an I8 tensor "name" of shape [rows, ...] has one
//     scale per row, in the F32 tensor "name"+ScaleSuffix of shape [rows].
//
//   - V2, Key = Int8PerGroup: an I8 tensor "name" of shape [rows, cols] has
//     one scale per group of cols/groups consecutive values of a row, in the
//     F32 tensor "name"+ScaleSuffix of shape [rows, groups] (row-major).
//     Quantize writes groups of GroupSize values, or one group per row when
//     GroupSize does not divide cols. A row's few large weights then
//     set the step of their own group only: with one scale per row the
//     shortest texts (such as "Thank you!") fall below cosine 0.995 against
//     the fp32 model, with one per 64 values every reference text stays
//     above 0.998.
//
//   - V3 (packed.go): V2 with the BERT encoder's Linear weights laid out as
//     embed's integer kernels read them, recording the SHA-256 of the V2 file
//     it unpacks to.
//
// Readers accept these versions and refuse another scheme, version or panel
// layout. It is safe for concurrent use (no state) and imports only the
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
	// Int8PerRow is version 1's scheme: symmetric int8 with one scale per row.
	Int8PerRow = "int8-per-row-symmetric"
	// Int8PerGroup is version 2's scheme: symmetric int8 with one scale per
	// group of consecutive values within a row.
	Int8PerGroup = "int8-per-group-symmetric"
	// VersionKey is the metadata entry holding the format version.
	VersionKey = "cairn.quantization.version"
	// V1 is the per-row format (frozen: still read, written only for its fixture).
	V1 = "1"
	// V2 is the per-group format, the one the built-in model uses.
	V2 = "2"
	// GroupSize is the number of values per scale Quantize writes in V2.
	GroupSize = 64
	// ScaleSuffix names a tensor's scales: "<name>_scale".
	ScaleSuffix = "_scale"
)

// Row quantizes one row (or group): scale = max|w| / 127 (as float32), q[i] =
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

// Quantize rewrites an fp32 safetensors file in format version (V1 or V2):
// the word embeddings and every Linear weight (rank 2, ".weight", not
// position or token-type embeddings) become int8 with per-row (V1) or
// per-group (V2) scales, other float32 tensors are kept, integer buffers are
// dropped. float32 tensors come first (each 4-byte aligned), then int8 ones,
// each sorted by name; the header's keys are sorted: the output depends only
// on the input.
func Quantize(b []byte, version string) ([]byte, error) {
	var scheme string
	switch version {
	case V1:
		scheme = Int8PerRow
	case V2:
		scheme = Int8PerGroup
	default:
		return nil, fmt.Errorf("unknown format version %q (want %q or %q)", version, V1, V2)
	}
	ts, _, err := read(b)
	if err != nil {
		return nil, err
	}
	var out []tensor
	for _, t := range ts {
		switch {
		case t.dtype != "F32":
			continue // integer buffers (position_ids) are not weights
		case len(t.data) != 4*numel(t.shape):
			return nil, fmt.Errorf("%s: %d bytes for shape %v", t.name, len(t.data), t.shape)
		case !quantized(t.name, t.shape):
			out = append(out, t)
			continue
		}
		name, seg := t.name, t.data
		rows, cols := t.shape[0], t.shape[1]
		g, scaleShape := cols, []int{rows}
		if version == V2 {
			if cols >= GroupSize && cols%GroupSize == 0 {
				g = GroupSize
			}
			scaleShape = []int{rows, cols / max(g, 1)}
		}
		q := make([]int8, rows*cols)
		scales := make([]byte, 4*numel(scaleShape))
		w := make([]float32, rows*cols)
		for i := range w {
			w[i] = math.Float32frombits(binary.LittleEndian.Uint32(seg[4*i:]))
		}
		for k := 0; k < len(w) && g > 0; k += g {
			s := Row(w[k:k+g], q[k:k+g])
			binary.LittleEndian.PutUint32(scales[4*(k/g):], math.Float32bits(s))
		}
		qb := make([]byte, len(q))
		for i, v := range q {
			qb[i] = byte(v)
		}
		out = append(out, tensor{name, "I8", t.shape, qb}, tensor{name + ScaleSuffix, "F32", scaleShape, scales})
	}
	return write(out, map[string]string{"format": "pt", Key: scheme, VersionKey: version})
}

// read splits a safetensors file into its tensors (in header order, sorted
// by name) and its metadata.
func read(b []byte) ([]tensor, map[string]string, error) {
	if len(b) < 8 {
		return nil, nil, errors.New("short file")
	}
	hl := binary.LittleEndian.Uint64(b)
	if hl > uint64(len(b)-8) {
		return nil, nil, errors.New("header length exceeds the file")
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+hl], &header); err != nil {
		return nil, nil, err
	}
	data := b[8+hl:]
	var meta map[string]string
	var ts []tensor
	for name, raw := range header {
		if name == "__metadata__" {
			if err := json.Unmarshal(raw, &meta); err != nil {
				return nil, nil, fmt.Errorf("__metadata__: %w", err)
			}
			continue
		}
		var h struct {
			Dtype   string   `json:"dtype"`
			Shape   []int    `json:"shape"`
			Offsets []uint64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(h.Offsets) != 2 || h.Offsets[0] > h.Offsets[1] || h.Offsets[1] > uint64(len(data)) {
			return nil, nil, fmt.Errorf("%s: bad offsets %v", name, h.Offsets)
		}
		for _, d := range h.Shape {
			if d < 0 || d > math.MaxInt32 {
				return nil, nil, fmt.Errorf("%s: bad shape %v", name, h.Shape)
			}
		}
		ts = append(ts, tensor{name, h.Dtype, h.Shape, data[h.Offsets[0]:h.Offsets[1]]})
	}
	slices.SortFunc(ts, func(a, b tensor) int { return strings.Compare(a.name, b.name) })
	return ts, meta, nil
}

// write lays out a safetensors file: float32 tensors first, so every one
// starts 4-byte aligned (the data starts 8-byte aligned), then the others,
// each sorted by name; the header's keys are sorted. The bytes depend only
// on ts and meta.
func write(ts []tensor, meta map[string]string) ([]byte, error) {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b tensor) int {
		if (a.dtype == "F32") != (b.dtype == "F32") {
			if a.dtype == "F32" {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	type entry struct {
		Dtype   string   `json:"dtype"`
		Shape   []int    `json:"shape"`
		Offsets []uint64 `json:"data_offsets"`
	}
	hdr := map[string]any{"__metadata__": meta}
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
	buf.Grow(8 + len(hj) + int(off))
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

// Package quant is the int8 weight format shared by embed (which reads it)
// and the built-in model's generator (which writes it): a standard
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

import "math"

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

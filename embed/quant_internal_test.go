package embed

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/embed/internal/quant"
)

var rewriteQuantFixture = flag.Bool("rewrite-quant-fixture", false, "rewrite testdata/quant_v<N>.safetensors of the newest version (a frozen version's fixture never changes)")

// f32Safetensors writes float32 tensors as a safetensors file.
func f32Safetensors(t testing.TB, meta map[string]string, names []string, shapes [][]int, vals [][]float32) []byte {
	t.Helper()
	hdr := map[string]any{}
	if meta != nil {
		hdr["__metadata__"] = meta
	}
	var data bytes.Buffer
	for i, n := range names {
		off := data.Len()
		binary.Write(&data, binary.LittleEndian, vals[i])
		hdr[n] = map[string]any{"dtype": "F32", "shape": shapes[i], "data_offsets": []int{off, data.Len()}}
	}
	h, err := json.Marshal(hdr)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	binary.Write(&out, binary.LittleEndian, uint64(len(h)))
	out.Write(h)
	out.Write(data.Bytes())
	return out.Bytes()
}

// quantInput is the fp32 source of the testdata/quant_v<N>.safetensors
// fixtures: a 3x4 weight (one group per row in every version, its last row
// all zero), a 2x128 one whose rows have groups of very different magnitude
// (two groups per row in version 2), and a bias.
func quantInput(t testing.TB) ([]byte, map[string][]float32) {
	w := []float32{0.5, -1.27, 0.01, 0, 3, 2.9, -3, 0.001, 0, 0, 0, 0}
	wide := make([]float32, 2*128)
	for i := range wide {
		wide[i] = float32(i%7-3) / 1000
		if i%128 >= 64 {
			wide[i] *= 500
		}
	}
	bias := []float32{0.25, -0.5, 1}
	src := f32Safetensors(t, map[string]string{"format": "pt"},
		[]string{"layer.dense.weight", "layer.dense.bias", "layer.wide.weight"}, [][]int{{3, 4}, {3}, {2, 128}}, [][]float32{w, bias, wide})
	return src, map[string][]float32{"layer.dense.weight": w, "layer.dense.bias": bias, "layer.wide.weight": wide}
}

// TestQuantFixtures opens the frozen file of every format version, and
// checks that Quantize still writes each byte for byte.
func TestQuantFixtures(t *testing.T) {
	for _, c := range []struct {
		version    string
		wideGroups int // scales per row of layer.wide.weight
	}{{quant.V1, 1}, {quant.V2, 2}} {
		t.Run("v"+c.version, func(t *testing.T) {
			src, want := quantInput(t)
			if c.version == quant.V1 {
				// The version-1 fixture predates the wide tensor.
				src = f32Safetensors(t, map[string]string{"format": "pt"}, []string{"layer.dense.weight", "layer.dense.bias"},
					[][]int{{3, 4}, {3}}, [][]float32{want["layer.dense.weight"], want["layer.dense.bias"]})
				delete(want, "layer.wide.weight")
			}
			got, err := quant.Quantize(src, c.version)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "quant_v"+c.version+".safetensors")
			if *rewriteQuantFixture && c.version == quant.V2 {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fixture, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fixture, got) {
				t.Errorf("quant.Quantize no longer writes %s byte for byte", path)
			}
			ts, err := parseSafetensors(fixture)
			if err != nil {
				t.Fatal(err)
			}
			if len(ts) != len(want) {
				t.Fatalf("%d tensors, want %d (scales belong to their tensor)", len(ts), len(want))
			}
			w := ts["layer.dense.weight"]
			if w.q == nil || len(w.scale) != 3 {
				t.Fatalf("weight not int8 with 3 row scales: %+v", w)
			}
			if wide, ok := ts["layer.wide.weight"]; ok && (wide.q == nil || len(wide.scale) != 2*c.wideGroups) {
				t.Fatalf("wide weight: %d scales, want %d", len(wide.scale), 2*c.wideGroups)
			}
			for name, vals := range want {
				tt := ts[name]
				got := tt.float32s()
				for i, v := range vals {
					tol := 0.0
					if tt.q != nil {
						tol = float64(tt.scale[i/tt.group]) / 2
					}
					if math.Abs(float64(got[i]-v)) > tol {
						t.Errorf("%s[%d] = %g, want %g ± %g", name, i, got[i], v, tol)
					}
				}
			}
			if w.scale[2] != 0 || w.float32s()[8] != 0 {
				t.Errorf("all-zero row: scale %g", w.scale[2])
			}
		})
	}
}

func TestQuantErrors(t *testing.T) {
	src, _ := quantInput(t)
	good, err := quant.Quantize(src, quant.V2)
	if err != nil {
		t.Fatal(err)
	}
	hl := binary.LittleEndian.Uint64(good)
	var hdr map[string]any
	if err := json.Unmarshal(good[8:8+hl], &hdr); err != nil {
		t.Fatal(err)
	}
	rewrite := func(edit func(h map[string]any)) []byte {
		h := map[string]any{}
		b, _ := json.Marshal(hdr)
		json.Unmarshal(b, &h)
		edit(h)
		hj, _ := json.Marshal(h)
		var out bytes.Buffer
		binary.Write(&out, binary.LittleEndian, uint64(len(hj)))
		out.Write(hj)
		out.Write(good[8+hl:])
		return out.Bytes()
	}
	cases := []struct {
		name string
		edit func(h map[string]any)
		want error
	}{
		{"newer version", func(h map[string]any) { h["__metadata__"].(map[string]any)[quant.VersionKey] = "3" }, ErrUnsupported},
		{"per-row scheme with version 2", func(h map[string]any) { h["__metadata__"].(map[string]any)[quant.Key] = quant.Int8PerRow }, ErrUnsupported},
		{"per-group scheme with version 1", func(h map[string]any) { h["__metadata__"].(map[string]any)[quant.VersionKey] = quant.V1 }, ErrUnsupported},
		{"other scheme", func(h map[string]any) { h["__metadata__"].(map[string]any)[quant.Key] = "int4" }, ErrUnsupported},
		{"no metadata", func(h map[string]any) { delete(h, "__metadata__") }, ErrUnsupported},
		{"no scales", func(h map[string]any) { delete(h, "layer.dense.weight"+quant.ScaleSuffix) }, ErrBadModel},
		{"scales of the wrong shape", func(h map[string]any) {
			h["layer.dense.weight"+quant.ScaleSuffix].(map[string]any)["shape"] = []int{2, 1}
		}, ErrBadModel},
		{"version-2 scales of rank 1", func(h map[string]any) {
			h["layer.wide.weight"+quant.ScaleSuffix].(map[string]any)["shape"] = []int{4}
		}, ErrBadModel},
		{"groups not dividing the row", func(h map[string]any) {
			h["layer.wide.weight"+quant.ScaleSuffix].(map[string]any)["shape"] = []int{1, 4}
			w := h["layer.wide.weight"].(map[string]any)
			w["shape"] = []int{1, 255}
			w["data_offsets"].([]any)[1] = w["data_offsets"].([]any)[1].(float64) - 1
		}, ErrBadModel},
	}
	for _, c := range cases {
		if _, err := parseSafetensors(rewrite(c.edit)); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	nan := bytes.Clone(good)
	// The first tensor of the data is the float32 bias, then the scales.
	var s map[string]any = hdr["layer.dense.weight"+quant.ScaleSuffix].(map[string]any)
	off := int(s["data_offsets"].([]any)[0].(float64))
	binary.LittleEndian.PutUint32(nan[8+int(hl)+off:], math.Float32bits(float32(math.NaN())))
	if _, err := parseSafetensors(nan); !errors.Is(err, ErrBadModel) {
		t.Errorf("NaN scale: %v", err)
	}
}

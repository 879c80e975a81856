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

var rewriteQuantFixture = flag.Bool("rewrite-quant-fixture", false, "rewrite testdata/quant_v1.safetensors (never needed for format version 1)")

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

// quantInput is the fp32 source of testdata/quant_v1.safetensors.
func quantInput(t testing.TB) ([]byte, map[string][]float32) {
	w := []float32{0.5, -1.27, 0.01, 0, 3, 2.9, -3, 0.001, 0, 0, 0, 0}
	bias := []float32{0.25, -0.5, 1}
	src := f32Safetensors(t, map[string]string{"format": "pt"},
		[]string{"layer.dense.weight", "layer.dense.bias"}, [][]int{{3, 4}, {3}}, [][]float32{w, bias})
	return src, map[string][]float32{"layer.dense.weight": w, "layer.dense.bias": bias}
}

// TestQuantV1Fixture opens the frozen format-version-1 file, and checks that
// Quantize still writes it byte for byte.
func TestQuantV1Fixture(t *testing.T) {
	src, want := quantInput(t)
	got, err := quant.Quantize(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "quant_v1.safetensors")
	if *rewriteQuantFixture {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fixture, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fixture, got) {
		t.Error("quant.Quantize no longer writes testdata/quant_v1.safetensors byte for byte")
	}
	ts, err := parseSafetensors(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 {
		t.Fatalf("%d tensors, want 2 (scales belong to their tensor)", len(ts))
	}
	w := ts["layer.dense.weight"]
	if w.q == nil || len(w.scale) != 3 {
		t.Fatalf("weight not int8 with 3 row scales: %+v", w)
	}
	for name, vals := range want {
		got := ts[name].float32s()
		for i, v := range vals {
			tol := 0.0
			if ts[name].q != nil {
				tol = float64(ts[name].scale[i/4]) / 2
			}
			if math.Abs(float64(got[i]-v)) > tol {
				t.Errorf("%s[%d] = %g, want %g ± %g", name, i, got[i], v, tol)
			}
		}
	}
	if w.scale[2] != 0 || w.float32s()[8] != 0 {
		t.Errorf("all-zero row: scale %g", w.scale[2])
	}
}

func TestQuantErrors(t *testing.T) {
	src, _ := quantInput(t)
	good, err := quant.Quantize(src)
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
		{"newer version", func(h map[string]any) { h["__metadata__"].(map[string]any)[quant.VersionKey] = "2" }, ErrUnsupported},
		{"other scheme", func(h map[string]any) { h["__metadata__"].(map[string]any)[quant.Key] = "int4" }, ErrUnsupported},
		{"no metadata", func(h map[string]any) { delete(h, "__metadata__") }, ErrUnsupported},
		{"no scales", func(h map[string]any) { delete(h, "layer.dense.weight"+quant.ScaleSuffix) }, ErrBadModel},
		{"scales of the wrong shape", func(h map[string]any) {
			h["layer.dense.weight"+quant.ScaleSuffix].(map[string]any)["shape"] = []int{2}
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

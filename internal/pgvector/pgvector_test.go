package pgvector

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// edgeValues are the float32 values a text form most easily gets wrong.
var edgeValues = []float32{
	0, float32(math.Copysign(0, -1)),
	math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, // smallest subnormal
	math.Float32frombits(0x007fffff), -math.Float32frombits(0x007fffff), // largest subnormal
	math.Float32frombits(0x00800000), -math.Float32frombits(0x00800000), // smallest normal
	math.MaxFloat32, -math.MaxFloat32,
	1, -1, 0.1, 1e-5, 1e-4, 1e20, 16777217, 0.30000001192092896,
}

// randomComponent is a finite float32: an edge value, a unit-vector-like
// value, or any finite bit pattern (every exponent, subnormals included).
func randomComponent(r *rand.Rand) float32 {
	switch r.IntN(3) {
	case 0:
		return edgeValues[r.IntN(len(edgeValues))]
	case 1:
		return float32(r.NormFloat64() / 20)
	default:
		for {
			f := math.Float32frombits(r.Uint32())
			if !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
				return f
			}
		}
	}
}

func TestTextParseRoundTripIsBitIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for n := range 5000 {
		v := make([]float32, r.IntN(65))
		if n < len(edgeValues) {
			v = []float32{edgeValues[n]}
		}
		for i := range v {
			if n >= len(edgeValues) {
				v[i] = randomComponent(r)
			}
		}
		text := Text(v)
		got, err := Parse(text)
		if err != nil {
			t.Fatalf("vector %d: Parse(%q): %v", n, text, err)
		}
		if len(got) != len(v) {
			t.Fatalf("vector %d: %d components read back, want %d", n, len(got), len(v))
		}
		for i := range v {
			if math.Float32bits(got[i]) != math.Float32bits(v[i]) {
				t.Fatalf("vector %d component %d: %v (bits %08x) read back as %v (bits %08x) from %q",
					n, i, v[i], math.Float32bits(v[i]), got[i], math.Float32bits(got[i]), text)
			}
		}
	}
}

func TestTextIsShortestForm(t *testing.T) {
	for _, c := range []struct {
		v    []float32
		want string
	}{
		{[]float32{}, "[]"},
		{[]float32{0.5, -1, 3}, "[0.5,-1,3]"},
		{[]float32{0.1}, "[0.1]"},
		{[]float32{1e-5, math.SmallestNonzeroFloat32}, "[1e-05,1e-45]"},
		{[]float32{math.MaxFloat32, float32(math.Copysign(0, -1))}, "[3.4028235e+38,-0]"},
	} {
		if got := Text(c.v); got != c.want {
			t.Errorf("Text(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// NaN and infinities are written as pgvector spells them, so PostgreSQL
// refuses them with its own error, and read back as what they are.
func TestNonFiniteComponents(t *testing.T) {
	text := Text([]float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))})
	if text != "[NaN,+Inf,-Inf]" {
		t.Fatalf("Text = %q, want [NaN,+Inf,-Inf]", text)
	}
	got, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(float64(got[0])) || !math.IsInf(float64(got[1]), 1) || !math.IsInf(float64(got[2]), -1) {
		t.Fatalf("Parse(%q) = %v", text, got)
	}
}

func TestParseAcceptsEmptyAndSurroundingSpace(t *testing.T) {
	if got, err := Parse("[]"); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("Parse([]) = %v, %v; want an empty vector", got, err)
	}
	if got, err := Parse(" [1,2]\n"); err != nil || len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("Parse with surrounding space = %v, %v", got, err)
	}
}

func TestParseRefusesMalformedText(t *testing.T) {
	for _, c := range []struct{ in, wantErr string }{
		{"", "not a vector"},
		{"[", "not a vector"},
		{"]", "not a vector"},
		{"1,2", "not a vector"},
		{"[1,2", "not a vector"},
		{"[1,,2]", "component 1"},
		{"[1,x]", "component 1"},
		{"[1, 2]", "component 1"},
		{"[1,]", "component 1"},
		{"[1e39]", "component 0"},
	} {
		got, err := Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("Parse(%q) = %v, %v; want an error naming %q", c.in, got, err, c.wantErr)
		}
	}
}

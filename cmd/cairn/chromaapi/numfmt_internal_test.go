package chromaapi

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// The expected strings are what Chroma 1.0.0 (serde_json with Ryū) wrote for
// these values in the recorded cases (testdata/chroma/cases/numbers_json.json).
func TestAppendFloat(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		bits int
		want string
	}{
		{0.1, 32, "0.1"}, {1, 32, "1.0"}, {1e-7, 32, "1e-7"}, {1e20, 32, "1e20"}, {math.Copysign(0, -1), 32, "-0.0"},
		{float64(float32(0.30000001192092896)), 32, "0.3"}, {float64(float32(3.4028235e38)), 32, "3.4028235e38"},
		{float64(float32(1.17549435e-38)), 32, "1.1754944e-38"}, {float64(float32(0.1) * float32(0.1)), 32, "0.010000001"},
		{float64(float32(0.05)), 32, "0.05"}, {123456, 32, "123456.0"}, {1234567936, 32, "1234568000.0"},
		{1e13, 32, "1e13"}, {1e12, 32, "1000000000000.0"}, {1e-5, 32, "0.00001"}, {1e-6, 32, "0.000001"},
		{1.5e-7, 32, "1.5e-7"}, {-2.5, 32, "-2.5"},
		{1e20, 64, "1e20"}, {1e-7, 64, "1e-7"}, {2.5e-5, 64, "0.000025"}, {1e-4, 64, "0.0001"}, {1e16, 64, "1e16"},
		{1e15, 64, "1000000000000000.0"}, {123456789012345680000.0, 64, "1.2345678901234568e20"},
		{9223372036854775808, 64, "9.223372036854776e18"}, {1e308, 64, "1e308"},
		{1.7976931348623157e308, 64, "1.7976931348623157e308"}, {5e-324, 64, "5e-324"}, {-1.5e-10, 64, "-1.5e-10"},
		{12345.678, 64, "12345.678"}, {0.30000000000000004, 64, "0.30000000000000004"}, {1.2, 64, "1.2"},
		{math.NaN(), 64, "null"}, {math.Inf(1), 32, "null"},
	} {
		if got := string(appendFloat(nil, tc.f, tc.bits)); got != tc.want {
			t.Errorf("appendFloat(%v, %d) = %s, want %s", tc.f, tc.bits, got, tc.want)
		}
	}
}

// Every output must read back as the same value and as a float.
func FuzzAppendFloat(f *testing.F) {
	for _, x := range []float64{0, 1, 0.1, 1e20, 1e-7, 5e-324, 1.7976931348623157e308} {
		f.Add(math.Float64bits(x))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		x := math.Float64frombits(bits)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		for _, size := range []int{32, 64} {
			v := x
			if size == 32 {
				v = float64(float32(x))
				if math.IsInf(v, 0) {
					continue
				}
			}
			s := string(appendFloat(nil, v, size))
			back, err := strconv.ParseFloat(s, size)
			if err != nil || back != v && !(v == 0 && back == 0) {
				t.Fatalf("appendFloat(%v, %d) = %s, reads back as %v (%v)", v, size, s, back, err)
			}
			if !strings.ContainsAny(s, ".e") {
				t.Fatalf("appendFloat(%v, %d) = %s reads as an integer", v, size, s)
			}
		}
	})
}

package embed

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// TestKernelsEqual checks every kernel set this CPU runs against a float64
// computation of the same expression (and so against each other).
func TestKernelsEqual(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, name := range AvailableKernels() {
		ks, err := selectKernels(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(string(name), func(t *testing.T) {
			nr, mr := ks.nr, ks.mr
			for _, k := range []int{0, 1, 3, 17, 32, 384, 1536} {
				lda, ldc := k+5, nr+3
				a := randVec(rng, (mr-1)*lda+k)
				b := randVec(rng, k*nr)
				bias := randVec(rng, nr)
				c := make([]float32, (mr-1)*ldc+nr)
				ks.gemm(a, lda, b, k, bias, c, ldc)
				for r := 0; r < mr; r++ {
					for j := 0; j < nr; j++ {
						want := float64(bias[j])
						for p := 0; p < k; p++ {
							want += float64(a[r*lda+p]) * float64(b[p*nr+j])
						}
						if got := float64(c[r*ldc+j]); math.Abs(got-want) > 1e-4*(1+math.Sqrt(float64(k))) {
							t.Fatalf("gemm k=%d: C[%d][%d] = %g, want %g", k, r, j, got, want)
						}
					}
				}
			}
			for n := 0; n <= 70; n++ {
				x, y := randVec(rng, n), randVec(rng, n)
				var want float64
				for i := range x {
					want += float64(x[i]) * float64(y[i])
				}
				if got := ks.dot(x, y); math.Abs(float64(got)-want) > 1e-5*float64(n+1) {
					t.Fatalf("dot n=%d: %g, want %g", n, got, want)
				}
				y0 := append([]float32(nil), y...)
				ks.axpy(0.75, x, y)
				for i := range y {
					if want := float64(y0[i]) + 0.75*float64(x[i]); math.Abs(float64(y[i])-want) > 1e-6 {
						t.Fatalf("axpy n=%d: y[%d] = %g, want %g", n, i, y[i], want)
					}
				}
				g := randVec(rng, n)
				for i := range g {
					g[i] *= 3
				}
				g0 := append([]float32(nil), g...)
				ks.gelu(g)
				for i := range g {
					x := float64(g0[i])
					want := 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
					if math.Abs(float64(g[i])-want) > 1e-6*(1+math.Abs(x)) {
						t.Fatalf("gelu n=%d: gelu(%g) = %g, want %g", n, x, g[i], want)
					}
				}
			}
		})
	}
}

func TestMathApprox(t *testing.T) {
	for x := -10.0; x <= 10; x += 0.001 {
		if d := math.Abs(float64(erf32(float32(x))) - math.Erf(x)); d > 1e-6 {
			t.Fatalf("erf32(%g) off by %g", x, d)
		}
	}
	for x := -87.0; x <= 88; x += 0.01 {
		want := math.Exp(float64(float32(x)))
		if d := math.Abs(float64(exp32(float32(x)))-want) / want; d > 5e-7 {
			t.Fatalf("exp32(%g) relative error %g", x, d)
		}
	}
}

func FuzzParseSafetensors(f *testing.F) {
	f.Add([]byte("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}\x00\x00\x80\x3f"))
	f.Add([]byte{})
	for _, fixture := range []string{"quant_v1.safetensors", "quant_v2.safetensors"} {
		if b, err := os.ReadFile(filepath.Join("testdata", fixture)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		parseSafetensors(b)
	})
}

func FuzzParseONNXWeights(f *testing.F) {
	f.Add([]byte{0x3a, 0x02, 0x2a, 0x00})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		parseONNXWeights(b)
	})
}

// TestInt8PanelsMatchDequantized checks that a Linear layer kept as int8
// panels (dequantized panel by panel while multiplying) gives bit for bit
// what the same layer dequantized at load gives, for every kernel set,
// group size and a width that leaves a partial panel.
func TestInt8PanelsMatchDequantized(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, name := range AvailableKernels() {
		ks, err := selectKernels(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, shape := range [][4]int{{5, 128, 40, 64}, {17, 384, 96, 64}, {8, 96, 33, 96}, {4, 64, 16, 32}} {
			rows, in, out, group := shape[0], shape[1], shape[2], shape[3]
			q := make([]byte, out*in)
			for i := range q {
				q[i] = byte(rng.IntN(256))
			}
			scale := make([]float32, out*in/group)
			for i := range scale {
				scale[i] = float32(rng.Float64()) / 100
			}
			w8 := rawTensor{shape: []int{out, in}, q: q, scale: scale, group: group}
			w32 := rawTensor{shape: []int{out, in}, data: w8.float32s()}
			bias := rawTensor{shape: []int{out}, data: randVec(rng, out)}
			l8, err := packLinear(w8, bias, ks.nr)
			if err != nil {
				t.Fatal(err)
			}
			l32, err := packLinear(w32, bias, ks.nr)
			if err != nil {
				t.Fatal(err)
			}
			if l8.q == nil {
				t.Fatalf("%s %v: int8 weights were dequantized at load", name, shape)
			}
			padded := (rows + ks.mr - 1) / ks.mr * ks.mr
			x := randVec(rng, padded*in)
			y8, y32 := make([]float32, padded*out), make([]float32, padded*out)
			for _, workers := range []int{1, 2} {
				bt := &bert{k: ks, workers: workers}
				bt.matmul(x, padded, l8, y8)
				bt.matmul(x, padded, l32, y32)
				for i := range y8 {
					if math.Float32bits(y8[i]) != math.Float32bits(y32[i]) {
						t.Fatalf("%s %v workers %d: y[%d] = %g from int8 panels, %g dequantized at load", name, shape, workers, i, y8[i], y32[i])
					}
				}
			}
		}
	}
}

// TestExpShiftBitForBit holds every kernel set's expShift to exp32, bit
// for bit, over the softmax range (arguments at most 0, past the cut at -87).
func TestExpShiftBitForBit(t *testing.T) {
	var xs []float32
	for x := float32(-100); x <= 0; x += 0.0009765625 {
		xs = append(xs, x)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for range 5000 {
		xs = append(xs, -float32(rng.ExpFloat64()*10))
	}
	xs = append(xs, 0, -87, -86.99999, -87.00001, float32(math.Copysign(0, -1)))
	for _, name := range AvailableKernels() {
		ks, err := selectKernels(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []float32{0, 1.5, -3.25} {
			v := make([]float32, len(xs)+5) // a tail the vector loop leaves
			for i := range v {
				v[i] = xs[i%len(xs)] + m
			}
			in := append([]float32(nil), v...)
			ks.expShift(v, m)
			for i := range v {
				if want := exp32(in[i] - m); math.Float32bits(v[i]) != math.Float32bits(want) {
					t.Fatalf("%s: expShift(%g - %g) = %g, exp32 gives %g", name, in[i], m, v[i], want)
				}
			}
		}
	}
}

package embed

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/embed/internal/quant"
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
	for _, fixture := range []string{"quant_v1.safetensors", "quant_v2.safetensors", "quant_v3.safetensors"} {
		if b, err := os.ReadFile(filepath.Join("testdata", fixture)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		parseSafetensors(b)
	})
}

// TestQuantV3Fixture opens the frozen packed-format fixture (one GELU-fed
// Linear layer): it unpacks to a version-2 file, and its layer, used in
// place, multiplies bit for bit as the unpacked one laid out at load; the
// same panels refuse to feed on signed activations.
func TestQuantV3Fixture(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "quant_v3.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	v2, err := quant.Unpack(b)
	if err != nil {
		t.Fatal(err)
	}
	packed, err := parseSafetensors(b)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := parseSafetensors(v2)
	if err != nil {
		t.Fatal(err)
	}
	const name = "encoder.layer.0.output.dense"
	if packed[name+".weight"].panels == nil || plain[name+".weight"].q == nil {
		t.Fatalf("packed %+v, plain %+v", packed[name+".weight"], plain[name+".weight"])
	}
	if _, err := packLinear(packed[name+".weight"], packed[name+".bias"], 8, false); !errors.Is(err, ErrBadModel) {
		t.Fatalf("unsigned panels fed signed activations: %v", err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for _, k := range AvailableKernels() {
		ks, err := selectKernels(k)
		if err != nil {
			t.Fatal(err)
		}
		lp, err := packLinear(packed[name+".weight"], packed[name+".bias"], ks.nr, true)
		if err != nil {
			t.Fatal(err)
		}
		lq, err := packLinear(plain[name+".weight"], plain[name+".bias"], ks.nr, true)
		if err != nil {
			t.Fatal(err)
		}
		x := randVec(rng, 8*lp.in)
		for i := range x {
			x[i] = float32(math.Abs(float64(x[i])))
		}
		yp, yq := make([]float32, 8*lp.out), make([]float32, 8*lp.out)
		bt := &bert{k: ks, workers: 1}
		bt.matmul(x, 8, lp, yp)
		bt.matmul(x, 8, lq, yq)
		for i := range yp {
			if math.Float32bits(yp[i]) != math.Float32bits(yq[i]) {
				t.Fatalf("%s: y[%d] = %g packed, %g unpacked", k, i, yp[i], yq[i])
			}
		}
	}
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
		// Groups that are not a multiple of 4 (the integer kernel's quads).
		for _, shape := range [][4]int{{5, 126, 40, 42}, {17, 385, 96, 77}, {8, 90, 33, 90}, {4, 66, 16, 33}} {
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
			l8, err := packLinear(w8, bias, ks.nr, false)
			if err != nil {
				t.Fatal(err)
			}
			l32, err := packLinear(w32, bias, ks.nr, false)
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

// TestGemmI8MatchesReference holds the integer path of an int8 layer, both
// forms (symmetric activations, and unsigned ones with a zero point for a
// GELU output), with every kernel set, 1 and 2 workers and partial panels,
// bit for bit to a direct evaluation of its definition: activations
// quantized per row and group, exact integer sums per group, then the group
// sums scaled and added in float32 in order, each by the scale of the weight
// group holding it.
func TestGemmI8MatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	for _, name := range AvailableKernels() {
		ks, err := selectKernels(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, unsigned := range []bool{false, true} {
			// Weight groups of 64 and 96 hold two and three activation groups.
			for _, shape := range [][4]int{{5, 128, 40, 64}, {17, 384, 96, 64}, {8, 96, 33, 96}, {4, 64, 16, 32}, {9, 1536, 48, 64}, {4, 8, 20, 4}, {4, 72, 16, 36}} {
				rows, in, out, wgroup := shape[0], shape[1], shape[2], shape[3]
				group := quant.ActGroup(wgroup)
				groups, wgroups := in/group, in/wgroup
				q := make([]byte, out*in)
				for i := range q {
					q[i] = byte(rng.IntN(256)) // -128 included
				}
				scale := make([]float32, out*wgroups)
				for i := range scale {
					scale[i] = float32(rng.Float64()) / 100
				}
				w8 := rawTensor{shape: []int{out, in}, q: q, scale: scale, group: wgroup}
				bias := rawTensor{shape: []int{out}, data: randVec(rng, out)}
				l, err := packLinear(w8, bias, ks.nr, unsigned)
				if err != nil {
					t.Fatal(err)
				}
				if l.i8 == nil || l.i8.unsigned != unsigned {
					t.Fatalf("%s %v: no integer panels of the asked form", name, shape)
				}
				padded := (rows + ks.mr - 1) / ks.mr * ks.mr
				x := randVec(rng, padded*in)
				for i := range x {
					switch rng.IntN(50) {
					case 0:
						x[i] *= 40 // outliers
					case 1:
						x[i] = 0
					}
					if unsigned && rng.IntN(4) > 0 {
						x[i] = float32(math.Abs(float64(x[i]))) // mostly positive, as a GELU output
					}
				}
				clear(x[in : 2*in]) // a row of zeros
				want := make([]float32, padded*out)
				qa := make([]byte, in)
				for r := 0; r < padded; r++ {
					sa, za := make([]float32, groups), make([]float32, groups)
					if unsigned {
						sz := make([]float32, 2*groups)
						quantizeRowUGo(x[r*in:(r+1)*in], group, qa, sz)
						for g := range sa {
							sa[g], za[g] = sz[2*g], sz[2*g+1]
						}
					} else {
						quantizeRowGo(x[r*in:(r+1)*in], group, qa, sa)
					}
					for o := 0; o < out; o++ {
						c := bias.data[o]
						for g := 0; g < groups; g++ {
							var sum, wsum int64
							for k := g * group; k < (g+1)*group; k++ {
								a := int64(int8(qa[k]))
								if unsigned {
									a = int64(qa[k])
									wsum += int64(int8(q[o*in+k]))
								}
								sum += a * int64(int8(q[o*in+k]))
							}
							d := float32(sum)
							if unsigned {
								d = float32(d - float32(za[g]*float32(wsum)))
							}
							c += float32(d * float32(scale[o*wgroups+g*group/wgroup]*sa[g]))
						}
						want[r*out+o] = c
					}
				}
				for _, workers := range []int{1, 2} {
					y := make([]float32, padded*out)
					(&bert{k: ks, workers: workers}).matmul(x, padded, l, y)
					for i := range y {
						if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s %v unsigned %v workers %d: y[%d] = %g, the definition gives %g", name, shape, unsigned, workers, i, y[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestQuantizeRowU checks the unsigned quantization of a GELU output: the
// range includes 0, the zero point maps 0 exactly, values stay in [0, 127].
func TestQuantizeRowU(t *testing.T) {
	x := []float32{-0.17, 0, 1, 2.37, 0, 0, 0, 0, 5, 4, 3, 1}
	q, sz := make([]byte, len(x)), make([]float32, 6)
	quantizeRowUGo(x, 4, q, sz)
	if sz[2] != 0 || sz[3] != 0 || q[4] != 0 {
		t.Fatalf("a zero group: scale %g zero point %g q %d", sz[2], sz[3], q[4])
	}
	for g := 0; g < 3; g++ {
		for i := g * 4; i < g*4+4; i++ {
			if q[i] > 127 {
				t.Fatalf("q[%d] = %d, above 127", i, q[i])
			}
			if got := sz[2*g] * (float32(q[i]) - sz[2*g+1]); math.Abs(float64(got-x[i])) > float64(sz[2*g])/2*1.0001 {
				t.Fatalf("x[%d] = %g comes back as %g (scale %g)", i, x[i], got, sz[2*g])
			}
		}
	}
	if z := sz[1]; q[1] != byte(z) {
		t.Fatalf("0 is %d, the zero point %g", q[1], z)
	}
	if sz[5] != 0 || q[11] != 25 {
		t.Fatalf("an all-positive group: zero point %g, q(1) = %d, want 0 and 25", sz[5], q[11])
	}
}

// TestQuantizeKernels holds every kernel set's activation quantizations to
// quantizeRowGo and quantizeRowUGo, byte for byte, on rows with outliers, ties, zero and
// infinite groups.
func TestQuantizeKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, name := range AvailableKernels() {
		ks, err := selectKernels(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, group := range []int{64, 32, 8, 12, 384} {
			x := randVec(rng, 3*384)
			for i := range x {
				switch rng.IntN(40) {
				case 0:
					x[i] *= 100
				case 1:
					x[i] = float32(rng.IntN(255)-127) / 2 // ties once scaled by 127/127
				}
			}
			clear(x[:group])
			x[len(x)-1] = float32(math.Inf(1))
			groups := len(x) / group
			q, s := make([]byte, len(x)), make([]float32, groups)
			wq, ws := make([]byte, len(x)), make([]float32, groups)
			ks.quantize(x, group, q, s)
			quantizeRowGo(x, group, wq, ws)
			uq, us := make([]byte, len(x)), make([]float32, 2*groups)
			wuq, wus := make([]byte, len(x)), make([]float32, 2*groups)
			ks.quantizeU(x, group, uq, us)
			quantizeRowUGo(x, group, wuq, wus)
			for i := range uq {
				if uq[i] != wuq[i] {
					t.Fatalf("%s group %d: unsigned q[%d] = %d, want %d (x %g)", name, group, i, uq[i], wuq[i], x[i])
				}
			}
			for i := range us {
				if math.Float32bits(us[i]) != math.Float32bits(wus[i]) {
					t.Fatalf("%s group %d: unsigned scale/zero point [%d] = %g, want %g", name, group, i, us[i], wus[i])
				}
			}
			for i := range q {
				if q[i] != wq[i] {
					t.Fatalf("%s group %d: q[%d] = %d, want %d (x %g)", name, group, i, int8(q[i]), int8(wq[i]), x[i])
				}
			}
			for i := range s {
				if math.Float32bits(s[i]) != math.Float32bits(ws[i]) {
					t.Fatalf("%s group %d: scale[%d] = %g, want %g", name, group, i, s[i], ws[i])
				}
			}
		}
	}
}

// TestQuantizeRow checks the activation quantization: scale max|x|/127 per
// group, values rounded to nearest within [-127, 127], zeros for a zero group.
func TestQuantizeRow(t *testing.T) {
	x := []float32{1, -2, 0.5, 127, 0, 0, 0, 0, -3e-8, 1e-8, 2e-8, 0}
	q, s := make([]byte, len(x)), make([]float32, 3)
	quantizeRowGo(x, 4, q, s)
	wantQ := []int8{1, -2, 0, 127, 0, 0, 0, 0, -127, 42, 85, 0}
	for i, v := range wantQ {
		if int8(q[i]) != v {
			t.Fatalf("q = %v, want %v", q, wantQ)
		}
	}
	if s[0] != 1 || s[1] != 0 || s[2] != float32(3e-8)/127 {
		t.Fatalf("scales = %v", s)
	}
}

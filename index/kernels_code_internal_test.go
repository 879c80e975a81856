package index

import (
	"math"
	"math/rand/v2"
	"testing"
)

// dotU8Ref is the float64 reference for the uint8 kernels.
func dotU8Ref(q []float32, c []byte) (dot, scale float64) {
	for i := range q {
		p := float64(q[i]) * float64(c[i])
		dot += p
		scale += math.Abs(p)
	}
	return dot, scale
}

// checkDotU8 compares every kernel's single and batch uint8 dot products
// with the reference, and each batch with its own single form bit for bit.
func checkDotU8(t *testing.T, q []float32, codes []byte, stride, off int, ids []uint32) {
	t.Helper()
	dim := len(q)
	out := make([]float32, len(ids))
	for _, k := range kernels() {
		k.dotU8Batch(q, codes, stride, off, ids, out)
		for i, id := range ids {
			c := codes[int(id)*stride+off:]
			want, scale := dotU8Ref(q, c)
			got := k.dotU8(q, c)
			if math.Abs(float64(got)-want) > 1e-5*(scale+1) {
				t.Fatalf("%s dim %d: dotU8 = %v, want %v", k.name, dim, got, want)
			}
			if out[i] != got {
				t.Fatalf("%s dim %d: dotU8Batch[%d] = %v, dotU8 = %v", k.name, dim, i, out[i], got)
			}
		}
	}
}

// TestCodeKernelsAgree runs the uint8 kernels against the float64
// reference at every tail length and the model dimensions, with codes at
// the extremes (0 and 255) as well as random ones.
func TestCodeKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	dims := []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 39, 40, 63, 64, 65, 100, 127, 128, 129, 384, 768, 1000, 1536}
	for _, dim := range dims {
		stride := sq8Stride(dim)
		const rows = 20
		codes := make([]byte, rows*stride)
		for i := range codes {
			switch i % 3 {
			case 0:
				codes[i] = uint8(r.IntN(256))
			case 1:
				codes[i] = 255
			default:
				codes[i] = uint8(r.IntN(2) * 255)
			}
		}
		q := make([]float32, dim)
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		checkDotU8(t, q, codes, stride, sq8Header, []uint32{0, 19, 7, 7, 3, 11})
		checkDotU8(t, q, codes, stride, sq8Header, nil)
	}
}

// FuzzCodeKernels feeds arbitrary codes and query bytes to every uint8
// kernel and compares with the reference.
func FuzzCodeKernels(f *testing.F) {
	f.Add([]byte{1, 2, 3, 255, 0, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 255, 128}, uint8(3))
	f.Add(make([]byte, 400), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, qseed uint8) {
		dim := len(data) / 2
		stride := dim + 5
		codes := make([]byte, 2*stride)
		copy(codes[5:], data[:dim])
		copy(codes[stride+5:], data[dim:2*dim])
		r := rand.New(rand.NewPCG(uint64(qseed), uint64(dim)))
		q := make([]float32, dim)
		for i := range q {
			q[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
		}
		checkDotU8(t, q, codes, stride, 5, []uint32{1, 0, 1})
	})
}

// TestSQ8RoundTrip checks the encoder's error bound: every decoded
// component is within half a step of the original, extremes exact.
func TestSQ8RoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, dim := range []int{1, 2, 7, 384} {
		for trial := range 50 {
			v := make([]float32, dim)
			for i := range v {
				v[i] = float32(r.NormFloat64() * math.Pow(10, float64(trial%5-2)))
			}
			if trial%7 == 0 {
				for i := range v {
					v[i] = 0.25 // constant vector: step 0
				}
			}
			row := make([]byte, sq8Stride(dim))
			encodeSQ8(row, v, false)
			lo, step, sq := params(row)
			got := make([]float32, dim)
			decodeSQ8(got, row)
			var want float64
			for i := range v {
				if d := math.Abs(float64(got[i] - v[i])); d > float64(step)*0.5001+1e-7*math.Abs(float64(v[i])) {
					t.Fatalf("dim %d: component %d decoded %v from %v (lo %v step %v)", dim, i, got[i], v[i], lo, step)
				}
				want += float64(got[i]) * float64(got[i])
			}
			if math.Abs(float64(sq)-want) > 1e-5*want+1e-12 {
				t.Fatalf("dim %d: stored norm² %v, decoded vector's %v", dim, sq, want)
			}
		}
	}
}

package embed

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkMatmul measures the packed GEMM (one Linear layer, single worker).
func BenchmarkMatmul(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, kn := range AvailableKernels() {
		ks, _ := selectKernels(kn)
		for _, shape := range [][3]int{{24, 384, 1536}, {64, 384, 1152}, {256, 1536, 384}} {
			rows, in, out := shape[0], shape[1], shape[2]
			w := rawTensor{shape: []int{out, in}, data: randVec(rng, out*in)}
			bias := rawTensor{shape: []int{out}, data: randVec(rng, out)}
			l, _ := packLinear(w, bias, ks.nr, false)
			x := randVec(rng, rows*in)
			y := make([]float32, rows*out)
			bt := &bert{k: ks, workers: 1}
			b.Run(fmt.Sprintf("kernels=%s/rows=%d/in=%d/out=%d", kn, rows, in, out), func(b *testing.B) {
				for b.Loop() {
					bt.matmul(x, rows, l, y)
				}
				b.ReportMetric(float64(2*rows*in*out)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkMatmulInt8 measures an int8 layer (groups of 64), single worker.
func BenchmarkMatmulInt8(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, kn := range AvailableKernels() {
		ks, _ := selectKernels(kn)
		for _, shape := range [][3]int{{20, 384, 1152}, {64, 384, 1536}, {256, 1536, 384}} {
			rows, in, out := shape[0], shape[1], shape[2]
			q := make([]byte, out*in)
			for i := range q {
				q[i] = byte(rng.IntN(256))
			}
			scale := randVec(rng, out*in/64)
			l, _ := packLinear(rawTensor{shape: []int{out, in}, q: q, scale: scale, group: 64}, rawTensor{shape: []int{out}, data: randVec(rng, out)}, ks.nr, false)
			x := randVec(rng, rows*in)
			y := make([]float32, rows*out)
			bt := &bert{k: ks, workers: 1}
			b.Run(fmt.Sprintf("kernels=%s/rows=%d/in=%d/out=%d", kn, rows, in, out), func(b *testing.B) {
				for b.Loop() {
					bt.matmul(x, rows, l, y)
				}
				b.ReportMetric(float64(2*rows*in*out)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
			})
		}
	}
}

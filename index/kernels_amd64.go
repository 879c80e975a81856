//go:build amd64 && !purego

package index

import "golang.org/x/sys/cpu"

//go:noescape
func dotAVX2(a, b []float32) float32

//go:noescape
func l2AVX2(a, b []float32) float32

//go:noescape
func dotAVX512(a, b []float32) float32

//go:noescape
func l2AVX512(a, b []float32) float32

//go:noescape
func dotBatchAVX2(q, vecs []float32, dim int, ids []uint32, out []float32)

//go:noescape
func l2BatchAVX2(q, vecs []float32, dim int, ids []uint32, out []float32)

//go:noescape
func dotBatchAVX512(q, vecs []float32, dim int, ids []uint32, out []float32)

//go:noescape
func l2BatchAVX512(q, vecs []float32, dim int, ids []uint32, out []float32)

var (
	avx2Kernel = kernel{name: "avx2", dot: dotAVX2, l2: l2AVX2,
		dotBatch: dotBatchAVX2, l2Batch: l2BatchAVX2}
	avx512Kernel = kernel{name: "avx512", dot: dotAVX512, l2: l2AVX512,
		dotBatch: dotBatchAVX512, l2Batch: l2BatchAVX512}
)

// kernels returns every kernel this CPU can run, best last.
func kernels() []kernel {
	ks := []kernel{genericKernel}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2Kernel)
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx512Kernel)
	}
	return ks
}

func bestKernel() kernel {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return avx512Kernel
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return avx2Kernel
	}
	return genericKernel
}

// prefetch asks for the two cache lines at p (a neighbour list).
//
//go:noescape
func prefetch(p *uint32)

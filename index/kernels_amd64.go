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

var (
	avx2Kernel   = kernel{name: "avx2", dot: dotAVX2, l2: l2AVX2}
	avx512Kernel = kernel{name: "avx512", dot: dotAVX512, l2: l2AVX512}
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

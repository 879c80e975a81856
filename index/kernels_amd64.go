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

// The uint8 kernels have only an AVX2 form: the AVX-512 kernel uses it
// too (an AVX-512 form could not be tested on the machines at hand).
//
//go:noescape
func dotU8AVX2(q []float32, c []byte) float32

//go:noescape
func dotU8BatchAVX2(q []float32, codes []byte, stride, off int, ids []uint32, out []float32)

var (
	avx2Kernel = kernel{name: "avx2", dot: dotAVX2, l2: l2AVX2,
		dotBatch: dotBatchAVX2, l2Batch: l2BatchAVX2, dotU8: dotU8Tail, dotU8Batch: dotU8BatchTail}
	avx512Kernel = kernel{name: "avx512", dot: dotAVX512, l2: l2AVX512,
		dotBatch: dotBatchAVX512, l2Batch: l2BatchAVX512, dotU8: dotU8Tail, dotU8Batch: dotU8BatchTail}
)

// dotU8Tail runs the assembly over the first len(q)&^7 components (its
// only unit) and adds the rest in Go.
func dotU8Tail(q []float32, c []byte) float32 {
	n8 := len(q) &^ 7
	s := dotU8AVX2(q[:n8], c)
	c = c[:len(q)]
	for i := n8; i < len(q); i++ {
		s += q[i] * float32(c[i])
	}
	return s
}

func dotU8BatchTail(q []float32, codes []byte, stride, off int, ids []uint32, out []float32) {
	n8 := len(q) &^ 7
	out = out[:len(ids)]
	dotU8BatchAVX2(q[:n8], codes, stride, off, ids, out)
	if n8 == len(q) {
		return
	}
	for i, id := range ids {
		o := int(id)*stride + off
		c := codes[o : o+len(q) : o+len(q)]
		s := out[i]
		for j := n8; j < len(q); j++ {
			s += q[j] * float32(c[j])
		}
		out[i] = s
	}
}

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

package embed

import (
	"fmt"
	"strings"

	"golang.org/x/sys/cpu"
)

// Kernels names a set of compute kernels. The zero value picks the fastest
// the CPU supports: AVX-512 (F+BW+VL... F suffices), then AVX2+FMA, then pure Go.
type Kernels string

const (
	KernelsAuto   Kernels = ""
	KernelsGo     Kernels = "go"
	KernelsAVX2   Kernels = "avx2"
	KernelsAVX512 Kernels = "avx512"
)

// kernelSet is the inner loops of the encoder.
//
//	gemm:  C[0:mr][0:nr] = bias[0:nr] + A[0:mr][0:k] (row stride lda) x B (a packed panel,
//	       k rows of nr floats), with C's row stride ldc.
//	gelu:  v[i] = v[i]*0.5*(1+erf(v[i]/sqrt2)) with erf32's approximation
//	dot:   sum a[i]*b[i] over len(a)
//	axpy:  y[i] += alpha*x[i] over len(x)
//	dequant: dst[i][j] = float32(int8(q[i][j])) * scale[i/group][j], rows of nr
//	       values, len(dst)/nr rows (a multiple of group): an int8 panel as
//	       float32, bit for bit what dequantizing the weights file gives.
type kernelSet struct {
	name Kernels
	mr   int // rows per gemm call
	nr   int // panel width
	gemm func(a []float32, lda int, b []float32, k int, bias, c []float32, ldc int)
	gelu func(v []float32)
	dot  func(a, b []float32) float32
	axpy func(alpha float32, x, y []float32)

	dequant func(q []byte, scale []float32, group int, dst []float32)
	// expShift: v[i] = exp32(v[i]-m), bit for bit, for v[i]-m <= 0 (a
	// softmax row less its maximum).
	expShift func(v []float32, m float32)
	// gemmI8: the integer kernel of int8 layers (gemmi8.go).
	gemmI8 func(a []byte, lda int, as []float32, asStride int, b []byte, k, group int, ws []float32, c []float32, ldc int, unsigned bool)
	// quantize, quantizeU: an activation row to int8 (quantizeRowGo,
	// quantizeRowUGo).
	quantize, quantizeU func(x []float32, group int, q []byte, s []float32)
}

// AvailableKernels lists the kernel sets this CPU can run, fastest first.
func AvailableKernels() []Kernels {
	var ks []Kernels
	if hasAVX512() {
		ks = append(ks, KernelsAVX512)
	}
	if hasAVX2() {
		ks = append(ks, KernelsAVX2)
	}
	return append(ks, KernelsGo)
}

func hasAVX2() bool   { return asmAvailable && cpu.X86.HasAVX2 && cpu.X86.HasFMA }
func hasAVX512() bool { return asmAvailable && cpu.X86.HasAVX512F && hasAVX2() }

func selectKernels(k Kernels) (*kernelSet, error) {
	switch Kernels(strings.ToLower(string(k))) {
	case KernelsAuto:
		return selectKernels(AvailableKernels()[0])
	case KernelsGo:
		return &kernelSet{name: KernelsGo, mr: 4, nr: 16, gemm: gemm4Go, gelu: gelu, dot: dotGo, axpy: axpyGo, dequant: dequantGo(16), expShift: expShiftGo, gemmI8: gemmI8Go, quantize: quantizeRowGo, quantizeU: quantizeRowUGo}, nil
	case KernelsAVX2:
		if !hasAVX2() {
			return nil, fmt.Errorf("%w: this CPU lacks AVX2+FMA", ErrUnsupported)
		}
		return avx2Kernels(), nil
	case KernelsAVX512:
		if !hasAVX512() {
			return nil, fmt.Errorf("%w: this CPU lacks AVX-512", ErrUnsupported)
		}
		return avx512Kernels(), nil
	}
	return nil, fmt.Errorf("%w: unknown kernels %q", ErrUnsupported, k)
}

func gemm4Go(a []float32, lda int, b []float32, k int, bias, c []float32, ldc int) {
	const nr = 16
	var acc [4][nr]float32
	for r := range acc {
		copy(acc[r][:], bias[:nr])
	}
	a0, a1, a2, a3 := a[:k], a[lda:lda+k], a[2*lda:2*lda+k], a[3*lda:3*lda+k]
	b = b[:k*nr]
	for p := 0; p < k; p++ {
		bp := (*[nr]float32)(b[p*nr : p*nr+nr])
		x0, x1, x2, x3 := a0[p], a1[p], a2[p], a3[p]
		for j := 0; j < nr; j++ {
			bj := bp[j]
			acc[0][j] += x0 * bj
			acc[1][j] += x1 * bj
			acc[2][j] += x2 * bj
			acc[3][j] += x3 * bj
		}
	}
	for r := 0; r < 4; r++ {
		copy(c[r*ldc:r*ldc+nr], acc[r][:])
	}
}

func expShiftGo(v []float32, m float32) {
	for i, x := range v {
		v[i] = exp32(x - m)
	}
}

// dequantGo is the portable dequant kernel for panels nr values wide.
func dequantGo(nr int) func(q []byte, scale []float32, group int, dst []float32) {
	return func(q []byte, scale []float32, group int, dst []float32) {
		k := len(dst) / nr
		q = q[:k*nr]
		for i := 0; i < k; i++ {
			sc := scale[(i/group)*nr : (i/group+1)*nr]
			qr, dr := q[i*nr:(i+1)*nr], dst[i*nr:(i+1)*nr]
			for j, v := range qr {
				dr[j] = float32(int8(v)) * sc[j]
			}
		}
	}
}

func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func axpyGo(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

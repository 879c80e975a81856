//go:build amd64 && !purego

package embed

import "math"

const asmAvailable = true

//go:noescape
func gemm4AVX2asm(a *float32, lda int, b *float32, k int, bias, c *float32, ldc int)

//go:noescape
func geluAVX2asm(v *float32, n int)

//go:noescape
func geluAVX512asm(v *float32, n int)

//go:noescape
func gemm8AVX512asm(a *float32, lda int, b *float32, k int, bias, c *float32, ldc int)

//go:noescape
func dequantAVX2asm(q *byte, scale *float32, dst *float32, k, group, nr int)

//go:noescape
func gemmI8AVX2asm(a *byte, lda int, as *float32, asStride int, b *byte, quads, groups int, ws *float32, c *float32, ldc int)

//go:noescape
func gemmU8AVX2asm(a *byte, lda int, as *float32, asStride int, b *byte, quads, groups int, ws *float32, c *float32, ldc int)

// gemmI8AVX2 is the integer kernel of both assembly sets; see gemmI8Go.
func gemmI8AVX2(a []byte, lda int, as []float32, asStride int, b []byte, k, group int, ws []float32, c []float32, ldc int, unsigned bool) {
	if k == 0 || group <= 0 || group%4 != 0 || k%group != 0 {
		gemmI8Go(a, lda, as, asStride, b, k, group, ws, c, ldc, unsigned)
		return
	}
	groups := k / group
	per, wstride := 1, i8nr
	if unsigned {
		per, wstride = 2, 2*i8nr
	}
	_ = a[(i8mr-1)*lda+k-1]
	_ = as[(i8mr-1)*asStride+per*groups-1]
	_ = b[k*i8nr-1]
	_ = ws[groups*wstride-1]
	_ = c[(i8mr-1)*ldc+i8nr-1]
	if unsigned {
		gemmU8AVX2asm(&a[0], lda, &as[0], asStride, &b[0], group/4, groups, &ws[0], &c[0], ldc)
	} else {
		gemmI8AVX2asm(&a[0], lda, &as[0], asStride, &b[0], group/4, groups, &ws[0], &c[0], ldc)
	}
}

//go:noescape
func absMaxAVX2asm(x *float32, n int) float32

//go:noescape
func quantizeAVX2asm(x *float32, n int, inv float32, q *byte)

// quantizeRowAVX2 is quantizeRow's kernel in both assembly sets.
func quantizeRowAVX2(x []float32, group int, q []byte, s []float32) {
	if group%8 != 0 || len(s) == 0 {
		quantizeRowGo(x, group, q, s)
		return
	}
	_ = x[len(s)*group-1]
	_ = q[len(s)*group-1]
	for g := range s {
		m := absMaxAVX2asm(&x[g*group], group)
		if m == 0 || m > math.MaxFloat32 {
			s[g] = 0
			clear(q[g*group : (g+1)*group])
			continue
		}
		s[g] = m / 127
		quantizeAVX2asm(&x[g*group], group, 127/m, &q[g*group])
	}
}

//go:noescape
func minMaxAVX2asm(x *float32, n int) (lo, hi float32)

//go:noescape
func quantizeUAVX2asm(x *float32, n int, inv float32, z int32, q *byte)

// quantizeRowUAVX2 is quantizeRowUGo's kernel in both assembly sets.
func quantizeRowUAVX2(x []float32, group int, q []byte, sz []float32) {
	groups := len(sz) / 2
	if group%8 != 0 || groups == 0 {
		quantizeRowUGo(x, group, q, sz)
		return
	}
	_ = x[groups*group-1]
	_ = q[groups*group-1]
	for g := 0; g < groups; g++ {
		lo, hi := minMaxAVX2asm(&x[g*group], group)
		span := hi - lo
		if span == 0 || span > math.MaxFloat32 {
			sz[2*g], sz[2*g+1] = 0, 0
			clear(q[g*group : (g+1)*group])
			continue
		}
		inv := 127 / span
		z := roundEven32(-lo * inv)
		sz[2*g], sz[2*g+1] = span/127, z
		quantizeUAVX2asm(&x[g*group], group, inv, int32(z), &q[g*group])
	}
}

//go:noescape
func expShiftAVX2asm(v *float32, n int, m float32)

// expShiftAVX2 is the expShift kernel of both assembly sets.
func expShiftAVX2(v []float32, m float32) {
	n := len(v) &^ 7
	if n > 0 {
		expShiftAVX2asm(&v[0], n, m)
	}
	expShiftGo(v[n:], m)
}

//go:noescape
func dotAVX2asm(a, b *float32, n int) float32

//go:noescape
func dotAVX512asm(a, b *float32, n int) float32

//go:noescape
func axpyAVX2asm(alpha float32, x, y *float32, n int)

//go:noescape
func axpyAVX512asm(alpha float32, x, y *float32, n int)

// checkGemm4 keeps the assembly memory-safe: it panics (like an index
// expression would) when the slices are too short.
func checkGemm(mr int, a []float32, lda int, b []float32, k int, bias, c []float32, ldc, nr int) {
	_ = bias[nr-1]
	_ = a[(mr-1)*lda+k-1]
	_ = b[k*nr-1]
	_ = c[(mr-1)*ldc+nr-1]
}

// dequantAVX2 is the dequant kernel of both assembly sets (nr a multiple
// of 16); see kernelSet.
func dequantAVX2(nr int) func(q []byte, scale []float32, group int, dst []float32) {
	return func(q []byte, scale []float32, group int, dst []float32) {
		k := len(dst) / nr
		if k == 0 {
			return
		}
		if group <= 0 || k%group != 0 || nr%16 != 0 {
			dequantGo(nr)(q, scale, group, dst)
			return
		}
		_ = q[k*nr-1]
		_ = scale[(k/group)*nr-1]
		dequantAVX2asm(&q[0], &scale[0], &dst[0], k, group, nr)
	}
}

func avx2Kernels() *kernelSet {
	const nr = 16
	return &kernelSet{
		name:      KernelsAVX2,
		mr:        4,
		nr:        nr,
		dequant:   dequantAVX2(nr),
		expShift:  expShiftAVX2,
		gemmI8:    gemmI8AVX2,
		quantize:  quantizeRowAVX2,
		quantizeU: quantizeRowUAVX2,
		gemm: func(a []float32, lda int, b []float32, k int, bias, c []float32, ldc int) {
			if k == 0 {
				gemm4Go(a, lda, b, k, bias, c, ldc)
				return
			}
			checkGemm(4, a, lda, b, k, bias, c, ldc, nr)
			gemm4AVX2asm(&a[0], lda, &b[0], k, &bias[0], &c[0], ldc)
		},
		gelu: func(v []float32) {
			n := len(v) &^ 7
			if n > 0 {
				geluAVX2asm(&v[0], n)
			}
			gelu(v[n:])
		},
		dot: func(a, b []float32) float32 {
			if len(a) == 0 {
				return 0
			}
			_ = b[len(a)-1]
			return dotAVX2asm(&a[0], &b[0], len(a))
		},
		axpy: func(alpha float32, x, y []float32) {
			if len(x) == 0 {
				return
			}
			_ = y[len(x)-1]
			axpyAVX2asm(alpha, &x[0], &y[0], len(x))
		},
	}
}

func avx512Kernels() *kernelSet {
	const nr = 32
	return &kernelSet{
		name:      KernelsAVX512,
		mr:        8,
		nr:        nr,
		dequant:   dequantAVX2(nr),
		expShift:  expShiftAVX2,
		gemmI8:    gemmI8AVX2,
		quantize:  quantizeRowAVX2,
		quantizeU: quantizeRowUAVX2,
		gemm: func(a []float32, lda int, b []float32, k int, bias, c []float32, ldc int) {
			if k == 0 {
				for r := 0; r < 8; r++ {
					copy(c[r*ldc:r*ldc+nr], bias[:nr])
				}
				return
			}
			checkGemm(8, a, lda, b, k, bias, c, ldc, nr)
			gemm8AVX512asm(&a[0], lda, &b[0], k, &bias[0], &c[0], ldc)
		},
		gelu: func(v []float32) {
			n := len(v) &^ 15
			if n > 0 {
				geluAVX512asm(&v[0], n)
			}
			gelu(v[n:])
		},
		dot: func(a, b []float32) float32 {
			if len(a) == 0 {
				return 0
			}
			_ = b[len(a)-1]
			return dotAVX512asm(&a[0], &b[0], len(a))
		},
		axpy: func(alpha float32, x, y []float32) {
			if len(x) == 0 {
				return
			}
			_ = y[len(x)-1]
			axpyAVX512asm(alpha, &x[0], &y[0], len(x))
		},
	}
}

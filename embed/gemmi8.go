package embed

import (
	"math"

	"github.com/cairn-dev/cairn/embed/internal/quant"
)

// The integer path of an int8 Linear layer. Its weights stay int8 and the
// activations are quantized to int8 too, per row (token) and per group of
// 32 values within the weights' groups (actGroup), so a text's vector does
// not depend on the other
// texts of its batch. Within a group the products are summed exactly in
// int32; each group's sum is then scaled by its weight scale (per output
// column; the scale of the weight group holding it) times its activation
// scale and added in float32:
//
//	y[r][o] = bias[o] + sum over groups g of float32(isum[r][o][g]) * (ws[o][g] * as[r][g])
//
// with the float32 operations in that order and rounded one by one (no
// fused multiply-add), so the assembly and the pure-Go kernels agree bit
// for bit.
//
// A layer fed by GELU (whose outputs are mostly positive, down to -0.17)
// quantizes its activations asymmetrically instead: u in [0, 127] with a
// zero point z per row and group, the value being as*(u - z). Unsigned
// activations below 128 let VPMADDUBSW multiply them by the signed weights
// directly, without the sign transfer the symmetric form needs, which is
// about a third of the kernel's work; the range [min, max] of a GELU output
// costs about the same precision in 7 bits as [-max, max] does in 8. The
// zero point's share z * sum(w over the group) is exact in float32 (it is
// below 2^24), so
//
//	y[r][o] = bias[o] + sum over g of float32(float32(isum) - z*wsum[o][g]) * (ws[o][g] * as[r][g])

// i8nr is the width of an int8 panel and i8mr the rows per kernel call,
// whatever the float kernels' panel width is.
const (
	i8nr = quant.PanelCols
	i8mr = 4
)

// i8Panels is an int8 Linear layer laid out for the integer kernel: panel
// p holds, for each quad of input rows k..k+3 and each of its i8nr output
// columns o, the four bytes W[o][k..k+3]; scales holds, for each panel and
// group, the i8nr column scales, followed when unsigned by the i8nr
// column sums of the group's weights (as float32).
type i8Panels struct {
	q        []byte
	scales   []float32
	unsigned bool // activations quantized asymmetrically (a GELU output)
}

// scaleStride is the number of float32 per panel and group in scales.
func (p *i8Panels) scaleStride() int {
	if p.unsigned {
		return 2 * i8nr
	}
	return i8nr
}

// packI8Panels lays out int8 tensor w (groups along each row, a group a
// multiple of 4) as l's integer panels (quant.Panels: the layout a packed
// weights file stores, activation groups of quant.ActGroup, whose groups
// of 32 rather than 64 keep the shortest texts, whose few tokens average
// out little error, above cosine 0.995 to the reference: "Thank you!" fell
// to 0.9946 with 64, for about 5 % more time).
func packI8Panels(l *linear, w rawTensor, unsigned bool) {
	q, scales := quant.Panels(w.q, w.scale, l.out, l.in, w.group, unsigned)
	l.group = quant.ActGroup(w.group)
	l.i8 = &i8Panels{q: q, scales: scales, unsigned: unsigned}
}

// quantizeRowGo quantizes x (one row of activations) to int8 in groups of
// group values: s[g] = max|x| / 127 over the group and q = x * (127 / max|x|)
// rounded to nearest, ties to even (a group of zeros, or one that is not
// finite, gets scale 0 and zeros).
func quantizeRowGo(x []float32, group int, q []byte, s []float32) {
	for g := range s {
		xs := x[g*group : (g+1)*group]
		var m float32
		for _, v := range xs {
			if a := math.Float32frombits(math.Float32bits(v) &^ (1 << 31)); a > m {
				m = a
			}
		}
		qs := q[g*group : (g+1)*group]
		if m == 0 || m > math.MaxFloat32 {
			s[g] = 0
			clear(qs)
			continue
		}
		s[g] = m / 127
		inv := 127 / m
		for i, v := range xs {
			qs[i] = byte(int8(max(-127, min(127, int32(roundEven32(v*inv))))))
		}
	}
}

// quantizeRowUGo quantizes x (one row of GELU outputs) to [0, 127] in
// groups of group values with a zero point: with lo and hi the group's
// minimum and maximum (0 included), sz[2g] = (hi-lo)/127, sz[2g+1] = z =
// round(-lo*inv) with inv = 127/(hi-lo), and q = round(x*inv) + z within
// [0, 127] (a zero or non-finite range gets scale 0, z 0 and zeros).
func quantizeRowUGo(x []float32, group int, q []byte, sz []float32) {
	for g := 0; g < len(sz)/2; g++ {
		xs := x[g*group : (g+1)*group]
		var lo, hi float32
		for _, v := range xs {
			if v < lo {
				lo = v
			}
			if v > hi {
				hi = v
			}
		}
		qs := q[g*group : (g+1)*group]
		span := hi - lo
		if span == 0 || span > math.MaxFloat32 {
			sz[2*g], sz[2*g+1] = 0, 0
			clear(qs)
			continue
		}
		inv := 127 / span
		z := roundEven32(-lo * inv)
		sz[2*g], sz[2*g+1] = span/127, z
		zi := int32(z)
		for i, v := range xs {
			qs[i] = byte(max(0, min(127, int32(roundEven32(v*inv))+zi)))
		}
	}
}

// roundEven32 rounds v (of magnitude below 2^22) to an integer, ties to
// even, as the assembly's conversion does: adding and subtracting 1.5*2^23
// leaves no fraction bits.
func roundEven32(v float32) float32 {
	const round = 12582912
	return float32(v+round) - round
}

// gemmI8Go is the pure-Go integer kernel: for the i8mr rows of a (int8,
// or unsigned, row stride lda) with their activation scales as (row stride
// asStride: per group its scale, or when unsigned its scale and zero
// point) and the integer panel b with its scales ws (k/group rows of
// scaleStride), it adds to C[0:i8mr][0:i8nr] (row stride ldc) the
// products, group by group, as the file comment says.
func gemmI8Go(a []byte, lda int, as []float32, asStride int, b []byte, k, group int, ws []float32, c []float32, ldc int, unsigned bool) {
	per, wstride := 1, i8nr
	if unsigned {
		per, wstride = 2, 2*i8nr
	}
	for g := 0; g < k/group; g++ {
		var acc [i8mr][i8nr]int32
		for kk := g * group; kk < (g+1)*group; kk += 4 {
			quad := b[kk*i8nr : kk*i8nr+4*i8nr]
			for r := 0; r < i8mr; r++ {
				x := a[r*lda+kk : r*lda+kk+4]
				x0, x1, x2, x3 := int32(int8(x[0])), int32(int8(x[1])), int32(int8(x[2])), int32(int8(x[3]))
				for j := 0; j < i8nr; j++ {
					w := quad[4*j : 4*j+4]
					acc[r][j] += x0*int32(int8(w[0])) + x1*int32(int8(w[1])) + x2*int32(int8(w[2])) + x3*int32(int8(w[3]))
				}
			}
		}
		wsg := ws[g*wstride : (g+1)*wstride]
		for r := 0; r < i8mr; r++ {
			sa := as[r*asStride+per*g]
			cr := c[r*ldc : r*ldc+i8nr]
			for j := range cr {
				d := float32(acc[r][j])
				if unsigned {
					z := as[r*asStride+2*g+1]
					d = float32(d - float32(z*wsg[i8nr+j]))
				}
				p := wsg[j] * sa
				cr[j] += float32(d * p)
			}
		}
	}
}

// actBuf is the quantized activations of one matmul.
type actBuf struct {
	q []byte
	s []float32
}

// matmulI8 is matmulAfter for a layer with integer panels.
func (b *bert) matmulI8(x []float32, rows int, l *linear, y []float32, n int, before func(r int)) {
	in, g := l.in, l.group
	groups := in / g
	per, ss := 1, l.i8.scaleStride()
	if l.i8.unsigned {
		per = 2
	}
	ab, _ := b.actPool.Get().(*actBuf)
	if ab == nil {
		ab = &actBuf{}
	}
	defer b.actPool.Put(ab)
	if cap(ab.q) < rows*in {
		ab.q = make([]byte, rows*in)
	}
	if cap(ab.s) < rows*groups*per {
		ab.s = make([]float32, rows*groups*per)
	}
	qa, sa := ab.q[:rows*in], ab.s[:rows*groups*per]
	quantize := b.k.quantize
	if l.i8.unsigned {
		quantize = b.k.quantizeU
	}
	b.rowwise(rows, func(r int) {
		if before != nil && r < n {
			before(r)
		}
		quantize(x[r*in:(r+1)*in], g, qa[r*in:(r+1)*in], sa[r*groups*per:(r+1)*groups*per])
	})
	panels := (l.out + i8nr - 1) / i8nr
	const rowBlock = 64
	rowBlocks := (rows + rowBlock - 1) / rowBlock
	parallelFor(b.workers, panels*rowBlocks, func(t int) {
		p, rb := t%panels, t/panels
		panel := l.i8.q[p*in*i8nr : (p+1)*in*i8nr]
		ws := l.i8.scales[p*groups*ss : (p+1)*groups*ss]
		col := p * i8nr
		width := min(i8nr, l.out-col)
		bias := l.bias[col : col+i8nr]
		var scratch []float32 // a partial panel's outputs
		if width < i8nr {
			scratch = make([]float32, i8mr*i8nr)
		}
		for r := rb * rowBlock; r < min(rows, (rb+1)*rowBlock); r += i8mr {
			c, ldc := y[r*l.out+col:], l.out
			if width < i8nr {
				c, ldc = scratch, i8nr
			}
			for i := 0; i < i8mr; i++ {
				copy(c[i*ldc:i*ldc+i8nr], bias)
			}
			b.k.gemmI8(qa[r*in:], in, sa[r*groups*per:], groups*per, panel, in, g, ws, c, ldc, l.i8.unsigned)
			if width < i8nr {
				for i := 0; i < i8mr; i++ {
					copy(y[(r+i)*l.out+col:(r+i)*l.out+col+width], scratch[i*i8nr:i*i8nr+width])
				}
			}
		}
	})
}

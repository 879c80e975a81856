package index

// kernel is one implementation of the distance primitives. Every kernel
// returns the same values up to float32 rounding; tests compare them.
type kernel struct {
	name string
	dot  func(a, b []float32) float32 // sum a[i]*b[i] over len(a); len(b) >= len(a)
	l2   func(a, b []float32) float32 // sum (a[i]-b[i])^2 over len(a); len(b) >= len(a)
	// dotBatch and l2Batch set out[i] to dot or l2 of q and row ids[i] of
	// vecs (rows of dim floats). The assembly versions prefetch the next
	// row and trust every id to be in range; len(out) >= len(ids).
	dotBatch func(q, vecs []float32, dim int, ids []uint32, out []float32)
	l2Batch  func(q, vecs []float32, dim int, ids []uint32, out []float32)
	// dotU8 is sum q[i]*float32(c[i]) over len(q) (len(c) >= len(q)): the
	// SQ8 code's distances are affine in it. dotU8Batch sets out[i] to
	// dotU8 of q and the codes at byte ids[i]*stride+off of codes; like the
	// float batches, the assembly version prefetches and trusts the ids.
	dotU8      func(q []float32, c []byte) float32
	dotU8Batch func(q []float32, codes []byte, stride, off int, ids []uint32, out []float32)
}

var genericKernel = kernel{name: "go", dot: dotGo, l2: l2Go, dotBatch: dotBatchGo, l2Batch: l2BatchGo,
	dotU8: dotU8Go, dotU8Batch: dotU8BatchGo}

func dotU8BatchGo(q []float32, codes []byte, stride, off int, ids []uint32, out []float32) {
	out = out[:len(ids)]
	for i, id := range ids {
		o := int(id)*stride + off
		out[i] = dotU8Go(q, codes[o:o+len(q):o+len(q)])
	}
}

// dotU8Go is the portable float32 x uint8 dot product, with eight
// accumulators like dotGo.
func dotU8Go(q []float32, c []byte) float32 {
	n := len(q)
	c = c[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		qq := q[i : i+8 : i+8]
		cc := c[i : i+8 : i+8]
		s0 += qq[0] * float32(cc[0])
		s1 += qq[1] * float32(cc[1])
		s2 += qq[2] * float32(cc[2])
		s3 += qq[3] * float32(cc[3])
		s4 += qq[4] * float32(cc[4])
		s5 += qq[5] * float32(cc[5])
		s6 += qq[6] * float32(cc[6])
		s7 += qq[7] * float32(cc[7])
	}
	for ; i < n; i++ {
		s0 += q[i] * float32(c[i])
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

func dotBatchGo(q, vecs []float32, dim int, ids []uint32, out []float32) {
	out = out[:len(ids)]
	for i, id := range ids {
		o := int(id) * dim
		out[i] = dotGo(q, vecs[o:o+dim:o+dim])
	}
}

func l2BatchGo(q, vecs []float32, dim int, ids []uint32, out []float32) {
	out = out[:len(ids)]
	for i, id := range ids {
		o := int(id) * dim
		out[i] = l2Go(q, vecs[o:o+dim:o+dim])
	}
}

// dotGo is the portable dot product: eight independent accumulators so the
// adds pipeline, and re-sliced operands so the compiler drops bounds checks.
func dotGo(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
		s4 += aa[4] * bb[4]
		s5 += aa[5] * bb[5]
		s6 += aa[6] * bb[6]
		s7 += aa[7] * bb[7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// l2Go is the portable squared Euclidean distance.
func l2Go(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		d0 := aa[0] - bb[0]
		d1 := aa[1] - bb[1]
		d2 := aa[2] - bb[2]
		d3 := aa[3] - bb[3]
		d4 := aa[4] - bb[4]
		d5 := aa[5] - bb[5]
		d6 := aa[6] - bb[6]
		d7 := aa[7] - bb[7]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		s4 += d4 * d4
		s5 += d5 * d5
		s6 += d6 * d6
		s7 += d7 * d7
	}
	for ; i < n; i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

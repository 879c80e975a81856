//go:build amd64 && !purego

#include "textflag.h"

// Horizontal sum of Y0 into X0's low lane. Clobbers X1.
#define HSUM_Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVHLPS     X0, X0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVSHDUP    X0, X1     \
	VADDSS       X1, X0, X0

// func dotAVX2(a, b []float32) float32
TEXT ·dotAVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

dot2_loop32:
	CMPQ        CX, $32
	JL          dot2_loop8
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	JMP         dot2_loop32

dot2_loop8:
	CMPQ        CX, $8
	JL          dot2_reduce
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         dot2_loop8

dot2_reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM_Y0

dot2_tail:
	TESTQ       CX, CX
	JE          dot2_done
	VMOVSS      (SI), X1
	VFMADD231SS (DI), X1, X0
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JMP         dot2_tail

dot2_done:
	VZEROUPPER
	MOVSS X0, ret+48(FP)
	RET

// func l2AVX2(a, b []float32) float32
TEXT ·l2AVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

l22_loop32:
	CMPQ        CX, $32
	JL          l22_loop8
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VSUBPS      (DI), Y4, Y4
	VSUBPS      32(DI), Y5, Y5
	VSUBPS      64(DI), Y6, Y6
	VSUBPS      96(DI), Y7, Y7
	VFMADD231PS Y4, Y4, Y0
	VFMADD231PS Y5, Y5, Y1
	VFMADD231PS Y6, Y6, Y2
	VFMADD231PS Y7, Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	JMP         l22_loop32

l22_loop8:
	CMPQ        CX, $8
	JL          l22_reduce
	VMOVUPS     (SI), Y4
	VSUBPS      (DI), Y4, Y4
	VFMADD231PS Y4, Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         l22_loop8

l22_reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM_Y0

l22_tail:
	TESTQ       CX, CX
	JE          l22_done
	VMOVSS      (SI), X1
	VSUBSS      (DI), X1, X1
	VFMADD231SS X1, X1, X0
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JMP         l22_tail

l22_done:
	VZEROUPPER
	MOVSS X0, ret+48(FP)
	RET

// Reduce Z0..Z3 into Z0, then Z0 into Y0.
#define REDUCE_Z \
	VADDPS         Z1, Z0, Z0 \
	VADDPS         Z3, Z2, Z2 \
	VADDPS         Z2, Z0, Z0 \
	VEXTRACTF64X4  $1, Z0, Y1 \
	VADDPS         Y1, Y0, Y0

// func dotAVX512(a, b []float32) float32
TEXT ·dotAVX512(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

dot5_loop64:
	CMPQ        CX, $64
	JL          dot5_loop16
	VMOVUPS     (SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VFMADD231PS (DI), Z4, Z0
	VFMADD231PS 64(DI), Z5, Z1
	VFMADD231PS 128(DI), Z6, Z2
	VFMADD231PS 192(DI), Z7, Z3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	JMP         dot5_loop64

dot5_loop16:
	CMPQ        CX, $16
	JL          dot5_reduce
	VMOVUPS     (SI), Z4
	VFMADD231PS (DI), Z4, Z0
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         dot5_loop16

dot5_reduce:
	REDUCE_Z

dot5_loop8:
	CMPQ        CX, $8
	JL          dot5_hsum
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         dot5_loop8

dot5_hsum:
	HSUM_Y0

dot5_tail:
	TESTQ       CX, CX
	JE          dot5_done
	VMOVSS      (SI), X1
	VFMADD231SS (DI), X1, X0
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JMP         dot5_tail

dot5_done:
	VZEROUPPER
	MOVSS X0, ret+48(FP)
	RET

// func l2AVX512(a, b []float32) float32
TEXT ·l2AVX512(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

l25_loop64:
	CMPQ        CX, $64
	JL          l25_loop16
	VMOVUPS     (SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VSUBPS      (DI), Z4, Z4
	VSUBPS      64(DI), Z5, Z5
	VSUBPS      128(DI), Z6, Z6
	VSUBPS      192(DI), Z7, Z7
	VFMADD231PS Z4, Z4, Z0
	VFMADD231PS Z5, Z5, Z1
	VFMADD231PS Z6, Z6, Z2
	VFMADD231PS Z7, Z7, Z3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX
	JMP         l25_loop64

l25_loop16:
	CMPQ        CX, $16
	JL          l25_reduce
	VMOVUPS     (SI), Z4
	VSUBPS      (DI), Z4, Z4
	VFMADD231PS Z4, Z4, Z0
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         l25_loop16

l25_reduce:
	REDUCE_Z

l25_loop8:
	CMPQ        CX, $8
	JL          l25_hsum
	VMOVUPS     (SI), Y4
	VSUBPS      (DI), Y4, Y4
	VFMADD231PS Y4, Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         l25_loop8

l25_hsum:
	HSUM_Y0

l25_tail:
	TESTQ       CX, CX
	JE          l25_done
	VMOVSS      (SI), X1
	VSUBSS      (DI), X1, X1
	VFMADD231SS X1, X1, X0
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JMP         l25_tail

l25_done:
	VZEROUPPER
	MOVSS X0, ret+48(FP)
	RET

// Batch kernels: out[i] = dot or l2 of q and row ids[i] of vecs (rows of
// dim floats), prefetching every cache line of row ids[i+3] while computing
// row ids[i]. Row ids are trusted to be in range (the index's invariant).
// The four variants share one template; each is tested bit-for-bit against
// its single-pair kernel (TestBatchKernelsAgree).

// func dotBatchAVX512(q, vecs []float32, dim int, ids []uint32, out []float32)
TEXT ·dotBatchAVX512(SB), NOSPLIT, $0-104
	MOVQ  q_base+0(FP), SI
	MOVQ  vecs_base+24(FP), R8
	MOVQ  dim+48(FP), R9
	MOVQ  ids_base+56(FP), R10
	MOVQ  ids_len+64(FP), R11
	MOVQ  out_base+80(FP), R12
	MOVQ  R9, R13
	SHLQ  $2, R13
	MOVQ  $0, R14
	CMPQ       R14, R11
	JGE        db5_first0
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

db5_first0_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         db5_first0_pf

db5_first0:
	MOVQ  $1, R14
	CMPQ       R14, R11
	JGE        db5_first1
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

db5_first1_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         db5_first1_pf

db5_first1:
	MOVQ  $2, R14
	CMPQ       R14, R11
	JGE        db5_first2
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

db5_first2_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         db5_first2_pf

db5_first2:
	XORQ  BX, BX

db5_outer:
	CMPQ  BX, R11
	JGE   db5_done
	MOVL  (R10)(BX*4), AX
	IMULQ R13, AX
	LEAQ  (R8)(AX*1), DI
	LEAQ  3(BX), R14
	CMPQ       R14, R11
	JGE        db5_next
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

db5_next_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         db5_next_pf

db5_next:
	MOVQ  SI, R15
	MOVQ  R9, CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

db5_loopbig:
	CMPQ        CX, $64
	JL          db5_loopw
	VMOVUPS     0(R15), Z4
	VMOVUPS     64(R15), Z5
	VMOVUPS     128(R15), Z6
	VMOVUPS     192(R15), Z7
	VFMADD231PS 0(DI), Z4, Z0
	VFMADD231PS 64(DI), Z5, Z1
	VFMADD231PS 128(DI), Z6, Z2
	VFMADD231PS 192(DI), Z7, Z3
	ADDQ        $256, R15
	ADDQ        $256, DI
	SUBQ        $64, CX
	JMP         db5_loopbig

db5_loopw:
	CMPQ        CX, $16
	JL          db5_reduce
	VMOVUPS     (R15), Z4
	VFMADD231PS (DI), Z4, Z0
	ADDQ        $64, R15
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         db5_loopw

db5_reduce:
	REDUCE_Z

db5_loop8:
	CMPQ        CX, $8
	JL          db5_hsum
	VMOVUPS     (R15), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, R15
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         db5_loop8

db5_hsum:
	HSUM_Y0

db5_tail:
	TESTQ       CX, CX
	JE          db5_store
	VMOVSS      (R15), X1
	VFMADD231SS (DI), X1, X0
	ADDQ        $4, R15
	ADDQ        $4, DI
	DECQ        CX
	JMP         db5_tail

db5_store:
	MOVSS X0, (R12)(BX*4)
	INCQ  BX
	JMP   db5_outer

db5_done:
	VZEROUPPER
	RET

// func l2BatchAVX512(q, vecs []float32, dim int, ids []uint32, out []float32)
TEXT ·l2BatchAVX512(SB), NOSPLIT, $0-104
	MOVQ  q_base+0(FP), SI
	MOVQ  vecs_base+24(FP), R8
	MOVQ  dim+48(FP), R9
	MOVQ  ids_base+56(FP), R10
	MOVQ  ids_len+64(FP), R11
	MOVQ  out_base+80(FP), R12
	MOVQ  R9, R13
	SHLQ  $2, R13
	MOVQ  $0, R14
	CMPQ       R14, R11
	JGE        lb5_first0
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

lb5_first0_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         lb5_first0_pf

lb5_first0:
	MOVQ  $1, R14
	CMPQ       R14, R11
	JGE        lb5_first1
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

lb5_first1_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         lb5_first1_pf

lb5_first1:
	MOVQ  $2, R14
	CMPQ       R14, R11
	JGE        lb5_first2
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

lb5_first2_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         lb5_first2_pf

lb5_first2:
	XORQ  BX, BX

lb5_outer:
	CMPQ  BX, R11
	JGE   lb5_done
	MOVL  (R10)(BX*4), AX
	IMULQ R13, AX
	LEAQ  (R8)(AX*1), DI
	LEAQ  3(BX), R14
	CMPQ       R14, R11
	JGE        lb5_next
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

lb5_next_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         lb5_next_pf

lb5_next:
	MOVQ  SI, R15
	MOVQ  R9, CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

lb5_loopbig:
	CMPQ        CX, $64
	JL          lb5_loopw
	VMOVUPS     0(R15), Z4
	VMOVUPS     64(R15), Z5
	VMOVUPS     128(R15), Z6
	VMOVUPS     192(R15), Z7
	VSUBPS      0(DI), Z4, Z4
	VSUBPS      64(DI), Z5, Z5
	VSUBPS      128(DI), Z6, Z6
	VSUBPS      192(DI), Z7, Z7
	VFMADD231PS Z4, Z4, Z0
	VFMADD231PS Z5, Z5, Z1
	VFMADD231PS Z6, Z6, Z2
	VFMADD231PS Z7, Z7, Z3
	ADDQ        $256, R15
	ADDQ        $256, DI
	SUBQ        $64, CX
	JMP         lb5_loopbig

lb5_loopw:
	CMPQ        CX, $16
	JL          lb5_reduce
	VMOVUPS     (R15), Z4
	VSUBPS      (DI), Z4, Z4
	VFMADD231PS Z4, Z4, Z0
	ADDQ        $64, R15
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         lb5_loopw

lb5_reduce:
	REDUCE_Z

lb5_loop8:
	CMPQ        CX, $8
	JL          lb5_hsum
	VMOVUPS     (R15), Y4
	VSUBPS      (DI), Y4, Y4
	VFMADD231PS Y4, Y4, Y0
	ADDQ        $32, R15
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         lb5_loop8

lb5_hsum:
	HSUM_Y0

lb5_tail:
	TESTQ       CX, CX
	JE          lb5_store
	VMOVSS      (R15), X1
	VSUBSS      (DI), X1, X1
	VFMADD231SS X1, X1, X0
	ADDQ        $4, R15
	ADDQ        $4, DI
	DECQ        CX
	JMP         lb5_tail

lb5_store:
	MOVSS X0, (R12)(BX*4)
	INCQ  BX
	JMP   lb5_outer

lb5_done:
	VZEROUPPER
	RET

// func dotBatchAVX2(q, vecs []float32, dim int, ids []uint32, out []float32)
TEXT ·dotBatchAVX2(SB), NOSPLIT, $0-104
	MOVQ  q_base+0(FP), SI
	MOVQ  vecs_base+24(FP), R8
	MOVQ  dim+48(FP), R9
	MOVQ  ids_base+56(FP), R10
	MOVQ  ids_len+64(FP), R11
	MOVQ  out_base+80(FP), R12
	MOVQ  R9, R13
	SHLQ  $2, R13
	MOVQ  $0, R14
	CMPQ       R14, R11
	JGE        db2_first0
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

db2_first0_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         db2_first0_pf

db2_first0:
	MOVQ  $1, R14
	CMPQ       R14, R11
	JGE        db2_first1
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

db2_first1_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         db2_first1_pf

db2_first1:
	MOVQ  $2, R14
	CMPQ       R14, R11
	JGE        db2_first2
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

db2_first2_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         db2_first2_pf

db2_first2:
	XORQ  BX, BX

db2_outer:
	CMPQ  BX, R11
	JGE   db2_done
	MOVL  (R10)(BX*4), AX
	IMULQ R13, AX
	LEAQ  (R8)(AX*1), DI
	LEAQ  3(BX), R14
	CMPQ       R14, R11
	JGE        db2_next
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

db2_next_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         db2_next_pf

db2_next:
	MOVQ  SI, R15
	MOVQ  R9, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

db2_loopbig:
	CMPQ        CX, $32
	JL          db2_loopw
	VMOVUPS     0(R15), Y4
	VMOVUPS     32(R15), Y5
	VMOVUPS     64(R15), Y6
	VMOVUPS     96(R15), Y7
	VFMADD231PS 0(DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, R15
	ADDQ        $128, DI
	SUBQ        $32, CX
	JMP         db2_loopbig

db2_loopw:
	CMPQ        CX, $8
	JL          db2_reduce
	VMOVUPS     (R15), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, R15
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         db2_loopw

db2_reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM_Y0

db2_tail:
	TESTQ       CX, CX
	JE          db2_store
	VMOVSS      (R15), X1
	VFMADD231SS (DI), X1, X0
	ADDQ        $4, R15
	ADDQ        $4, DI
	DECQ        CX
	JMP         db2_tail

db2_store:
	MOVSS X0, (R12)(BX*4)
	INCQ  BX
	JMP   db2_outer

db2_done:
	VZEROUPPER
	RET

// func l2BatchAVX2(q, vecs []float32, dim int, ids []uint32, out []float32)
TEXT ·l2BatchAVX2(SB), NOSPLIT, $0-104
	MOVQ  q_base+0(FP), SI
	MOVQ  vecs_base+24(FP), R8
	MOVQ  dim+48(FP), R9
	MOVQ  ids_base+56(FP), R10
	MOVQ  ids_len+64(FP), R11
	MOVQ  out_base+80(FP), R12
	MOVQ  R9, R13
	SHLQ  $2, R13
	MOVQ  $0, R14
	CMPQ       R14, R11
	JGE        lb2_first0
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

lb2_first0_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         lb2_first0_pf

lb2_first0:
	MOVQ  $1, R14
	CMPQ       R14, R11
	JGE        lb2_first1
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

lb2_first1_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         lb2_first1_pf

lb2_first1:
	MOVQ  $2, R14
	CMPQ       R14, R11
	JGE        lb2_first2
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

lb2_first2_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         lb2_first2_pf

lb2_first2:
	XORQ  BX, BX

lb2_outer:
	CMPQ  BX, R11
	JGE   lb2_done
	MOVL  (R10)(BX*4), AX
	IMULQ R13, AX
	LEAQ  (R8)(AX*1), DI
	LEAQ  3(BX), R14
	CMPQ       R14, R11
	JGE        lb2_next
	MOVL       (R10)(R14*4), AX
	IMULQ      R13, AX
	LEAQ       (R8)(AX*1), DX
	MOVQ       R13, CX

lb2_next_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         lb2_next_pf

lb2_next:
	MOVQ  SI, R15
	MOVQ  R9, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

lb2_loopbig:
	CMPQ        CX, $32
	JL          lb2_loopw
	VMOVUPS     0(R15), Y4
	VMOVUPS     32(R15), Y5
	VMOVUPS     64(R15), Y6
	VMOVUPS     96(R15), Y7
	VSUBPS      0(DI), Y4, Y4
	VSUBPS      32(DI), Y5, Y5
	VSUBPS      64(DI), Y6, Y6
	VSUBPS      96(DI), Y7, Y7
	VFMADD231PS Y4, Y4, Y0
	VFMADD231PS Y5, Y5, Y1
	VFMADD231PS Y6, Y6, Y2
	VFMADD231PS Y7, Y7, Y3
	ADDQ        $128, R15
	ADDQ        $128, DI
	SUBQ        $32, CX
	JMP         lb2_loopbig

lb2_loopw:
	CMPQ        CX, $8
	JL          lb2_reduce
	VMOVUPS     (R15), Y4
	VSUBPS      (DI), Y4, Y4
	VFMADD231PS Y4, Y4, Y0
	ADDQ        $32, R15
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         lb2_loopw

lb2_reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM_Y0

lb2_tail:
	TESTQ       CX, CX
	JE          lb2_store
	VMOVSS      (R15), X1
	VSUBSS      (DI), X1, X1
	VFMADD231SS X1, X1, X0
	ADDQ        $4, R15
	ADDQ        $4, DI
	DECQ        CX
	JMP         lb2_tail

lb2_store:
	MOVSS X0, (R12)(BX*4)
	INCQ  BX
	JMP   lb2_outer

lb2_done:
	VZEROUPPER
	RET


// func prefetch(p *uint32)
TEXT ·prefetch(SB), NOSPLIT, $0-8
	MOVQ       p+0(FP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	RET

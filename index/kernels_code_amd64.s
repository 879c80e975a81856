//go:build amd64 && !purego

#include "textflag.h"

// Float32 x uint8 dot products for the SQ8 code. Each 8 codes are widened
// to int32 (VPMOVZXBD), converted to float32 and multiplied into one of
// four accumulators; the Go wrappers in kernels_amd64.go hand over a
// multiple of 8 components and add the tail themselves.

// Horizontal sum of Y0 into X0's low lane. Clobbers X1.
#define HSUM_Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVHLPS     X0, X0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVSHDUP    X0, X1     \
	VADDSS       X1, X0, X0

// One 32-component step of q (R15) against codes (DI).
#define U8_STEP32 \
	VPMOVZXBD   0(DI), Y4  \
	VPMOVZXBD   8(DI), Y5  \
	VPMOVZXBD   16(DI), Y6 \
	VPMOVZXBD   24(DI), Y7 \
	VCVTDQ2PS   Y4, Y4     \
	VCVTDQ2PS   Y5, Y5     \
	VCVTDQ2PS   Y6, Y6     \
	VCVTDQ2PS   Y7, Y7     \
	VFMADD231PS 0(R15), Y4, Y0  \
	VFMADD231PS 32(R15), Y5, Y1 \
	VFMADD231PS 64(R15), Y6, Y2 \
	VFMADD231PS 96(R15), Y7, Y3 \
	ADDQ        $128, R15  \
	ADDQ        $32, DI    \
	SUBQ        $32, CX

#define U8_STEP8 \
	VPMOVZXBD   (DI), Y4    \
	VCVTDQ2PS   Y4, Y4      \
	VFMADD231PS (R15), Y4, Y0 \
	ADDQ        $32, R15    \
	ADDQ        $8, DI      \
	SUBQ        $8, CX

#define U8_ZERO \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3

#define U8_REDUCE \
	VADDPS Y1, Y0, Y0 \
	VADDPS Y3, Y2, Y2 \
	VADDPS Y2, Y0, Y0 \
	HSUM_Y0

// func dotU8AVX2(q []float32, c []byte) float32
// len(q) is a multiple of 8.
TEXT ·dotU8AVX2(SB), NOSPLIT, $0-52
	MOVQ q_base+0(FP), R15
	MOVQ q_len+8(FP), CX
	MOVQ c_base+24(FP), DI
	U8_ZERO

u8_loop32:
	CMPQ CX, $32
	JL   u8_loop8
	U8_STEP32
	JMP  u8_loop32

u8_loop8:
	CMPQ CX, $8
	JL   u8_done
	U8_STEP8
	JMP  u8_loop8

u8_done:
	U8_REDUCE
	VZEROUPPER
	VMOVSS X0, ret+48(FP)
	RET

// func dotU8BatchAVX2(q []float32, codes []byte, stride, off int, ids []uint32, out []float32)
// out[i] = q · codes[ids[i]*stride+off:], len(q) a multiple of 8. While row
// ids[i] is computed, every cache line of row ids[i+3] (stride bytes from
// ids[i+3]*stride, parameters included) is prefetched.
TEXT ·dotU8BatchAVX2(SB), NOSPLIT, $0-112
	MOVQ q_base+0(FP), SI
	MOVQ q_len+8(FP), R9
	MOVQ codes_base+24(FP), R8
	MOVQ stride+48(FP), R13
	MOVQ ids_base+64(FP), R10
	MOVQ ids_len+72(FP), R11
	MOVQ out_base+88(FP), R12

	// Prefetch the first three rows.
	XORQ BX, BX

ub_first:
	CMPQ  BX, $3
	JGE   ub_start
	CMPQ  BX, R11
	JGE   ub_start
	MOVL  (R10)(BX*4), AX
	IMULQ R13, AX
	LEAQ  (R8)(AX*1), DX
	MOVQ  R13, CX

ub_first_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         ub_first_pf
	PREFETCHT0 -1(DX)(CX*1)
	INCQ       BX
	JMP        ub_first

ub_start:
	XORQ BX, BX

ub_outer:
	CMPQ  BX, R11
	JGE   ub_done
	MOVL  (R10)(BX*4), AX
	IMULQ R13, AX
	LEAQ  (R8)(AX*1), DI
	ADDQ  off+56(FP), DI
	LEAQ  3(BX), R14
	CMPQ  R14, R11
	JGE   ub_compute
	MOVL  (R10)(R14*4), AX
	IMULQ R13, AX
	LEAQ  (R8)(AX*1), DX
	MOVQ  R13, CX

ub_pf:
	PREFETCHT0 (DX)
	ADDQ       $64, DX
	SUBQ       $64, CX
	JG         ub_pf
	PREFETCHT0 -1(DX)(CX*1)

ub_compute:
	MOVQ SI, R15
	MOVQ R9, CX
	U8_ZERO

ub_loop32:
	CMPQ CX, $32
	JL   ub_loop8
	U8_STEP32
	JMP  ub_loop32

ub_loop8:
	CMPQ CX, $8
	JL   ub_store
	U8_STEP8
	JMP  ub_loop8

ub_store:
	U8_REDUCE
	VMOVSS X0, (R12)(BX*4)
	INCQ   BX
	JMP    ub_outer

ub_done:
	VZEROUPPER
	RET

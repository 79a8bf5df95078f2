//go:build amd64 && !purego

// AVX2+FMA elementwise sigmoid and tanh for the LSTM gates: expf of
// act.go (range reduction x = n·ln2 + r, degree-6 Taylor polynomial,
// 2^n through the exponent bits) eight lanes at a time.

#include "textflag.h"

// log2e
DATA actconsts<>+0(SB)/4, $0x3fb8aa3b
DATA actconsts<>+4(SB)/4, $0x3fb8aa3b
DATA actconsts<>+8(SB)/4, $0x3fb8aa3b
DATA actconsts<>+12(SB)/4, $0x3fb8aa3b
DATA actconsts<>+16(SB)/4, $0x3fb8aa3b
DATA actconsts<>+20(SB)/4, $0x3fb8aa3b
DATA actconsts<>+24(SB)/4, $0x3fb8aa3b
DATA actconsts<>+28(SB)/4, $0x3fb8aa3b
// ln2hi
DATA actconsts<>+32(SB)/4, $0x3f318000
DATA actconsts<>+36(SB)/4, $0x3f318000
DATA actconsts<>+40(SB)/4, $0x3f318000
DATA actconsts<>+44(SB)/4, $0x3f318000
DATA actconsts<>+48(SB)/4, $0x3f318000
DATA actconsts<>+52(SB)/4, $0x3f318000
DATA actconsts<>+56(SB)/4, $0x3f318000
DATA actconsts<>+60(SB)/4, $0x3f318000
// ln2lo
DATA actconsts<>+64(SB)/4, $0xb95e8083
DATA actconsts<>+68(SB)/4, $0xb95e8083
DATA actconsts<>+72(SB)/4, $0xb95e8083
DATA actconsts<>+76(SB)/4, $0xb95e8083
DATA actconsts<>+80(SB)/4, $0xb95e8083
DATA actconsts<>+84(SB)/4, $0xb95e8083
DATA actconsts<>+88(SB)/4, $0xb95e8083
DATA actconsts<>+92(SB)/4, $0xb95e8083
// c720
DATA actconsts<>+96(SB)/4, $0x3ab60b61
DATA actconsts<>+100(SB)/4, $0x3ab60b61
DATA actconsts<>+104(SB)/4, $0x3ab60b61
DATA actconsts<>+108(SB)/4, $0x3ab60b61
DATA actconsts<>+112(SB)/4, $0x3ab60b61
DATA actconsts<>+116(SB)/4, $0x3ab60b61
DATA actconsts<>+120(SB)/4, $0x3ab60b61
DATA actconsts<>+124(SB)/4, $0x3ab60b61
// c120
DATA actconsts<>+128(SB)/4, $0x3c088889
DATA actconsts<>+132(SB)/4, $0x3c088889
DATA actconsts<>+136(SB)/4, $0x3c088889
DATA actconsts<>+140(SB)/4, $0x3c088889
DATA actconsts<>+144(SB)/4, $0x3c088889
DATA actconsts<>+148(SB)/4, $0x3c088889
DATA actconsts<>+152(SB)/4, $0x3c088889
DATA actconsts<>+156(SB)/4, $0x3c088889
// c24
DATA actconsts<>+160(SB)/4, $0x3d2aaaab
DATA actconsts<>+164(SB)/4, $0x3d2aaaab
DATA actconsts<>+168(SB)/4, $0x3d2aaaab
DATA actconsts<>+172(SB)/4, $0x3d2aaaab
DATA actconsts<>+176(SB)/4, $0x3d2aaaab
DATA actconsts<>+180(SB)/4, $0x3d2aaaab
DATA actconsts<>+184(SB)/4, $0x3d2aaaab
DATA actconsts<>+188(SB)/4, $0x3d2aaaab
// c6
DATA actconsts<>+192(SB)/4, $0x3e2aaaab
DATA actconsts<>+196(SB)/4, $0x3e2aaaab
DATA actconsts<>+200(SB)/4, $0x3e2aaaab
DATA actconsts<>+204(SB)/4, $0x3e2aaaab
DATA actconsts<>+208(SB)/4, $0x3e2aaaab
DATA actconsts<>+212(SB)/4, $0x3e2aaaab
DATA actconsts<>+216(SB)/4, $0x3e2aaaab
DATA actconsts<>+220(SB)/4, $0x3e2aaaab
// half
DATA actconsts<>+224(SB)/4, $0x3f000000
DATA actconsts<>+228(SB)/4, $0x3f000000
DATA actconsts<>+232(SB)/4, $0x3f000000
DATA actconsts<>+236(SB)/4, $0x3f000000
DATA actconsts<>+240(SB)/4, $0x3f000000
DATA actconsts<>+244(SB)/4, $0x3f000000
DATA actconsts<>+248(SB)/4, $0x3f000000
DATA actconsts<>+252(SB)/4, $0x3f000000
// one
DATA actconsts<>+256(SB)/4, $0x3f800000
DATA actconsts<>+260(SB)/4, $0x3f800000
DATA actconsts<>+264(SB)/4, $0x3f800000
DATA actconsts<>+268(SB)/4, $0x3f800000
DATA actconsts<>+272(SB)/4, $0x3f800000
DATA actconsts<>+276(SB)/4, $0x3f800000
DATA actconsts<>+280(SB)/4, $0x3f800000
DATA actconsts<>+284(SB)/4, $0x3f800000
// bias
DATA actconsts<>+288(SB)/4, $0x0000007f
DATA actconsts<>+292(SB)/4, $0x0000007f
DATA actconsts<>+296(SB)/4, $0x0000007f
DATA actconsts<>+300(SB)/4, $0x0000007f
DATA actconsts<>+304(SB)/4, $0x0000007f
DATA actconsts<>+308(SB)/4, $0x0000007f
DATA actconsts<>+312(SB)/4, $0x0000007f
DATA actconsts<>+316(SB)/4, $0x0000007f
// lo
DATA actconsts<>+320(SB)/4, $0xc2ae0000
DATA actconsts<>+324(SB)/4, $0xc2ae0000
DATA actconsts<>+328(SB)/4, $0xc2ae0000
DATA actconsts<>+332(SB)/4, $0xc2ae0000
DATA actconsts<>+336(SB)/4, $0xc2ae0000
DATA actconsts<>+340(SB)/4, $0xc2ae0000
DATA actconsts<>+344(SB)/4, $0xc2ae0000
DATA actconsts<>+348(SB)/4, $0xc2ae0000
// hi
DATA actconsts<>+352(SB)/4, $0x42b00000
DATA actconsts<>+356(SB)/4, $0x42b00000
DATA actconsts<>+360(SB)/4, $0x42b00000
DATA actconsts<>+364(SB)/4, $0x42b00000
DATA actconsts<>+368(SB)/4, $0x42b00000
DATA actconsts<>+372(SB)/4, $0x42b00000
DATA actconsts<>+376(SB)/4, $0x42b00000
DATA actconsts<>+380(SB)/4, $0x42b00000
// two
DATA actconsts<>+384(SB)/4, $0x40000000
DATA actconsts<>+388(SB)/4, $0x40000000
DATA actconsts<>+392(SB)/4, $0x40000000
DATA actconsts<>+396(SB)/4, $0x40000000
DATA actconsts<>+400(SB)/4, $0x40000000
DATA actconsts<>+404(SB)/4, $0x40000000
DATA actconsts<>+408(SB)/4, $0x40000000
DATA actconsts<>+412(SB)/4, $0x40000000
GLOBL actconsts<>(SB), RODATA|NOPTR, $416

// func sigmoidY(x *float32, n int)
TEXT ·sigmoidY(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE sdone
	VXORPS Y5, Y5, Y5
sloop:
	VMOVUPS (SI), Y0
	VSUBPS Y0, Y5, Y0
	VMAXPS actconsts<>+320(SB), Y0, Y0
	VMINPS actconsts<>+352(SB), Y0, Y0
	VMULPS actconsts<>+0(SB), Y0, Y1
	VROUNDPS $0, Y1, Y1
	VCVTPS2DQ Y1, Y2
	VFNMADD231PS actconsts<>+32(SB), Y1, Y0
	VFNMADD231PS actconsts<>+64(SB), Y1, Y0
	VMOVUPS actconsts<>+96(SB), Y3
	VFMADD213PS actconsts<>+128(SB), Y0, Y3
	VFMADD213PS actconsts<>+160(SB), Y0, Y3
	VFMADD213PS actconsts<>+192(SB), Y0, Y3
	VFMADD213PS actconsts<>+224(SB), Y0, Y3
	VFMADD213PS actconsts<>+256(SB), Y0, Y3
	VFMADD213PS actconsts<>+256(SB), Y0, Y3
	VPADDD actconsts<>+288(SB), Y2, Y2
	VPSLLD $23, Y2, Y2
	VMULPS Y2, Y3, Y3
	VADDPS actconsts<>+256(SB), Y3, Y3
	VMOVUPS actconsts<>+256(SB), Y4
	VDIVPS Y3, Y4, Y4
	VMOVUPS Y4, (SI)
	ADDQ $32, SI
	SUBQ $8, CX
	JG sloop
	VZEROUPPER
sdone:
	RET

// func tanhY(x, y *float32, n int)
TEXT ·tanhY(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE tdone
tloop:
	VMOVUPS (SI), Y0
	VADDPS Y0, Y0, Y0
	VMAXPS actconsts<>+320(SB), Y0, Y0
	VMINPS actconsts<>+352(SB), Y0, Y0
	VMULPS actconsts<>+0(SB), Y0, Y1
	VROUNDPS $0, Y1, Y1
	VCVTPS2DQ Y1, Y2
	VFNMADD231PS actconsts<>+32(SB), Y1, Y0
	VFNMADD231PS actconsts<>+64(SB), Y1, Y0
	VMOVUPS actconsts<>+96(SB), Y3
	VFMADD213PS actconsts<>+128(SB), Y0, Y3
	VFMADD213PS actconsts<>+160(SB), Y0, Y3
	VFMADD213PS actconsts<>+192(SB), Y0, Y3
	VFMADD213PS actconsts<>+224(SB), Y0, Y3
	VFMADD213PS actconsts<>+256(SB), Y0, Y3
	VFMADD213PS actconsts<>+256(SB), Y0, Y3
	VPADDD actconsts<>+288(SB), Y2, Y2
	VPSLLD $23, Y2, Y2
	VMULPS Y2, Y3, Y3
	VADDPS actconsts<>+256(SB), Y3, Y3
	VMOVUPS actconsts<>+384(SB), Y4
	VDIVPS Y3, Y4, Y4
	VMOVUPS actconsts<>+256(SB), Y5
	VSUBPS Y4, Y5, Y5
	VMOVUPS Y5, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JG tloop
	VZEROUPPER
tdone:
	RET

// func dotY(x, y *float32, n int) float32
TEXT ·dotY(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	CMPQ CX, $16
	JL dtail
dloop:
	VMOVUPS (SI), Y2
	VMOVUPS 32(SI), Y3
	VFMADD231PS (DI), Y2, Y0
	VFMADD231PS 32(DI), Y3, Y1
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	CMPQ CX, $16
	JGE dloop
dtail:
	TESTQ CX, CX
	JLE dsum
	VMOVUPS (SI), Y2
	VFMADD231PS (DI), Y2, Y0
dsum:
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func lstmCellBackY(gt, tc, cp, dh, dc, dgt *float32, h, n int)
// One sorted destination's step of the LSTM's backward pass (see
// SAGELSTM.Backward) over its first n features (n a multiple of 8): gt
// and dgt are its 4h gate values and gradients.
TEXT ·lstmCellBackY(SB), NOSPLIT, $0-64
	MOVQ gt+0(FP), SI
	MOVQ tc+8(FP), DX
	MOVQ cp+16(FP), R10
	MOVQ dh+24(FP), R11
	MOVQ dc+32(FP), R12
	MOVQ dgt+40(FP), DI
	MOVQ h+48(FP), R8
	MOVQ n+56(FP), CX
	TESTQ CX, CX
	JLE bdone
	SHLQ $2, R8 // h floats in bytes: the f gate's offset
	LEAQ (R8)(R8*2), R9  // the o gate's offset
	VMOVUPS actconsts<>+256(SB), Y6 // one
bloop:
	VMOVUPS (SI), Y0        // i
	VMOVUPS (SI)(R8*1), Y1  // f
	VMOVUPS (SI)(R8*2), Y2  // g
	VMOVUPS (SI)(R9*1), Y3  // o
	VMOVUPS (DX), Y4        // tanh c
	VMOVUPS (R11), Y5       // dh
	VMULPS Y4, Y4, Y7
	VSUBPS Y7, Y6, Y7
	VMULPS Y3, Y7, Y7
	VMOVUPS (R12), Y8
	VFMADD231PS Y7, Y5, Y8  // dc' = dc + dh·o·(1−tanh²c)
	VSUBPS Y3, Y6, Y9
	VMULPS Y3, Y9, Y9
	VMULPS Y4, Y9, Y9
	VMULPS Y5, Y9, Y9       // do = dh·tanh c·o(1−o)
	VMOVUPS Y9, (DI)(R9*1)
	VSUBPS Y0, Y6, Y10
	VMULPS Y0, Y10, Y10
	VMULPS Y2, Y10, Y10
	VMULPS Y8, Y10, Y10     // di = dc'·g·i(1−i)
	VMOVUPS Y10, (DI)
	VMULPS Y2, Y2, Y11
	VSUBPS Y11, Y6, Y11
	VMULPS Y0, Y11, Y11
	VMULPS Y8, Y11, Y11     // dg = dc'·i·(1−g²)
	VMOVUPS Y11, (DI)(R8*2)
	VSUBPS Y1, Y6, Y12
	VMULPS Y1, Y12, Y12
	VMULPS (R10), Y12, Y12
	VMULPS Y8, Y12, Y12     // df = dc'·c_prev·f(1−f)
	VMOVUPS Y12, (DI)(R8*1)
	VMULPS Y1, Y8, Y8       // dc for the step before: dc'·f
	VMOVUPS Y8, (R12)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $32, R12
	ADDQ $32, DI
	SUBQ $8, CX
	JG bloop
	VZEROUPPER
bdone:
	RET

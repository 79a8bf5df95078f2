package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The pairwise comparators' kernels (l1 and modulus_l1). The gradients
// are written without masks: sign(x) with sign(0) = 0 is
// clamp(x·2¹²⁷·2¹²⁷, −1, 1) (every non-zero float32 times 2²⁵⁴ is at
// least 1 in magnitude), and the step "x > 0" is clamp(x·2¹²⁷·2¹²⁷, 0, 1),
// so each lane computes exactly what the scalar Go loop does.

// bcastBits fills every lane of v with the float32 of the given bits.
func bcastBits(bits uint32, v reg.VecVirtual) {
	g := GP32()
	MOVL(U32(bits), g)
	x := XMM()
	VMOVD(g, x)
	VBROADCASTSS(x, v)
}

const two127 = 0x7f000000 // 2¹²⁷

// l1Grad adds −v into gq and v into gc with v = g·sign(q − c), sign(0) = 0.
func l1Grad(w width) {
	fn := name("l1Grad", w)
	TEXT(fn, NOSPLIT, "func(alpha float32, q, c, gq, gc *float32, n int)")
	Pragma("noescape")
	Doc(fn + " adds −g·sign(q_i − c_i) into gq_i and g·sign(q_i − c_i) into gc_i, sign(0) = 0 (n a multiple of the lanes).")
	gs := Load(Param("alpha"), XMM())
	q := Load(Param("q"), GP64())
	c := Load(Param("c"), GP64())
	gq := Load(Param("gq"), GP64())
	gc := Load(Param("gc"), GP64())
	n := Load(Param("n"), GP64())
	gv, big, one, neg := w.new(), w.new(), w.new(), w.new()
	VBROADCASTSS(gs, gv)
	bcastBits(two127, big)
	bcastBits(math.Float32bits(1), one)
	bcastBits(math.Float32bits(-1), neg)
	elementwise(fn, w, n, func(off reg.GPVirtual) {
		t := w.new()
		VMOVUPS(Mem{Base: q, Index: off, Scale: 1}, t)
		VSUBPS(Mem{Base: c, Index: off, Scale: 1}, t, t)
		VMULPS(big, t, t)
		VMULPS(big, t, t)
		VMAXPS(neg, t, t)
		VMINPS(one, t, t)
		VMULPS(gv, t, t)
		a, b := w.new(), w.new()
		VMOVUPS(Mem{Base: gq, Index: off, Scale: 1}, a)
		VSUBPS(t, a, a)
		VMOVUPS(a, Mem{Base: gq, Index: off, Scale: 1})
		VMOVUPS(Mem{Base: gc, Index: off, Scale: 1}, b)
		VADDPS(t, b, b)
		VMOVUPS(b, Mem{Base: gc, Index: off, Scale: 1})
	})
	VZEROUPPER()
	RET()
}

// modGrad adds −(u, v) into gq and (u, v) into gc per complex coordinate,
// (u, v) = g·(dr, di)/sqrt(dr² + di²) where dr² + di² > 1e−30, else 0.
func modGrad(w width) {
	fn := name("modGrad", w)
	TEXT(fn, NOSPLIT, "func(alpha float32, q, c, gq, gc *float32, h, n int)")
	Pragma("noescape")
	Doc(fn + " adds the gradient of −modulus_l1 scaled by g into gq and gc over n complex coordinates, the imaginary parts h floats on (n a multiple of the lanes).")
	gs := Load(Param("alpha"), XMM())
	q := Load(Param("q"), GP64())
	c := Load(Param("c"), GP64())
	gq := Load(Param("gq"), GP64())
	gc := Load(Param("gc"), GP64())
	h := Load(Param("h"), GP64())
	n := Load(Param("n"), GP64())
	SHLQ(U8(2), h)
	gv, big, one, clampv := w.new(), w.new(), w.new(), w.new()
	VBROADCASTSS(gs, gv)
	bcastBits(two127, big)
	bcastBits(math.Float32bits(1), one)
	bcastBits(math.Float32bits(1e-30), clampv)
	elementwise(fn, w, n, func(off reg.GPVirtual) {
		im := GP64()
		MOVQ(off, im)
		ADDQ(h, im)
		dr, di, sq, t, st := w.new(), w.new(), w.new(), w.new(), w.new()
		VMOVUPS(Mem{Base: q, Index: off, Scale: 1}, dr)
		VSUBPS(Mem{Base: c, Index: off, Scale: 1}, dr, dr)
		VMOVUPS(Mem{Base: q, Index: im, Scale: 1}, di)
		VSUBPS(Mem{Base: c, Index: im, Scale: 1}, di, di)
		VMULPS(dr, dr, sq)
		VMULPS(di, di, t)
		VADDPS(t, sq, sq)
		// step = clamp((sq − 1e−30)·2²⁵⁴, 0, 1)
		VSUBPS(clampv, sq, st)
		VMULPS(big, st, st)
		VMULPS(big, st, st)
		VXORPS(t, t, t)
		VMAXPS(t, st, st)
		VMINPS(one, st, st)
		// w = g / sqrt(max(sq, 1e−30)) · step
		VMAXPS(clampv, sq, sq)
		VSQRTPS(sq, sq)
		VDIVPS(sq, gv, t)
		VMULPS(st, t, t)
		VMULPS(t, dr, dr)
		VMULPS(t, di, di)
		for _, p := range []struct {
			base  reg.Register
			idx   reg.Register
			v     reg.VecVirtual
			minus bool
		}{{gq, off, dr, true}, {gq, im, di, true}, {gc, off, dr, false}, {gc, im, di, false}} {
			a := w.new()
			VMOVUPS(Mem{Base: p.base, Index: p.idx, Scale: 1}, a)
			if p.minus {
				VSUBPS(p.v, a, a)
			} else {
				VADDPS(p.v, a, a)
			}
			VMOVUPS(a, Mem{Base: p.base, Index: p.idx, Scale: 1})
		}
	})
	VZEROUPPER()
	RET()
}

// l1Dist4 writes Σ_i |q_i − c_j,i| for the four candidates c_j = c + j·ldc
// floats into out[0..3], one accumulator per candidate: the one l1
// distance of the SIMD levels (a lone pair is four copies of itself, ldc
// = 0), so a score does not depend on where it is computed.
func l1Dist4(w width) {
	fn := name("l1Dist4", w)
	TEXT(fn, NOSPLIT, "func(q, c *float32, ldc, n int, out *float32)")
	Pragma("noescape")
	Doc(fn + " writes Σ |q_i − c_j,i| for the candidates c_j = c + j·ldc, j < 4, into out[j] (n a positive multiple of the lanes).")
	q := Load(Param("q"), GP64())
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	n := Load(Param("n"), GP64())
	out := Load(Param("out"), GP64())
	SHLQ(U8(2), ldc)
	c3 := GP64()
	LEAQ(Mem{Base: ldc, Index: ldc, Scale: 2}, c3) // 3·ldc
	abs := w.new()
	bcastBits(0x7fffffff, abs)
	acc := []reg.VecVirtual{w.new(), w.new(), w.new(), w.new()}
	for _, v := range acc {
		VXORPS(v, v, v)
	}
	elementwise(fn, w, n, func(off reg.GPVirtual) {
		qv := w.new()
		VMOVUPS(Mem{Base: q, Index: off, Scale: 1}, qv)
		cj := GP64()
		MOVQ(c, cj)
		ADDQ(off, cj)
		for j := 0; j < 4; j++ {
			t := w.new()
			var m Mem
			switch j {
			case 0:
				m = Mem{Base: cj}
			case 1:
				m = Mem{Base: cj, Index: ldc, Scale: 1}
			case 2:
				m = Mem{Base: cj, Index: ldc, Scale: 2}
			case 3:
				m = Mem{Base: cj, Index: c3, Scale: 1}
			}
			VSUBPS(m, qv, t)
			VANDPS(abs, t, t)
			VADDPS(t, acc[j], acc[j])
		}
	})
	for j := 0; j < 4; j++ {
		x := hreduce(w, acc[j], VADDPS)
		MOVSS(x, Mem{Base: out, Disp: 4 * j})
	}
	VZEROUPPER()
	RET()
}

// modDist4 is l1Dist4 for modulus_l1 (the imaginary parts h floats after
// the real ones), as modDist computes each term.
func modDist4(w width) {
	fn := name("modDist4", w)
	TEXT(fn, NOSPLIT, "func(q, c *float32, ldc, h, n int, out *float32)")
	Pragma("noescape")
	Doc(fn + " writes Σ sqrt(max((q_re−c_re)² + (q_im−c_im)², 1e−30)) for the candidates c_j = c + j·ldc, j < 4, into out[j], the imaginary parts h floats on (n a positive multiple of the lanes).")
	q := Load(Param("q"), GP64())
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	h := Load(Param("h"), GP64())
	n := Load(Param("n"), GP64())
	out := Load(Param("out"), GP64())
	SHLQ(U8(2), ldc)
	SHLQ(U8(2), h)
	clampv := w.new()
	bcastBits(math.Float32bits(1e-30), clampv)
	acc := []reg.VecVirtual{w.new(), w.new(), w.new(), w.new()}
	for _, v := range acc {
		VXORPS(v, v, v)
	}
	elementwise(fn, w, n, func(off reg.GPVirtual) {
		qr, qi := w.new(), w.new()
		VMOVUPS(Mem{Base: q, Index: off, Scale: 1}, qr)
		im := GP64()
		MOVQ(q, im)
		ADDQ(h, im)
		VMOVUPS(Mem{Base: im, Index: off, Scale: 1}, qi)
		cj := GP64()
		MOVQ(c, cj)
		ADDQ(off, cj)
		for j := 0; j < 4; j++ {
			dr, di := w.new(), w.new()
			VSUBPS(Mem{Base: cj}, qr, dr)
			VSUBPS(Mem{Base: cj, Index: h, Scale: 1}, qi, di)
			VMULPS(dr, dr, dr)
			VMULPS(di, di, di)
			VADDPS(di, dr, dr)
			VMAXPS(clampv, dr, dr)
			VSQRTPS(dr, dr)
			VADDPS(dr, acc[j], acc[j])
			if j < 3 {
				ADDQ(ldc, cj)
			}
		}
	})
	for j := 0; j < 4; j++ {
		x := hreduce(w, acc[j], VADDPS)
		MOVSS(x, Mem{Base: out, Disp: 4 * j})
	}
	VZEROUPPER()
	RET()
}

// l1Grad4 is l1Grad for four candidates c_j = c + j·ldc with gradients
// gc_j = gc + j·ldc and factors g[j]: gq is read once and updated by the
// four in order j = 0..3, as four l1Grad calls would.
func l1Grad4(w width) {
	fn := name("l1Grad4", w)
	TEXT(fn, NOSPLIT, "func(coef, q, c *float32, ldc int, gq, gc *float32, n int)")
	Pragma("noescape")
	Doc(fn + " adds −g_j·sign(q_i − c_j,i) into gq_i and g_j·sign(q_i − c_j,i) into gc_j,i for the candidates c_j = c + j·ldc, gc_j = gc + j·ldc, j < 4, in order (n a multiple of the lanes).")
	gp := Load(Param("coef"), GP64())
	q := Load(Param("q"), GP64())
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	gq := Load(Param("gq"), GP64())
	gc := Load(Param("gc"), GP64())
	n := Load(Param("n"), GP64())
	SHLQ(U8(2), ldc)
	big, one, neg := w.new(), w.new(), w.new()
	bcastBits(two127, big)
	bcastBits(math.Float32bits(1), one)
	bcastBits(math.Float32bits(-1), neg)
	elementwise(fn, w, n, func(off reg.GPVirtual) {
		qv, gqv := w.new(), w.new()
		VMOVUPS(Mem{Base: q, Index: off, Scale: 1}, qv)
		VMOVUPS(Mem{Base: gq, Index: off, Scale: 1}, gqv)
		cj, gj := GP64(), GP64()
		MOVQ(c, cj)
		ADDQ(off, cj)
		MOVQ(gc, gj)
		ADDQ(off, gj)
		for j := 0; j < 4; j++ {
			t, gv, a := w.new(), w.new(), w.new()
			VSUBPS(Mem{Base: cj}, qv, t)
			VMULPS(big, t, t)
			VMULPS(big, t, t)
			VMAXPS(neg, t, t)
			VMINPS(one, t, t)
			VBROADCASTSS(Mem{Base: gp, Disp: 4 * j}, gv)
			VMULPS(gv, t, t)
			VSUBPS(t, gqv, gqv)
			VMOVUPS(Mem{Base: gj}, a)
			VADDPS(t, a, a)
			VMOVUPS(a, Mem{Base: gj})
			if j < 3 {
				ADDQ(ldc, cj)
				ADDQ(ldc, gj)
			}
		}
		VMOVUPS(gqv, Mem{Base: gq, Index: off, Scale: 1})
	})
	VZEROUPPER()
	RET()
}

// modGrad4 is modGrad for four candidates, as l1Grad4 is l1Grad's.
func modGrad4(w width) {
	fn := name("modGrad4", w)
	TEXT(fn, NOSPLIT, "func(coef, q, c *float32, ldc int, gq, gc *float32, h, n int)")
	Pragma("noescape")
	Doc(fn + " adds the gradients of −modulus_l1 scaled by g_j into gq and gc_j for the candidates c_j = c + j·ldc, gc_j = gc + j·ldc, j < 4, in order, over n complex coordinates, the imaginary parts h floats on (n a multiple of the lanes).")
	gp := Load(Param("coef"), GP64())
	q := Load(Param("q"), GP64())
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	gq := Load(Param("gq"), GP64())
	gc := Load(Param("gc"), GP64())
	h := Load(Param("h"), GP64())
	n := Load(Param("n"), GP64())
	SHLQ(U8(2), ldc)
	SHLQ(U8(2), h)
	big, one, clampv := w.new(), w.new(), w.new()
	bcastBits(two127, big)
	bcastBits(math.Float32bits(1), one)
	bcastBits(math.Float32bits(1e-30), clampv)
	elementwise(fn, w, n, func(off reg.GPVirtual) {
		qr, qi, gqr, gqi := w.new(), w.new(), w.new(), w.new()
		qo, gqo := GP64(), GP64()
		MOVQ(q, qo)
		ADDQ(off, qo)
		MOVQ(gq, gqo)
		ADDQ(off, gqo)
		VMOVUPS(Mem{Base: qo}, qr)
		VMOVUPS(Mem{Base: qo, Index: h, Scale: 1}, qi)
		VMOVUPS(Mem{Base: gqo}, gqr)
		VMOVUPS(Mem{Base: gqo, Index: h, Scale: 1}, gqi)
		cj, gj := GP64(), GP64()
		MOVQ(c, cj)
		ADDQ(off, cj)
		MOVQ(gc, gj)
		ADDQ(off, gj)
		for j := 0; j < 4; j++ {
			dr, di, sq, st, t := w.new(), w.new(), w.new(), w.new(), w.new()
			VSUBPS(Mem{Base: cj}, qr, dr)
			VSUBPS(Mem{Base: cj, Index: h, Scale: 1}, qi, di)
			VMULPS(dr, dr, sq)
			VMULPS(di, di, t)
			VADDPS(t, sq, sq)
			VSUBPS(clampv, sq, st)
			VMULPS(big, st, st)
			VMULPS(big, st, st)
			VXORPS(t, t, t)
			VMAXPS(t, st, st)
			VMINPS(one, st, st)
			VMAXPS(clampv, sq, sq)
			VSQRTPS(sq, sq)
			VBROADCASTSS(Mem{Base: gp, Disp: 4 * j}, t)
			VDIVPS(sq, t, t)
			VMULPS(st, t, t)
			VMULPS(t, dr, dr)
			VMULPS(t, di, di)
			VSUBPS(dr, gqr, gqr)
			VSUBPS(di, gqi, gqi)
			a := w.new()
			VMOVUPS(Mem{Base: gj}, a)
			VADDPS(dr, a, a)
			VMOVUPS(a, Mem{Base: gj})
			VMOVUPS(Mem{Base: gj, Index: h, Scale: 1}, a)
			VADDPS(di, a, a)
			VMOVUPS(a, Mem{Base: gj, Index: h, Scale: 1})
			if j < 3 {
				ADDQ(ldc, cj)
				ADDQ(ldc, gj)
			}
		}
		VMOVUPS(gqr, Mem{Base: gqo})
		VMOVUPS(gqi, Mem{Base: gqo, Index: h, Scale: 1})
	})
	VZEROUPPER()
	RET()
}

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

// l1Dist returns Σ |q_i − c_i| over n floats (n a positive multiple of the
// lanes), with two vector accumulators.
func l1Dist(w width) {
	fn := name("l1Dist", w)
	TEXT(fn, NOSPLIT, "func(q, c *float32, n int) float32")
	Pragma("noescape")
	Doc(fn + " returns Σ |q_i − c_i| (n a positive multiple of the lanes).")
	q := Load(Param("q"), GP64())
	c := Load(Param("c"), GP64())
	n := Load(Param("n"), GP64())
	abs := w.new()
	bcastBits(0x7fffffff, abs)
	acc := []reg.VecVirtual{w.new(), w.new()}
	for _, v := range acc {
		VXORPS(v, v, v)
	}
	L := w.lanes()
	CMPQ(n, U32(2*L))
	JL(LabelRef(fn + "_one"))
	Label(fn + "_two")
	for u := 0; u < 2; u++ {
		t := w.new()
		VMOVUPS(Mem{Base: q, Disp: u * w.bytes}, t)
		VSUBPS(Mem{Base: c, Disp: u * w.bytes}, t, t)
		VANDPS(abs, t, t)
		VADDPS(t, acc[u], acc[u])
	}
	ADDQ(U32(2*w.bytes), q)
	ADDQ(U32(2*w.bytes), c)
	SUBQ(U32(2*L), n)
	CMPQ(n, U32(2*L))
	JGE(LabelRef(fn + "_two"))
	Label(fn + "_one")
	TESTQ(n, n)
	JZ(LabelRef(fn + "_sum"))
	t := w.new()
	VMOVUPS(Mem{Base: q}, t)
	VSUBPS(Mem{Base: c}, t, t)
	VANDPS(abs, t, t)
	VADDPS(t, acc[0], acc[0])
	Label(fn + "_sum")
	VADDPS(acc[1], acc[0], acc[0])
	x := hreduce(w, acc[0], VADDPS)
	VZEROUPPER()
	Store(x, ReturnIndex(0))
	RET()
}

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

// modDist returns Σ_k sqrt(max(dr_k² + di_k², 1e−30)) over n complex
// coordinates (n a positive multiple of the lanes), dr = q_re − c_re and
// di = q_im − c_im, the imaginary parts h floats after the real ones;
// products and sum rounded apart (no FMA), as the scalar modTerm.
func modDist(w width) {
	fn := name("modDist", w)
	TEXT(fn, NOSPLIT, "func(q, c *float32, h, n int) float32")
	Pragma("noescape")
	Doc(fn + " returns Σ sqrt(max((q_re−c_re)² + (q_im−c_im)², 1e−30)) over n complex coordinates, the imaginary parts h floats on (n a positive multiple of the lanes).")
	q := Load(Param("q"), GP64())
	c := Load(Param("c"), GP64())
	h := Load(Param("h"), GP64())
	n := Load(Param("n"), GP64())
	SHLQ(U8(2), h)
	clampv := w.new()
	bcastBits(math.Float32bits(1e-30), clampv)
	acc := w.new()
	VXORPS(acc, acc, acc)
	elementwise(fn, w, n, func(off reg.GPVirtual) {
		im := GP64()
		MOVQ(off, im)
		ADDQ(h, im)
		dr, di := w.new(), w.new()
		VMOVUPS(Mem{Base: q, Index: off, Scale: 1}, dr)
		VSUBPS(Mem{Base: c, Index: off, Scale: 1}, dr, dr)
		VMOVUPS(Mem{Base: q, Index: im, Scale: 1}, di)
		VSUBPS(Mem{Base: c, Index: im, Scale: 1}, di, di)
		VMULPS(dr, dr, dr)
		VMULPS(di, di, di)
		VADDPS(di, dr, dr)
		VMAXPS(clampv, dr, dr)
		VSQRTPS(dr, dr)
		VADDPS(dr, acc, acc)
	})
	x := hreduce(w, acc, VADDPS)
	VZEROUPPER()
	Store(x, ReturnIndex(0))
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

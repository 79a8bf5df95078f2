package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The per-entry transforms of the GEMM comparators (cos, l2, squared_l2):
// a row of products u_k = <q, n_k> becomes the row of scores, and after
// the row's loss its dL/dscore row becomes the factors of the backward
// products. Each lane rounds every step as the scalar Go loop does (no
// FMA; the clamp as a 0/1 step), so the two agree bit for bit; only the
// returned row sums are added in another order.

// konst is a named constant a row kernel broadcasts before its loop.
type konst struct {
	name string
	v    float32
}

// rowKernel emits a TEXT with the given pointer params and scalar float
// params and an elementwise body over n floats.
func rowKernel(fn, sig, doc string, w width, ptrs []string, scalars []string, consts []konst, ret bool, body func(off reg.GPVirtual, p map[string]reg.Register, s map[string]reg.VecVirtual, acc reg.VecVirtual)) {
	TEXT(fn, NOSPLIT, sig)
	Pragma("noescape")
	Doc(fn + " " + doc)
	p := map[string]reg.Register{}
	for _, name := range ptrs {
		p[name] = Load(Param(name), GP64())
	}
	s := map[string]reg.VecVirtual{}
	for _, name := range scalars {
		x := Load(Param(name), XMM())
		v := w.new()
		VBROADCASTSS(x, v)
		s[name] = v
	}
	for _, c := range consts {
		v := w.new()
		bcastBits(math.Float32bits(c.v), v)
		s[c.name] = v
	}
	n := Load(Param("n"), GP64())
	var acc reg.VecVirtual
	if ret {
		acc = w.new()
		VXORPS(acc, acc, acc)
	}
	elementwise(fn, w, n, func(off reg.GPVirtual) { body(off, p, s, acc) })
	if ret {
		x := hreduce(w, acc, VADDPS)
		VZEROUPPER()
		Store(x, ReturnIndex(0))
		RET()
		return
	}
	VZEROUPPER()
	RET()
}

func at(b reg.Register, off reg.GPVirtual) Mem { return Mem{Base: b, Index: off, Scale: 1} }

func rowKernels(w width) {
	// l2Fwd: D2 = (q2 − 2u) + nn; dist = sqrt(max(D2, 1e−30)); row = −dist;
	// f = (1/dist)·[D2 > 1e−30].
	rowKernel(name("l2Fwd", w), "func(row, nn, f *float32, q2 float32, n int)",
		"turns products into −l2 scores and their inverse distances (n a multiple of the lanes).",
		w, []string{"row", "nn", "f"}, []string{"q2"}, []konst{{"cl", 1e-30}, {"big", math.Float32frombits(two127)}, {"one", 1}}, false,
		func(off reg.GPVirtual, p map[string]reg.Register, s map[string]reg.VecVirtual, _ reg.VecVirtual) {
			u, t, st, r := w.new(), w.new(), w.new(), w.new()
			VMOVUPS(at(p["row"], off), u)
			VADDPS(u, u, u) // 2u, exact
			VSUBPS(u, s["q2"], t)
			VADDPS(at(p["nn"], off), t, t) // D2
			VSUBPS(s["cl"], t, st)
			VMULPS(s["big"], st, st)
			VMULPS(s["big"], st, st)
			VXORPS(u, u, u)
			VMAXPS(u, st, st)
			VMINPS(s["one"], st, st)
			VMAXPS(s["cl"], t, t)
			VSQRTPS(t, t)
			VSUBPS(t, u, u) // 0 − dist
			VMOVUPS(u, at(p["row"], off))
			VDIVPS(t, s["one"], r)
			VMULPS(st, r, r)
			VMOVUPS(r, at(p["f"], off))
		})
	// sqFwd: row = (2u − q2) − nn.
	rowKernel(name("sqFwd", w), "func(row, nn *float32, q2 float32, n int)",
		"turns products into −squared_l2 scores (n a multiple of the lanes).",
		w, []string{"row", "nn"}, []string{"q2"}, nil, false,
		func(off reg.GPVirtual, p map[string]reg.Register, s map[string]reg.VecVirtual, _ reg.VecVirtual) {
			u := w.new()
			VMOVUPS(at(p["row"], off), u)
			VADDPS(u, u, u)
			VSUBPS(s["q2"], u, u)
			VSUBPS(at(p["nn"], off), u, u)
			VMOVUPS(u, at(p["row"], off))
		})
	// cosFwd: row = f = (u·ia)·ninv.
	rowKernel(name("cosFwd", w), "func(row, ninv, f *float32, ia float32, n int)",
		"turns products into cos scores, kept in f too (n a multiple of the lanes).",
		w, []string{"row", "ninv", "f"}, []string{"ia"}, nil, false,
		func(off reg.GPVirtual, p map[string]reg.Register, s map[string]reg.VecVirtual, _ reg.VecVirtual) {
			u := w.new()
			VMOVUPS(at(p["row"], off), u)
			VMULPS(s["ia"], u, u)
			VMULPS(at(p["ninv"], off), u, u)
			VMOVUPS(u, at(p["row"], off))
			VMOVUPS(u, at(p["f"], off))
		})
	// mulBack: c = row·f; row = c; cc += c; returns Σ c.
	rowKernel(name("mulBack", w), "func(row, f, cc *float32, n int) float32",
		"sets row_k = row_k·f_k, adds it into cc_k and returns its sum (n a multiple of the lanes).",
		w, []string{"row", "f", "cc"}, nil, nil, true,
		func(off reg.GPVirtual, p map[string]reg.Register, s map[string]reg.VecVirtual, acc reg.VecVirtual) {
			c, a := w.new(), w.new()
			VMOVUPS(at(p["row"], off), c)
			VMULPS(at(p["f"], off), c, c)
			VMOVUPS(c, at(p["row"], off))
			VADDPS(c, acc, acc)
			VMOVUPS(at(p["cc"], off), a)
			VADDPS(c, a, a)
			VMOVUPS(a, at(p["cc"], off))
		})
	// cosBack: gs = G·f; cc += gs; row = (G·ia)·ninv; returns Σ gs.
	rowKernel(name("cosBack", w), "func(row, f, ninv, cc *float32, ia float32, n int) float32",
		"adds G_k·f_k into cc_k, sets row_k = G_k·ia·ninv_k and returns Σ G_k·f_k (n a multiple of the lanes).",
		w, []string{"row", "f", "ninv", "cc"}, []string{"ia"}, nil, true,
		func(off reg.GPVirtual, p map[string]reg.Register, s map[string]reg.VecVirtual, acc reg.VecVirtual) {
			g, gs, a := w.new(), w.new(), w.new()
			VMOVUPS(at(p["row"], off), g)
			VMULPS(at(p["f"], off), g, gs)
			VADDPS(gs, acc, acc)
			VMOVUPS(at(p["cc"], off), a)
			VADDPS(gs, a, a)
			VMOVUPS(a, at(p["cc"], off))
			VMULPS(s["ia"], g, g)
			VMULPS(at(p["ninv"], off), g, g)
			VMOVUPS(g, at(p["row"], off))
		})
}

// Command asmgen generates the amd64 SIMD kernels of package model
// (asm_amd64.s and its Go declarations asm_amd64.go) with avo.
//
// Every kernel exists twice, once for 256-bit AVX2+FMA (suffix Y) and once
// for 512-bit AVX-512F (suffix Z); the generator writes both from the same
// code with the vector width as a parameter. The elementwise kernels work on
// whole vectors only (n a positive multiple of the lane count); the Go
// wrappers in package model do the ragged tails and choose the width at run
// time. Run it with `go generate ./realrun/model`.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"math"
	"os"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// width describes one vector register file.
type width struct {
	suffix string // Y or Z
	bytes  int    // bytes per register
	regs   int    // architectural vector registers
	new    func() reg.VecVirtual
}

func (w width) lanes() int { return w.bytes / 4 }

var (
	avx2   = width{"Y", 32, 16, YMM}
	avx512 = width{"Z", 64, 32, ZMM}
)

func main() {
	ConstraintExpr("!purego")
	constTable()
	for _, w := range []width{avx2, avx512} {
		fmaPeak(w)
		// Micro-kernels: a full panel (NR = 2 vectors) and a half panel
		// (NR = 1 vector) for the ragged right edge of C.
		for _, ks := range kernels() {
			if ks.suffix == w.suffix {
				kernel(ks)
			}
		}
		gatherCols(w)
		dot(w)
		axpy(w)
		scal(w)
		vmax(w)
		expSum(w)
		adagrad(w)
		l1Dist4(w)
		l1Grad(w)
		l1Grad4(w)
		modDist4(w)
		modGrad(w)
		modGrad4(w)
		rowKernels(w)
	}
	prefetch()
	Generate()
	writeGo()
}

// gatherCols packs one vector of columns of a column-contiguous matrix: for
// p < kb, dst[p·lddst + l] = src[p + idx[l]] for each lane l (indices and
// lddst in floats). Physical registers keep the gather's destination apart
// from its index and mask, as the instruction requires.
func gatherCols(w width) {
	fn := name("gatherCols", w)
	TEXT(fn, NOSPLIT, "func(dst *float32, lddst int, src *float32, idx *int32, kb int)")
	Pragma("noescape")
	Doc(fn + " gathers kb rows of one vector of columns: dst[p·lddst + l] = src[p + idx[l]] (kb ≥ 1).")
	dst := Load(Param("dst"), GP64())
	ld := Load(Param("lddst"), GP64())
	src := Load(Param("src"), GP64())
	idx := Load(Param("idx"), GP64())
	kb := Load(Param("kb"), GP64())
	SHLQ(U8(2), ld)
	var iv, g reg.Register
	if w.bytes == 64 {
		iv, g = reg.Z0, reg.Z1
	} else {
		iv, g = reg.Y0, reg.Y1
	}
	VMOVUPS(Mem{Base: idx}, iv)
	Label(fn + "_loop")
	if w.bytes == 64 {
		KXNORW(reg.K1, reg.K1, reg.K1)
		VGATHERDPS(Mem{Base: src, Index: iv, Scale: 4}, reg.K1, g)
	} else {
		VPCMPEQD(reg.Y2, reg.Y2, reg.Y2)
		VGATHERDPS(reg.Y2, Mem{Base: src, Index: iv, Scale: 4}, g)
	}
	VMOVUPS(g, Mem{Base: dst})
	ADDQ(U32(4), src)
	ADDQ(ld, dst)
	DECQ(kb)
	JNZ(LabelRef(fn + "_loop"))
	VZEROUPPER()
	RET()
}

// prefetch asks for the cache lines of n bytes at p (PREFETCHT0), so that a
// row read soon afterwards does not wait for memory.
func prefetch() {
	TEXT("prefetch", NOSPLIT, "func(p *float32, n int)")
	Pragma("noescape")
	Doc("prefetch loads the cache lines of n bytes at p into all cache levels.")
	p := Load(Param("p"), GP64())
	n := Load(Param("n"), GP64())
	LEAQ(Mem{Base: p, Index: n, Scale: 1, Disp: -1}, n) // last byte
	ANDQ(I32(-64), p)                                   // first line
	Label("prefetch_loop")
	PREFETCHT0(Mem{Base: p})
	ADDQ(U32(64), p)
	CMPQ(p, n)
	JLE(LabelRef("prefetch_loop"))
	RET()
}

// bcast fills every lane of v with the float32 f.
func bcast(f float32, v reg.VecVirtual) {
	g := GP32()
	MOVL(U32(math.Float32bits(f)), g)
	x := XMM()
	VMOVD(g, x)
	VBROADCASTSS(x, v)
}

// hreduce folds the lanes of v into its lowest lane with op (VADDPS or
// VMAXPS) and returns that lane as an XMM register.
func hreduce(w width, v reg.VecVirtual, op func(...Op)) reg.Register {
	y := v.AsY()
	if w.bytes == 64 {
		hi := YMM()
		VEXTRACTF64X4(U8(1), v, hi)
		op(hi, v.AsY(), hi)
		y = hi
	}
	x := XMM()
	VEXTRACTF128(U8(1), y, x)
	op(x, y.(interface{ AsX() reg.Register }).AsX(), x)
	t := XMM()
	VMOVHLPS(x, x, t)
	op(t, x, x)
	VMOVSHDUP(x, t)
	op(t, x, x)
	return x
}

func name(base string, w width) string { return base + w.suffix }

// fmaPeak is the ceiling microbenchmark: n iterations of one FMA on each of
// (registers − 2) independent accumulators, so that neither latency nor a
// dependency chain limits it; the caller counts the flops.
func fmaPeak(w width) {
	TEXT(name("fmaPeak", w), NOSPLIT, "func(n int)")
	Doc(fmt.Sprintf("%s runs n iterations of %d independent %d-lane FMAs.", name("fmaPeak", w), w.regs-4, w.lanes()))
	n := Load(Param("n"), GP64())
	acc := make([]reg.VecVirtual, w.regs-4)
	for i := range acc {
		acc[i] = w.new()
		VXORPS(acc[i], acc[i], acc[i])
	}
	x, y := w.new(), w.new()
	bcast(1e-9, x)
	bcast(1, y)
	TESTQ(n, n)
	JZ(LabelRef(name("fmaPeak", w) + "_done"))
	Label(name("fmaPeak", w) + "_loop")
	for _, a := range acc {
		VFMADD231PS(x, y, a)
	}
	DECQ(n)
	JNZ(LabelRef(name("fmaPeak", w) + "_loop"))
	Label(name("fmaPeak", w) + "_done")
	// Keep the accumulators live: fold them into the first one.
	for _, a := range acc[1:] {
		VADDPS(a, acc[0], acc[0])
	}
	VZEROUPPER()
	RET()
}

// kernSpec is one generated micro-kernel.
type kernSpec struct {
	level  string // Go constant of the level: AVX2 or AVX512
	w      width  // register width of the B vectors and accumulators
	suffix string // Y or Z: the level's suffix
	mr, nr int
	rowsA  bool // A rows contiguous along k (else A contiguous along the tile rows)
}

func (k kernSpec) name() string {
	lay := "c"
	if k.rowsA {
		lay = "r"
	}
	return fmt.Sprintf("kern%s%dx%d%s", lay, k.mr, k.nr, k.suffix)
}

// kernels lists every micro-kernel: per level the tile heights (the widest
// that fits the registers, then 6 and 3 rows for the bottom edge of C), the
// panel widths (2 vectors, 1 vector, and at AVX512 one 8-lane vector for a
// narrow right edge) and both layouts of A.
func kernels() []kernSpec {
	var ks []kernSpec
	for _, rowsA := range []bool{true, false} {
		for _, mr := range []int{12, 6, 3} {
			for _, nr := range []int{32, 16, 8} {
				w := avx512
				if nr == 8 {
					w = avx2
				}
				ks = append(ks, kernSpec{"AVX512", w, "Z", mr, nr, rowsA})
			}
		}
		for _, mr := range []int{6, 3} {
			for _, nr := range []int{16, 8} {
				ks = append(ks, kernSpec{"AVX2", avx2, "Y", mr, nr, rowsA})
			}
		}
	}
	return ks
}

// kernel writes the register-blocked micro-kernel C[mr×nr] += A·B: element
// (r, p) of A is a[r·rsa + p·csa], row p of B is the nr floats at b[p·ldb];
// C is row-major with leading dimension ldc; strides in floats, k ≥ 1.
//
// With rowsA (csa = 1: A row-major) the rows of A are reached from mr/3
// base pointers with index rsa·{0,1,2}; otherwise (rsa = 1: A's columns
// contiguous, as in a packed panel) from one base with displacements 4r.
// The k loop is unrolled by 4 through displacements (rowsA) or index
// registers (csa, 3·csa, ldb, 3·ldb), so that only a few pointer updates
// share the FMA ports per 4·mr·nr/lanes FMAs.
func kernel(ks kernSpec) {
	w, mr := ks.w, ks.mr
	nv := ks.nr / w.lanes()
	fn := ks.name()
	TEXT(fn, NOSPLIT, "func(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s computes C[%d×%d] += A·B from strided A and B (k ≥ 1).", fn, mr, ks.nr))
	k := Load(Param("k"), GP64())
	a0 := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	ldb := Load(Param("ldb"), GP64())
	SHLQ(U8(2), ldb)
	ldb3 := GP64()
	LEAQ(Mem{Base: ldb, Index: ldb, Scale: 2}, ldb3)
	var bases []reg.Register
	var rsa, csa, csa3 reg.Register
	if ks.rowsA {
		rsa = Load(Param("rsa"), GP64())
		SHLQ(U8(2), rsa)
		bases = []reg.Register{a0}
		for len(bases) < (mr+2)/3 {
			nb := GP64()
			LEAQ(Mem{Base: bases[len(bases)-1], Index: rsa, Scale: 2}, nb)
			ADDQ(rsa, nb)
			bases = append(bases, nb)
		}
	} else {
		csa = Load(Param("csa"), GP64())
		SHLQ(U8(2), csa)
		csa3 = GP64()
		LEAQ(Mem{Base: csa, Index: csa, Scale: 2}, csa3)
	}
	// aAddr returns the address of A(r, u) relative to the current step.
	aAddr := func(r, u int) Mem {
		if ks.rowsA {
			m := Mem{Base: bases[r/3], Disp: 4 * u}
			if r%3 > 0 {
				m.Index, m.Scale = rsa, uint8(r%3)
			}
			return m
		}
		m := Mem{Base: a0, Disp: 4 * r}
		switch u {
		case 1:
			m.Index, m.Scale = csa, 1
		case 2:
			m.Index, m.Scale = csa, 2
		case 3:
			m.Index, m.Scale = csa3, 1
		}
		return m
	}
	bAddr := func(u, v int) Mem {
		m := Mem{Base: b, Disp: v * w.bytes}
		switch u {
		case 1:
			m.Index, m.Scale = ldb, 1
		case 2:
			m.Index, m.Scale = ldb, 2
		case 3:
			m.Index, m.Scale = ldb3, 1
		}
		return m
	}
	acc := make([][]reg.VecVirtual, mr)
	for r := range acc {
		acc[r] = make([]reg.VecVirtual, nv)
		for v := range acc[r] {
			acc[r][v] = w.new()
			VXORPS(acc[r][v], acc[r][v], acc[r][v])
		}
	}
	step := func(u int) {
		bv := make([]reg.VecVirtual, nv)
		for v := range bv {
			bv[v] = w.new()
			VMOVUPS(bAddr(u, v), bv[v])
		}
		for r := 0; r < mr; r++ {
			t := w.new()
			VBROADCASTSS(aAddr(r, u), t)
			for v := range bv {
				VFMADD231PS(bv[v], t, acc[r][v])
			}
		}
	}
	advance := func(steps int) {
		if ks.rowsA {
			for _, base := range bases {
				ADDQ(U32(4*steps), base)
			}
		} else if steps == 4 {
			LEAQ(Mem{Base: a0, Index: csa, Scale: 4}, a0)
		} else {
			ADDQ(csa, a0)
		}
		if steps == 4 {
			LEAQ(Mem{Base: b, Index: ldb, Scale: 4}, b)
		} else {
			ADDQ(ldb, b)
		}
	}
	CMPQ(k, U8(4))
	JL(LabelRef(fn + "_one"))
	Label(fn + "_four")
	for u := 0; u < 4; u++ {
		step(u)
	}
	advance(4)
	SUBQ(U8(4), k)
	CMPQ(k, U8(4))
	JGE(LabelRef(fn + "_four"))
	Label(fn + "_one")
	TESTQ(k, k)
	JZ(LabelRef(fn + "_store"))
	step(0)
	advance(1)
	DECQ(k)
	JMP(LabelRef(fn + "_one"))
	Label(fn + "_store")
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(2), ldc)
	for r := 0; r < mr; r++ {
		for v := 0; v < nv; v++ {
			m := Mem{Base: c, Disp: v * w.bytes}
			VADDPS(m, acc[r][v], acc[r][v])
			VMOVUPS(acc[r][v], m)
		}
		if r+1 < mr {
			ADDQ(ldc, c)
		}
	}
	VZEROUPPER()
	RET()
}

// writeGo writes the Go side of the kernel list: the dispatch switch (all
// builds) and, for builds without the assembly, the same functions in
// portable Go.
func writeGo() {
	var d, f bytes.Buffer
	d.WriteString(genHeader + "package model\n\n" +
		"// kernelFor runs the micro-kernel of the active level for an mr×nr tile\n" +
		"// (rowsA: A row-major, csa = 1; else rsa = 1) and reports whether one exists.\n" +
		"func kernelFor(mr, nr int, rowsA bool, k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int) bool {\n" +
		"\tkey := int(level)<<16 | mr<<8 | nr<<1\n" +
		"\tif rowsA {\n\t\tkey |= 1\n\t}\n" +
		"\tswitch key {\n")
	f.WriteString(genHeader + "//go:build !amd64 || purego\n\npackage model\n\n")
	for _, ks := range kernels() {
		r := 0
		if ks.rowsA {
			r = 1
		}
		fmt.Fprintf(&d, "\tcase int(%s)<<16 | %d<<8 | %d<<1 | %d:\n\t\t%s(k, a, rsa, csa, b, ldb, c, ldc)\n",
			ks.level, ks.mr, ks.nr, r, ks.name())
		fmt.Fprintf(&f, "func %s(k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int) {\n\tkernGo(%d, %d, k, a, rsa, csa, b, ldb, c, ldc)\n}\n\n",
			ks.name(), ks.mr, ks.nr)
	}
	d.WriteString("\tdefault:\n\t\treturn false\n\t}\n\treturn true\n}\n")
	for name, buf := range map[string]*bytes.Buffer{"kernels_dispatch.go": &d, "kernels_noasm.go": &f} {
		src, err := format.Source(buf.Bytes())
		if err == nil {
			err = os.WriteFile(name, src, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "asmgen:", name, err)
			os.Exit(1)
		}
	}
}

const genHeader = "// Code generated by internal/asmgen. DO NOT EDIT.\n\n"

// dot returns Σ a_i b_i over n floats (n a positive multiple of the lane
// count), with four vector accumulators.
func dot(w width) {
	fn := name("dot", w)
	TEXT(fn, NOSPLIT, "func(a, b *float32, n int) float32")
	Pragma("noescape")
	Doc(fn + " returns Σ a_i·b_i (n a positive multiple of the lanes).")
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	n := Load(Param("n"), GP64())
	acc := []reg.VecVirtual{w.new(), w.new(), w.new(), w.new()}
	for _, v := range acc {
		VXORPS(v, v, v)
	}
	L := w.lanes()
	CMPQ(n, U32(4*L))
	JL(LabelRef(fn + "_one"))
	Label(fn + "_four")
	for u := 0; u < 4; u++ {
		t := w.new()
		VMOVUPS(Mem{Base: a, Disp: u * w.bytes}, t)
		VFMADD231PS(Mem{Base: b, Disp: u * w.bytes}, t, acc[u])
	}
	ADDQ(U32(4*w.bytes), a)
	ADDQ(U32(4*w.bytes), b)
	SUBQ(U32(4*L), n)
	CMPQ(n, U32(4*L))
	JGE(LabelRef(fn + "_four"))
	Label(fn + "_one")
	TESTQ(n, n)
	JZ(LabelRef(fn + "_sum"))
	t := w.new()
	VMOVUPS(Mem{Base: a}, t)
	VFMADD231PS(Mem{Base: b}, t, acc[0])
	ADDQ(U32(w.bytes), a)
	ADDQ(U32(w.bytes), b)
	SUBQ(U32(L), n)
	JMP(LabelRef(fn + "_one"))
	Label(fn + "_sum")
	VADDPS(acc[1], acc[0], acc[0])
	VADDPS(acc[3], acc[2], acc[2])
	VADDPS(acc[2], acc[0], acc[0])
	x := hreduce(w, acc[0], VADDPS)
	VZEROUPPER()
	Store(x, ReturnIndex(0))
	RET()
}

// elementwise emits a loop over n floats (a positive multiple of the lanes)
// in steps of one vector; body gets the byte offset register.
func elementwise(fn string, w width, n reg.Register, body func(off reg.GPVirtual)) {
	off := GP64()
	XORQ(off, off)
	SHLQ(U8(2), n)
	TESTQ(n, n)
	JZ(LabelRef(fn + "_done"))
	Label(fn + "_loop")
	body(off)
	ADDQ(U32(w.bytes), off)
	CMPQ(off, n)
	JL(LabelRef(fn + "_loop"))
	Label(fn + "_done")
}

func axpy(w width) {
	fn := name("axpy", w)
	TEXT(fn, NOSPLIT, "func(alpha float32, x, y *float32, n int)")
	Pragma("noescape")
	Doc(fn + " computes y += alpha·x (n a multiple of the lanes).")
	al := Load(Param("alpha"), XMM())
	x := Load(Param("x"), GP64())
	y := Load(Param("y"), GP64())
	n := Load(Param("n"), GP64())
	av := w.new()
	VBROADCASTSS(al, av)
	elementwise(fn, w, n, func(off reg.GPVirtual) {
		t := w.new()
		VMOVUPS(Mem{Base: y, Index: off, Scale: 1}, t)
		VFMADD231PS(Mem{Base: x, Index: off, Scale: 1}, av, t)
		VMOVUPS(t, Mem{Base: y, Index: off, Scale: 1})
	})
	VZEROUPPER()
	RET()
}

func scal(w width) {
	fn := name("scal", w)
	TEXT(fn, NOSPLIT, "func(alpha float32, x *float32, n int)")
	Pragma("noescape")
	Doc(fn + " computes x *= alpha (n a multiple of the lanes).")
	al := Load(Param("alpha"), XMM())
	x := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	av := w.new()
	VBROADCASTSS(al, av)
	elementwise(fn, w, n, func(off reg.GPVirtual) {
		t := w.new()
		VMULPS(Mem{Base: x, Index: off, Scale: 1}, av, t)
		VMOVUPS(t, Mem{Base: x, Index: off, Scale: 1})
	})
	VZEROUPPER()
	RET()
}

// vmax returns the largest of n floats; NaNs are skipped, as the scalar
// `if v > mx` loop does.
func vmax(w width) {
	fn := name("vmax", w)
	TEXT(fn, NOSPLIT, "func(x *float32, n int) float32")
	Pragma("noescape")
	Doc(fn + " returns max x_i, ignoring NaNs (n a multiple of the lanes; −Inf when empty or all NaN).")
	x := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	acc := w.new()
	VMOVUPS(constMem["neginf"], acc)
	elementwise(fn, w, n, func(off reg.GPVirtual) {
		// Go operand order: VMAXPS src2, src1, dst returns src2 when either
		// is NaN, so the accumulator goes second and a NaN element is skipped.
		t := w.new()
		VMOVUPS(Mem{Base: x, Index: off, Scale: 1}, t)
		VMAXPS(acc, t, acc)
	})
	r := hreduce(w, acc, func(ops ...Op) { VMAXPS(ops...) })
	VZEROUPPER()
	Store(r, ReturnIndex(0))
	RET()
}

// expConsts are the constants of expSum, each repeated over 16 lanes in
// read-only data so that the kernels read them as full-width memory operands
// (AVX2 has too few registers to hold them all).
var expConsts = []struct {
	name string
	bits uint32
}{
	{"log2e", math.Float32bits(1.44269504088896341)}, {"half", math.Float32bits(0.5)},
	{"ln2hi", math.Float32bits(0.693359375)}, {"ln2lo", math.Float32bits(-2.12194440e-4)},
	{"p0", math.Float32bits(1.9875691500e-4)}, {"p1", math.Float32bits(1.3981999507e-3)},
	{"p2", math.Float32bits(8.3334519073e-3)}, {"p3", math.Float32bits(4.1665795894e-2)},
	{"p4", math.Float32bits(1.6666665459e-1)}, {"p5", math.Float32bits(5.0000001201e-1)},
	{"one", math.Float32bits(1)}, {"lim", math.Float32bits(-87.3)}, {"bias", 127},
	{"neginf", math.Float32bits(float32(math.Inf(-1)))},
}

var constMem = map[string]Mem{}

func constTable() {
	tab := GLOBL("expconsts", RODATA|NOPTR)
	for i, c := range expConsts {
		for l := 0; l < 16; l++ {
			DATA(64*i+4*l, U32(c.bits))
		}
		constMem[c.name] = tab.Offset(64 * i)
	}
}

// expSum replaces x_i by e^(x_i − mx) (for x_i ≤ mx; the range reduction
// and polynomial of the scalar expNeg, evaluated with FMAs) and returns their
// sum. Inputs at or below −87.3 after the shift give 0, NaNs stay NaN.
func expSum(w width) {
	fn := name("expSum", w)
	TEXT(fn, NOSPLIT, "func(x *float32, n int, mx float32) float32")
	Pragma("noescape")
	Doc(fn + " sets x_i = e^(x_i − mx) and returns Σ x_i (n a multiple of the lanes).")
	x := Load(Param("x"), GP64())
	n := Load(Param("n"), GP64())
	mxs := Load(Param("mx"), XMM())
	mx := w.new()
	VBROADCASTSS(mxs, mx)
	c := constMem
	sum := w.new()
	VXORPS(sum, sum, sum)
	elementwise(fn, w, n, func(off reg.GPVirtual) {
		v := w.new()
		VMOVUPS(Mem{Base: x, Index: off, Scale: 1}, v)
		VSUBPS(mx, v, v) // v = x − mx
		xc := w.new()
		VMAXPS(c["lim"], v, xc) // clamp (a NaN v yields lim; restored below)
		// kf = trunc(xc·log2e − 0.5), i.e. round to nearest for xc ≤ 0.
		t := w.new()
		VMULPS(c["log2e"], xc, t)
		VSUBPS(c["half"], t, t)
		ki := w.new()
		VCVTTPS2DQ(t, ki)
		kf := w.new()
		VCVTDQ2PS(ki, kf)
		r := xc
		VFNMADD231PS(c["ln2hi"], kf, r) // r −= kf·ln2hi
		VFNMADD231PS(c["ln2lo"], kf, r) // r −= kf·ln2lo
		p := w.new()
		VMOVUPS(c["p0"], p)
		for _, k := range []string{"p1", "p2", "p3", "p4", "p5"} {
			VFMADD213PS(c[k], r, p) // p = p·r + c
		}
		r2 := w.new()
		VMULPS(r, r, r2)
		VFMADD213PS(r, r2, p) // p = p·r² + r
		VADDPS(c["one"], p, p)
		VPADDD(c["bias"], ki, ki)
		VPSLLD(U8(23), ki, ki)
		VMULPS(ki, p, p)
		// Zero where v ≤ lim (ordered), keep NaN as NaN.
		keep, nan := w.new(), w.new()
		if w.bytes == 64 {
			k1, k2 := K(), K()
			VCMPPS(U8(0x1e), c["lim"], v, k1) // v > lim (GT_OQ)
			VPMOVM2D(k1, keep)
			VCMPPS(U8(3), v, v, k2) // unordered
			VPMOVM2D(k2, nan)
		} else {
			VCMPPS(U8(0x1e), c["lim"], v, keep)
			VCMPPS(U8(3), v, v, nan)
		}
		VANDPS(keep, p, p)
		VORPS(nan, p, p)
		VMOVUPS(p, Mem{Base: x, Index: off, Scale: 1})
		VADDPS(p, sum, sum)
	})
	s := hreduce(w, sum, VADDPS)
	VZEROUPPER()
	Store(s, ReturnIndex(0))
	RET()
}

// adagrad applies state += g²; emb −= lr·g/(√state + eps) with the same
// rounding steps as the scalar Go loop (no fused multiply-add), so the two
// agree bit for bit.
func adagrad(w width) {
	fn := name("adagrad", w)
	TEXT(fn, NOSPLIT, "func(emb, state, grad *float32, n int, lr, eps float32)")
	Pragma("noescape")
	Doc(fn + " applies one Adagrad step to n floats (n a multiple of the lanes).")
	emb := Load(Param("emb"), GP64())
	st := Load(Param("state"), GP64())
	gr := Load(Param("grad"), GP64())
	n := Load(Param("n"), GP64())
	lrs := Load(Param("lr"), XMM())
	epss := Load(Param("eps"), XMM())
	lr, eps := w.new(), w.new()
	VBROADCASTSS(lrs, lr)
	VBROADCASTSS(epss, eps)
	elementwise(fn, w, n, func(off reg.GPVirtual) {
		g, s, q := w.new(), w.new(), w.new()
		VMOVUPS(Mem{Base: gr, Index: off, Scale: 1}, g)
		VMULPS(g, g, s)
		VADDPS(Mem{Base: st, Index: off, Scale: 1}, s, s)
		VMOVUPS(s, Mem{Base: st, Index: off, Scale: 1})
		VSQRTPS(s, q)
		VADDPS(eps, q, q)
		VMULPS(lr, g, g)
		VDIVPS(q, g, g) // g = lr·g / q
		e := w.new()
		VMOVUPS(Mem{Base: emb, Index: off, Scale: 1}, e)
		VSUBPS(g, e, e)
		VMOVUPS(e, Mem{Base: emb, Index: off, Scale: 1})
	})
	VZEROUPPER()
	RET()
}

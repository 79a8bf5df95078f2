package model

import (
	"os"
	"sync"
	"unsafe"
)

// Level names an instruction set the kernels can run on.
type Level int

// The kernel levels, slowest first.
const (
	// Generic is the portable Go code (scalar, register-blocked).
	Generic Level = iota
	// AVX2 uses 256-bit AVX2+FMA assembly kernels.
	AVX2
	// AVX512 uses 512-bit AVX-512F assembly kernels.
	AVX512
)

// String names the level as the CPU flag lists do.
func (l Level) String() string {
	switch l {
	case Generic:
		return "generic"
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return "Level(?)"
}

// NoSIMDEnv is the environment variable that, set to a non-empty value other
// than "0", forces the portable Go kernels. It is read once, at start-up.
const NoSIMDEnv = "TIERFLOW_NOSIMD"

// chooseLevel returns the fastest level the CPU supports unless env (the
// value of NoSIMDEnv) forces the portable code.
func chooseLevel(env string, supported []Level) Level {
	if env != "" && env != "0" {
		return Generic
	}
	best := Generic
	for _, l := range supported {
		best = max(best, l)
	}
	return best
}

// level is the active kernel level; tests switch it with SetLevel.
var level = chooseLevel(os.Getenv(NoSIMDEnv), supportedLevels())

// ActiveLevel returns the level the kernels run on.
func ActiveLevel() Level { return level }

// SupportedLevels lists the levels this CPU and build can run, Generic first.
func SupportedLevels() []Level { return append([]Level{Generic}, supportedLevels()...) }

// SetLevel makes the kernels run on l and returns the previous level; it is
// for tests and benchmarks comparing the implementations, must not race with
// running kernels, and panics on a level the CPU lacks (a programming error).
func SetLevel(l Level) Level {
	ok := false
	for _, s := range SupportedLevels() {
		ok = ok || s == l
	}
	if !ok {
		panic("model: SetLevel: unsupported level " + l.String())
	}
	prev := level
	level = l
	return prev
}

// split returns how many of n floats the 16-lane and then the 8-lane
// kernels process at the active level; the rest (< 8) is scalar Go.
func split(n int) (z, y int) {
	switch level {
	case AVX512:
		z = n &^ 15
		y = (n - z) &^ 7
	case AVX2:
		y = n &^ 7
	}
	return z, y
}

// vecDot returns Σ a_i b_i (len(b) ≥ len(a)) on the active level. Its
// summation order depends only on len(a) and the level, so it is
// deterministic.
func vecDot(a, b []float32) float32 {
	z, y := split(len(a))
	if z+y == 0 {
		return dot(a, b)
	}
	b = b[:len(a)]
	var s float32
	if z > 0 {
		s = dotZ(&a[0], &b[0], z)
	}
	if y > 0 {
		s += dotY(&a[z], &b[z], y)
	}
	for i := z + y; i < len(a); i++ {
		s += a[i] * b[i]
	}
	return s
}

// vecAxpy computes y += a·x (len(y) ≥ len(x)).
func vecAxpy(a float32, x, y []float32) {
	z, v := split(len(x))
	y = y[:len(x)]
	if z > 0 {
		axpyZ(a, &x[0], &y[0], z)
	}
	if v > 0 {
		axpyY(a, &x[z], &y[z], v)
	}
	axpy(a, x[z+v:], y[z+v:])
}

// vecScal computes x *= a.
func vecScal(a float32, x []float32) {
	z, y := split(len(x))
	if z > 0 {
		scalZ(a, &x[0], z)
	}
	if y > 0 {
		scalY(a, &x[z], y)
	}
	for i := z + y; i < len(x); i++ {
		x[i] *= a
	}
}

// vecMax returns max(init, x_i…), skipping NaNs (the scalar `if v > mx`).
func vecMax(init float32, x []float32) float32 {
	mx := init
	z, y := split(len(x))
	if z > 0 {
		mx = max(mx, vmaxZ(&x[0], z)) // neither is NaN
	}
	if y > 0 {
		mx = max(mx, vmaxY(&x[z], y))
	}
	for _, e := range x[z+y:] {
		if e > mx {
			mx = e
		}
	}
	return mx
}

// vecExpSum sets x_i = e^(x_i − mx) (x_i ≤ mx) and returns Σ x_i.
func vecExpSum(x []float32, mx float32) float32 {
	z, y := split(len(x))
	var s float32
	if z > 0 {
		s = expSumZ(&x[0], z, mx)
	}
	if y > 0 {
		s += expSumY(&x[z], y, mx)
	}
	for j := z + y; j < len(x); j++ {
		e := expNeg(x[j] - mx)
		x[j] = e
		s += e
	}
	return s
}

// Adagrad applies one Adagrad step elementwise: state += g²;
// emb −= lr·g/(√state + eps). emb, state and grad must have equal length
// (assumed, not checked). Every level rounds each step the same way, so the
// result does not depend on the level.
func Adagrad(emb, state, grad []float32, lr, eps float32) {
	z, y := split(len(emb))
	state = state[:len(emb)]
	grad = grad[:len(emb)]
	if z > 0 {
		adagradZ(&emb[0], &state[0], &grad[0], z, lr, eps)
	}
	if y > 0 {
		adagradY(&emb[z], &state[z], &grad[z], y, lr, eps)
	}
	adagradGo(emb[z+y:], state[z+y:], grad[z+y:], lr, eps)
}

// Prefetch asks the CPU to bring x's cache lines in (a no-op without the
// assembly), for rows that are about to be read at random.
func Prefetch(x []float32) {
	if level != Generic && len(x) > 0 {
		prefetch(&x[0], 4*len(x))
	}
}

// FMAPeak runs iters iterations of the peak-throughput FMA loop at the
// active level and returns the floating-point operations it performed (0 at
// Generic, which has no such loop). Time it to get this core's FMA ceiling.
func FMAPeak(iters int) float64 {
	switch level {
	case AVX2:
		fmaPeakY(iters)
		return float64(iters) * fmaPeakFlopsY
	case AVX512:
		fmaPeakZ(iters)
		return float64(iters) * fmaPeakFlopsZ
	}
	return 0
}

// Flops per iteration of the fmaPeak loops: (registers − 4) accumulators ×
// lanes × 2.
const (
	fmaPeakFlopsY = 12 * 8 * 2
	fmaPeakFlopsZ = 28 * 16 * 2
)

// mat is a read-only matrix view: element (i, p) is data[i*rs + p*cs].
type mat struct {
	data   []float32
	rs, cs int
}

// packBuf holds the packed panels and the edge tile of one GEMM call.
type packBuf struct {
	a, b, tile []float32
	panels     []panel
	idx        []int32
}

// panel is one column panel of B in a kc block: columns j..j+nb of C, read
// as rows of w floats at b with stride ldb.
type panel struct {
	j, w, nb int
	b        *float32
	ldb      int
}

var packPool = sync.Pool{New: func() any { return new(packBuf) }}

// kc is the depth of one block: a kc×32 B panel (32 KiB at kc = 256) stays
// in L1/L2 while the micro-kernel streams the rows of A against it.
const kc = 256

// tileShape returns the tallest micro-tile and the full panel width at the
// active level.
func tileShape() (mr, nr int) {
	if level == AVX512 {
		return 12, 32
	}
	return 6, 16
}

// panelWidth returns the width of the column panel that starts rem columns
// before the right edge: a full nr, or the narrowest kernel width (nr/2,
// 8) that covers rem.
func panelWidth(rem, nr int) int {
	w := nr
	for w/2 >= 8 && rem <= w/2 {
		w /= 2
	}
	return w
}

// PackNeed is what one pooled packing buffer (packBuf) grows to over the
// products it serves, in elements of its arrays: the memory estimator of
// realrun/gnn/memory sizes the process's GEMM buffers with it, so the rule
// sits beside gemm, which it follows.
type PackNeed struct {
	B, A, Panels, Idx int
	// Tile is the edge tile's elements (mr×nr once any product ran).
	Tile int
}

// PanelBytes is the size of one entry of packBuf's panel list, and
// PackBufBytes of packBuf itself.
const (
	PanelBytes   = int(unsafe.Sizeof(panel{}))
	PackBufBytes = int(unsafe.Sizeof(packBuf{}))
)

// Add grows p to cover one product C (m×n) += A·B of depth k, with B
// read by columns (the NT products, which gemm gathers into panels) when
// bColumns; nothing at the Generic level, which packs nothing.
func (p *PackNeed) Add(m, n, k int, bColumns bool) {
	if level == Generic || m <= 0 || n <= 0 || k <= 0 {
		return
	}
	mr, nr := tileShape()
	p.Tile = mr * nr
	kb := min(kc, k)
	np, need, idx := 0, 0, 0
	for j := 0; j < n; j += nr {
		w := panelWidth(n-j, nr)
		np++
		packed := n-j < w // a ragged last panel, in every layout
		if bColumns && k != 1 {
			packed = true // B read by columns: gathered into panels
			idx = max(idx, w)
		}
		if packed {
			need += w * kb
		}
	}
	p.B, p.Panels, p.Idx = max(p.B, need), max(p.Panels, np), max(p.Idx, idx)
	// A's last row panel is packed when the tiles (heights mr, mr/2, …, 3)
	// leave 1 or 2 rows.
	if m%3 != 0 {
		p.A = max(p.A, 3*kb)
	}
}

// tileRows returns the rows of the next tile for rem remaining rows: the
// largest kernel height ≤ rem, or 3 (padded) for the last one or two rows.
func tileRows(rem, mr int) int {
	for h := mr; h >= 3; h /= 2 {
		if h <= rem {
			return h
		}
	}
	return 3
}

// gatherPanel packs w columns (nb real ones) of a column-contiguous B block
// starting at src (column c at src[idx[c]]) as kb rows of w floats.
func gatherPanel(dst []float32, src *float32, idx []int32, kb, w int) {
	L := 8
	if level == AVX512 && w >= 16 {
		L = 16
	}
	for v := 0; v < w; v += L {
		if L == 16 {
			gatherColsZ(&dst[v], w, src, &idx[v], kb)
		} else {
			gatherColsY(&dst[v], w, src, &idx[v], kb)
		}
	}
}

// gemm computes C (m×n, row-major with leading dimension ldc) += A·B for the
// views A (m×k) and B (k×n) with the SIMD micro-kernel, in blocks of kc
// along k. The kernel reads A in place through its strides (only a ragged
// last row panel is packed, zero-padded) and B in place when its rows are
// contiguous (only a ragged last column panel is packed); otherwise B is
// packed into panels of nr columns (nr/2 for a narrow last one). Tiles that
// overhang C go through a small buffer. Not for Generic.
func gemm(m, n, k int, A, B mat, C []float32, ldc int, pb *packBuf) {
	if m <= 0 || n <= 0 || k <= 0 {
		return
	}
	mr, nr := tileShape()
	pb.tile = grow(pb.tile, mr*nr)
	for pc := 0; pc < k; pc += kc {
		kb := min(kc, k-pc)
		pb.panels = pb.panels[:0]
		off := 0
		for j := 0; j < n; j += nr {
			w := panelWidth(n-j, nr)
			pb.panels = append(pb.panels, panel{j: j, w: w, nb: min(w, n-j)})
			if B.cs != 1 || n-j < w {
				off += w * kb
			}
		}
		pb.b = grow(pb.b, off)
		off = 0
		for q := range pb.panels {
			p := &pb.panels[q]
			if B.cs == 1 && p.nb == p.w {
				p.b, p.ldb = &B.data[pc*B.rs+p.j], B.rs
				continue
			}
			dst := pb.b[off : off+p.w*kb]
			if B.rs == 1 && p.w*B.cs < 1<<31 {
				// Column-contiguous B (the NT product): gather; the columns
				// past nb read column 0 and only feed discarded tile columns.
				pb.idx = pb.idx[:0]
				for c := 0; c < p.w; c++ {
					pb.idx = append(pb.idx, int32(min(c, p.nb-1)*B.cs))
				}
				gatherPanel(dst, &B.data[pc+p.j*B.cs], pb.idx, kb, p.w)
			} else {
				packB(dst, B, pc, kb, p.j, p.nb, p.w)
			}
			p.b, p.ldb = &dst[0], p.w
			off += p.w * kb
		}
		for i := 0; i < m; {
			h := tileRows(m-i, mr)
			mb := min(h, m-i)
			a, rsa, csa := (*float32)(nil), A.rs, A.cs
			if mb == h && (A.cs == 1 || A.rs == 1) {
				a = &A.data[i*A.rs+pc*A.cs]
			} else {
				pb.a = grow(pb.a, h*kb)
				packA(pb.a, A, i, mb, pc, kb, h)
				a, rsa, csa = &pb.a[0], 1, h
			}
			rowsA := csa == 1 && rsa != 1
			for _, p := range pb.panels {
				if mb == h && p.nb == p.w {
					kernelFor(h, p.w, rowsA, kb, a, rsa, csa, p.b, p.ldb, &C[i*ldc+p.j], ldc)
					continue
				}
				t := pb.tile[:h*p.w]
				clear(t)
				kernelFor(h, p.w, rowsA, kb, a, rsa, csa, p.b, p.ldb, &t[0], p.w)
				for r := 0; r < mb; r++ {
					row := C[(i+r)*ldc+p.j : (i+r)*ldc+p.j+p.nb]
					for c, v := range t[r*p.w : r*p.w+p.nb] {
						row[c] += v
					}
				}
			}
			i += mb
		}
	}
}

// packA writes rows i0..i0+mb of A, columns p0..p0+kb, as kb columns of mr
// floats (dst[p*mr + r]), zero-padding rows mb..mr.
func packA(dst []float32, A mat, i0, mb, p0, kb, mr int) {
	if mb < mr {
		clear(dst[:kb*mr])
	}
	if A.rs == 1 { // columns of A are contiguous: copy mb floats per p
		for p := 0; p < kb; p++ {
			o := (p0+p)*A.cs + i0
			copy(dst[p*mr:p*mr+mb], A.data[o:o+mb])
		}
		return
	}
	for r := 0; r < mb; r++ {
		o := (i0+r)*A.rs + p0*A.cs
		if A.cs == 1 {
			src := A.data[o : o+kb]
			d := dst[r : r+(kb-1)*mr+1]
			for p, v := range src {
				d[p*mr] = v
			}
			continue
		}
		for p := 0; p < kb; p++ {
			dst[p*mr+r] = A.data[o+p*A.cs]
		}
	}
}

// packB writes rows p0..p0+kb of B, columns j0..j0+nb, as kb rows of w
// floats (dst[p*w + c]), zero-padding columns nb..w: packA of Bᵀ.
func packB(dst []float32, B mat, p0, kb, j0, nb, w int) {
	packA(dst, mat{B.data, B.cs, B.rs}, j0, nb, p0, kb, w)
}

// sgemm runs portable at Generic, else gemm on the views a and b with a
// pooled packing buffer; C is m×n row-major.
func sgemm(m, n, k int, A, B, C []float32, portable func(m, n, k int, A, B, C []float32), a, b mat) {
	if level == Generic {
		portable(m, n, k, A, B, C)
		return
	}
	pb := packPool.Get().(*packBuf)
	gemm(m, n, k, a, b, C, n, pb)
	packPool.Put(pb)
}

package memory

import (
	"runtime"

	"github.com/tierflow/tierflow/realrun/model"
)

// The CPU GEMM kernels (realrun/model) take a packing buffer from a
// process-wide pool for every product: the right-hand matrix, packed in
// column panels, one kc-deep block at a time (all of it for the NT
// products, which read it by columns; only a ragged last panel for NN and
// TN), a ragged last row panel of the left-hand one, an edge tile, the
// panel list and a column index. Each buffer grows to the largest product
// it served and stays in the pool from step to step, one per processor
// that runs products at once. This file follows that: gemmCall records a
// product, poolBytes sizes the buffers that serve a step's products.

// The kernels' blocking (realrun/model/simd.go).
const kcDepth = 256

// gemmKind is which operand layout a product has.
type gemmKind uint8

const (
	gemmNT gemmKind = iota // C += A·Bᵀ: B read by columns, packed whole
	gemmNN                 // C += A·B
	gemmTN                 // C += Aᵀ·B
)

// gemmCall is one product C (m×n) += op(A) (m×k) · op(B) (k×n), with m
// the rows of the largest part a pass hands one goroutine.
type gemmCall struct {
	kind    gemmKind
	m, n, k int
}

// tileShape is realrun/model's micro-tile at the active level: mr rows,
// nr columns; ok false at the portable level, which packs nothing.
func tileShape() (mr, nr int, ok bool) {
	switch model.ActiveLevel() {
	case model.AVX512:
		return 12, 32, true
	case model.AVX2:
		return 6, 16, true
	}
	return 0, 0, false
}

// panelWidth is realrun/model's: the width of the column panel that
// starts rem columns before the right edge.
func panelWidth(rem, nr int) int {
	w := nr
	for w/2 >= 8 && rem <= w/2 {
		w /= 2
	}
	return w
}

// packNeed is what one pooled buffer grows to over a step's products:
// its capacities in elements.
type packNeed struct {
	b, a, panels, idx int
	tile              bool
}

// add grows the need to cover one product.
func (p *packNeed) add(c gemmCall, mr, nr int) {
	if c.m <= 0 || c.n <= 0 || c.k <= 0 {
		return
	}
	p.tile = true
	kb := min(kcDepth, c.k)
	np, need, idx := 0, 0, 0
	for j := 0; j < c.n; j += nr {
		w := panelWidth(c.n-j, nr)
		np++
		packed := c.n-j < w // a ragged last panel, in every layout
		if c.kind == gemmNT && c.k != 1 {
			packed = true // B read by columns: gathered into panels
			idx = max(idx, w)
		}
		if packed {
			need += w * kb
		}
	}
	p.b, p.panels, p.idx = max(p.b, need), max(p.panels, np), max(p.idx, idx)
	// A's last row panel is packed when the greedy tiles (heights mr,
	// mr/2, …, 3) leave 1 or 2 rows.
	if c.m%3 != 0 {
		p.a = max(p.a, 3*kb)
	}
}

// panelBytes is the size of realrun/model's panel struct (three ints, a
// pointer and an int).
const panelBytes = 40

// poolBytes returns the bytes of buffers pooled packing buffers grown to
// serve calls: each its struct, its arrays, and the panel list and
// column index append grew to.
func poolBytes(calls []gemmCall, buffers int) int64 {
	mr, nr, ok := tileShape()
	if !ok || len(calls) == 0 {
		return 0
	}
	var p packNeed
	for _, c := range calls {
		p.add(c, mr, nr)
	}
	one := roundup(120, true) + f32(p.b) + f32(p.a) // new(packBuf)
	if p.tile {
		one += f32(mr * nr)
	}
	var c int64
	growAppend(&c, int64(p.panels), panelBytes, true)
	one += roundup(c*panelBytes, true)
	c = 0
	growAppend(&c, int64(p.idx), 4, false)
	one += roundup(4*c, false)
	return int64(buffers) * one
}

// gemmBuffers is how many packing buffers a step's products keep in the
// pool: one per goroutine running a product at once, at most one per
// processor.
func gemmBuffers(workers int) int { return max(1, min(workers, runtime.GOMAXPROCS(0))) }

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
// that runs products at once. gemmCall records a product; poolBytes sizes
// the buffers that serve a step's products by realrun/model's own rule
// (model.PackNeed, beside the kernels it follows).

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

// poolBytes returns the bytes of buffers pooled packing buffers grown to
// serve calls: each its struct, its arrays, and the panel list and
// column index append grew to.
func poolBytes(calls []gemmCall, buffers int) int64 {
	var p model.PackNeed
	for _, c := range calls {
		p.Add(c.m, c.n, c.k, c.kind == gemmNT)
	}
	if p.Tile == 0 {
		return 0
	}
	one := roundup(int64(model.PackBufBytes), true) + f32(p.B) + f32(p.A) + f32(p.Tile)
	var c int64
	growAppend(&c, int64(p.Panels), int64(model.PanelBytes), true)
	one += roundup(c*int64(model.PanelBytes), true)
	c = 0
	growAppend(&c, int64(p.Idx), 4, false)
	one += roundup(4*c, false)
	return int64(buffers) * one
}

// gemmBuffers is how many packing buffers a step's products keep in the
// pool: one per goroutine running a product at once, at most one per
// processor.
func gemmBuffers(workers int) int { return max(1, min(workers, runtime.GOMAXPROCS(0))) }

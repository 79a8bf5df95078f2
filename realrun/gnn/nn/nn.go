// Package nn holds the GNN layers (GraphSAGE mean, pool and LSTM
// aggregators, multi-head GAT, linear), their forward and backward passes
// on the CPU kernels of realrun/model, the models built from them,
// cross-entropy and Adam.
package nn

import (
	"math/rand/v2"

	"github.com/tierflow/tierflow/realrun/gnn/block"
)

// Param is one learnable tensor and its gradient, both row-major.
type Param struct {
	Name  string
	Shape []int
	W, G  []float32
}

// Layer maps a block's source rows to its destination rows.
type Layer interface {
	// Forward returns the destination rows (b.NumDst × OutDim()) from
	// the source rows in (b.NumSrc() × InDim()), keeping what Backward
	// needs. rng draws the layer's own random choices, if any (nil when
	// train is false).
	Forward(b *block.Block, in []float32, train bool, rng *rand.Rand) []float32
	// Backward takes the gradient of the loss with respect to the last
	// Forward's output, adds the parameters' gradients to their G, and
	// returns the gradient with respect to its input (nil when an
	// InputGradSetter's is turned off).
	Backward(dOut []float32) []float32
	Params() []*Param
	InDim() int
	OutDim() int
}

// Package memory estimates, from a batch's shape alone, the bytes one GNN
// training step holds for a batch or micro-batch (Betty §4.4, by its
// categories), measures what the engine really allocates for the same
// step, and picks the fewest micro-batches whose largest fits a budget.
package memory

import (
	"errors"
	"fmt"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
	"github.com/tierflow/tierflow/realrun/gnn/split"
)

// STUB: owned by the memory helper, who replaces this file.

// Estimate is one training step's bytes by Betty's categories (§4.4).
type Estimate struct {
	// Params: the model's parameters; Features: the input nodes'
	// features; Labels: the output nodes' labels; Blocks: the blocks'
	// ids; Hidden: the layers' outputs and what their activations and
	// dropout keep; Aggregator: the aggregators' intermediates (the
	// LSTM's per step, GAT's attention, pool's projections and argmax);
	// Gradients: the parameters' gradients and the backward pass's
	// buffers; Optimizer: Adam's two moments.
	Params, Features, Labels, Blocks, Hidden, Aggregator, Gradients, Optimizer int64
}

// Total is the sum of the categories.
func (e Estimate) Total() int64 {
	return e.Params + e.Features + e.Labels + e.Blocks + e.Hidden + e.Aggregator + e.Gradients + e.Optimizer
}

// Batch estimates, from b's shape alone, the bytes one training step of a
// model of spec holds for b.
func Batch(spec nn.Spec, b *block.Batch) Estimate { panic("memory: not built yet") }

// Measure returns the bytes the engine allocates for one training step of
// a fresh model of spec on b (its features and labels from g): the
// model's parameters, gradients and Adam state, the gathered features and
// labels, b's blocks, and every buffer the forward and backward passes
// and the optimiser step allocate.
func Measure(spec nn.Spec, g *data.Graph, b *block.Batch, seed uint64) (int64, error) {
	return 0, errors.New("memory: not built yet")
}

// Plan is a memory-aware split of one batch.
type Plan struct {
	// K is the micro-batches, Parts their output positions (split.Split).
	K     int
	Parts [][]int32
	// Whole is the unsplit batch's estimate, Peak the largest
	// micro-batch's.
	Whole, Peak Estimate
}

// BudgetError is a budget that no split meets: Need is the least the
// largest micro-batch can take (one output node a micro-batch).
type BudgetError struct{ Budget, Need int64 }

func (e *BudgetError) Error() string {
	return fmt.Sprintf("a memory budget of %d bytes is too small: the smallest micro-batch of this batch needs %d", e.Budget, e.Need)
}

// Fit returns the split of b into the fewest micro-batches whose largest
// fits budget by Batch's estimate (Betty §4.4.3: try K, then K+1, …).
func Fit(spec nn.Spec, b *block.Batch, budget int64, m split.Method, seed uint64) (Plan, error) {
	return Plan{}, errors.New("memory: not built yet")
}

// Package memory estimates, from a batch's shape alone, the bytes one GNN
// training step holds for a batch or micro-batch (Betty §4.4, by its
// categories), measures what the engine really allocates for the same
// step, and picks the fewest micro-batches whose largest fits a budget.
package memory

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
)

// Estimate is one training step's bytes by Betty's categories (§4.4).
type Estimate struct {
	// Params: the model's parameters; Features: the input nodes'
	// features; Labels: the output nodes' labels; Blocks: the blocks'
	// ids; Hidden: the layers' outputs (the logits too) and what their
	// activations and dropout keep (h, k); Aggregator: the aggregators'
	// forward intermediates (sage-mean's aggregates or projected source
	// rows, pool's projections, aggregates and argmax, the LSTM's
	// sequence layout and per-step gates and states, GAT's projections
	// and attention); Gradients: the parameters' gradients and every
	// buffer of the backward pass (input gradients, dh, the aggregators'
	// gradients, the edges by source, the workers' partial sums, the
	// logits' gradient); Optimizer: Adam's two moments. Each array
	// counts at the bytes the Go allocator gives it (its size class, or
	// whole 8 KiB pages above 32 KiB; append's growth on the way).
	Params, Features, Labels, Blocks, Hidden, Aggregator, Gradients, Optimizer int64
	// Scratch is what none of Betty's categories holds: the model's and
	// the passes' small objects (structs, names, closures).
	Scratch int64
	// Pool is not part of Total: the packing buffers of the GEMM kernels
	// (realrun/model) the step needs, one per processor running products
	// at once, which the process keeps from step to step; Measure warms
	// them before it counts. Fit adds them to Total.
	Pool int64
}

// Total is the sum of the categories but Pool: what Measure counts.
func (e Estimate) Total() int64 {
	return e.Params + e.Features + e.Labels + e.Blocks + e.Hidden + e.Aggregator + e.Gradients + e.Optimizer + e.Scratch
}

// String lists the categories in MB.
func (e Estimate) String() string {
	mb := func(v int64) float64 { return float64(v) / 1e6 }
	return fmt.Sprintf("total %.2f MB: params %.2f, features %.2f, labels %.2f, blocks %.2f, hidden %.2f, aggregator %.2f, gradients %.2f, optimizer %.2f, scratch %.2f",
		mb(e.Total()), mb(e.Params), mb(e.Features), mb(e.Labels), mb(e.Blocks), mb(e.Hidden), mb(e.Aggregator), mb(e.Gradients), mb(e.Optimizer), mb(e.Scratch))
}

// maxSteps is the most steps Measure runs.
const maxSteps = 4

// measureMu keeps two Measures from overlapping: TotalAlloc counts every
// goroutine's allocations.
var measureMu sync.Mutex

// Measure returns the bytes the engine allocates for one training step of
// a fresh model of spec on b (its features and labels from g): the
// model's parameters, gradients and Adam state, the gathered features and
// labels, b's blocks, and every buffer the forward and backward passes
// and the optimiser step allocate.
//
// It runs the step as the trainer does — nn.New, nn.NewAdam, the features
// of b.Input() and labels of b.Output() copied into new slices,
// TrainStep(b, x, y, 1, rng), Adam's Step — on the layers' nn.Workers
// goroutines, with the garbage collector off, and counts the growth of
// runtime.MemStats.TotalAlloc (every heap object, at the size the
// allocator gives it). b's own blocks are added at the bytes blocks of
// their length take (their capacity is how the sampler or builder that
// filled them grew its buffers, not the batch's shape). The
// step runs up to maxSteps times (see below), so the process holds that
// many steps' arrays for a moment. The count is exact only while no
// other goroutine of the program allocates:
// Measure calls do not overlap each other, but the caller keeps the rest
// of the program quiet.
func Measure(spec nn.Spec, g *data.Graph, b *block.Batch, seed uint64) (int64, error) {
	if err := spec.Check(); err != nil {
		return 0, fmt.Errorf("memory.Measure: %w", err)
	}
	if err := checkBatch(spec, b); err != nil {
		return 0, fmt.Errorf("memory.Measure: %w", err)
	}
	if g.F != spec.In {
		return 0, fmt.Errorf("memory.Measure: the graph has %d features, the model reads %d", g.F, spec.In)
	}
	n := int32(g.N())
	for _, v := range b.Input() {
		if v < 0 || v >= n {
			return 0, fmt.Errorf("memory.Measure: input node %d is not in the graph's %d nodes", v, n)
		}
	}
	for _, v := range b.Output() {
		if y := g.Y[v]; y < 0 || int(y) >= spec.Classes {
			return 0, fmt.Errorf("memory.Measure: output node %d has label %d, the model has %d classes", v, y, spec.Classes)
		}
	}
	measureMu.Lock()
	defer measureMu.Unlock()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.GC()
	// Steps run until two in a row allocate the same: the first warms
	// what the process keeps between steps (realrun/model's pooled GEMM
	// packing buffers, Estimate.Pool; the runtime's idle goroutines);
	// a later one may still grow the pool, when the step's goroutine
	// runs on a processor whose share of the pool is still empty. The
	// least count is the step's own.
	var total int64 = -1
	prev := int64(-1)
	for i := 0; i < maxSteps; i++ {
		rng := rand.New(rand.NewPCG(seed, 0x6d656d))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := step(spec, g, b, seed, rng); err != nil {
			return 0, err
		}
		runtime.ReadMemStats(&after)
		n := int64(after.TotalAlloc - before.TotalAlloc)
		if i > 0 && (total < 0 || n < total) {
			total = n
		}
		if n == prev {
			break
		}
		prev = n
	}
	for i := range b.Blocks {
		blk := &b.Blocks[i]
		total += i32(len(blk.Src)) + i32(len(blk.Ptr)) + i32(len(blk.Nbr))
	}
	return total, nil
}

// step is one training step of a fresh model, as the trainer runs it.
func step(spec nn.Spec, g *data.Graph, b *block.Batch, seed uint64, rng *rand.Rand) error {
	m, err := nn.New(spec, seed)
	if err != nil {
		return fmt.Errorf("memory.Measure: %w", err)
	}
	adam := nn.NewAdam(m.Params(), 0.01)
	x := g.Gather(nil, b.Input(), 1) // one goroutine: the same one allocation
	y := g.Labels(nil, b.Output())
	m.TrainStep(b, x, y, 1, rng)
	adam.Step(m.Params())
	return nil
}

// checkBatch reports a batch whose shape does not fit the model.
func checkBatch(spec nn.Spec, b *block.Batch) error {
	if b == nil || len(b.Blocks) != spec.Layers {
		n := 0
		if b != nil {
			n = len(b.Blocks)
		}
		return fmt.Errorf("a batch of %d blocks for a model of %d layers", n, spec.Layers)
	}
	for l := range b.Blocks {
		blk := &b.Blocks[l]
		if blk.NumDst < 0 || blk.NumDst > len(blk.Src) || len(blk.Ptr) != blk.NumDst+1 || int(blk.Ptr[blk.NumDst]) != len(blk.Nbr) {
			return fmt.Errorf("block %d is malformed: %d destinations, %d sources, %d offsets, %d edges", l, blk.NumDst, len(blk.Src), len(blk.Ptr), len(blk.Nbr))
		}
		if l > 0 && b.Blocks[l-1].NumDst != len(blk.Src) {
			return fmt.Errorf("block %d has %d sources, block %d %d destinations", l, len(blk.Src), l-1, b.Blocks[l-1].NumDst)
		}
	}
	return nil
}

package memory

import (
	"fmt"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
	"github.com/tierflow/tierflow/realrun/gnn/split"
)

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

// Need is the bytes a step with estimate e needs: its Total and the GEMM
// kernels' packing buffers (Pool).
func (e Estimate) Need() int64 { return e.Total() + e.Pool }

// splitter and micro are split.Split and a Builder's Micro (tests
// replace them).
var (
	splitter = split.Split
	micro    = func(bd *split.Builder, b *block.Batch, outs []int32, into *block.Batch) *block.Batch {
		return bd.Micro(b, outs, into)
	}
)

// Fit returns the split of b into the fewest micro-batches whose largest
// fits budget by Batch's estimate (its Need: Total and Pool), Betty
// §4.4.3: estimate each micro-batch of a K-way split, and try K+1 while
// the largest does not fit. K starts at the least the estimate allows:
// the model's parameters, gradients, Adam state and small objects are
// paid by every micro-batch, the rest (features, blocks, activations,
// intermediates, which the micro-batches share out, with redundancy
// only adding to them) at best divides by K; when that K fits at once,
// Fit tries fewer. A batch that fits whole is one part. K goes no
// further than the output nodes; a budget below the largest
// one-output micro-batch (bounded below by the output with the most
// sampled neighbours in the last block) is a *BudgetError.
func Fit(spec nn.Spec, b *block.Batch, budget int64, m split.Method, seed uint64) (Plan, error) {
	if err := spec.Check(); err != nil {
		return Plan{}, fmt.Errorf("memory.Fit: %w", err)
	}
	if err := checkBatch(spec, b); err != nil {
		return Plan{}, fmt.Errorf("memory.Fit: %w", err)
	}
	n := len(b.Output())
	if n == 0 {
		return Plan{}, fmt.Errorf("memory.Fit: the batch has no output nodes")
	}
	whole := Batch(spec, b)
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	if whole.Need() <= budget {
		return Plan{K: 1, Parts: [][]int32{all}, Whole: whole, Peak: whole}, nil
	}
	bd := split.NewBuilder()
	var mb block.Batch
	// The least any split can reach: the micro-batch of the output that
	// reads the most rows of the last block.
	last := &b.Blocks[len(b.Blocks)-1]
	top := 0
	for i := 1; i < n; i++ {
		if last.Ptr[i+1]-last.Ptr[i] > last.Ptr[top+1]-last.Ptr[top] {
			top = i
		}
	}
	if one := Batch(spec, micro(bd, b, []int32{int32(top)}, &mb)).Need(); budget < one {
		return Plan{}, &BudgetError{Budget: budget, Need: one}
	}

	try := func(k int) (Plan, error) {
		parts, err := splitter(b, k, m, seed)
		if err != nil {
			return Plan{}, fmt.Errorf("memory.Fit: splitting %d ways: %w", k, err)
		}
		p := Plan{K: k, Parts: parts, Whole: whole}
		for _, part := range parts {
			if e := Batch(spec, micro(bd, b, part, &mb)); e.Need() > p.Peak.Need() {
				p.Peak = e
			}
		}
		return p, nil
	}
	fixed := 2*whole.Params + whole.Optimizer + whole.Scratch // parameters, their gradients, Adam, small objects
	k := n
	if room := budget - fixed; room > 0 {
		k = int(min(int64(n), max(2, (whole.Need()-fixed+room-1)/room)))
	}
	p, err := try(k)
	if err != nil {
		return Plan{}, err
	}
	if p.Peak.Need() <= budget {
		for k > 2 { // the bound was met at once: fewer may fit too
			q, err := try(k - 1)
			if err != nil {
				return Plan{}, err
			}
			if q.Peak.Need() > budget {
				break
			}
			p, k = q, k-1
		}
		return p, nil
	}
	for k < n {
		k++
		if p, err = try(k); err != nil {
			return Plan{}, err
		}
		if p.Peak.Need() <= budget {
			return p, nil
		}
	}
	return Plan{}, &BudgetError{Budget: budget, Need: p.Peak.Need()}
}

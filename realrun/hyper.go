package realrun

import (
	"fmt"

	"github.com/tierflow/tierflow/realrun/micro"
	"github.com/tierflow/tierflow/workload"
)

// Hyper are the training hyper-parameters every engine takes.
type Hyper struct {
	// Training is the shape the simulator models: score function,
	// dimension, batch, negatives and chunk size.
	workload.Training
	DegreeFrac float64
	LR         float32
	Workers    int
	// Micro, when on, trains every batch as a whole — gradients summed
	// over the batch, one Adagrad step per row at its end — split into
	// the fewest micro-batches that fit its memory budget (the CPU
	// engine's micro-batching).
	Micro MicroBatching
	// TF32 runs the CUDA engine's cuBLAS products on TF32 tensor cores
	// (inputs rounded to 10-bit mantissas, FP32 accumulation); the CPU
	// engine computes in FP32 and refuses it (job).
	TF32 bool
	// Duplicates is how the chunk step updates a row that occurs more
	// than once in one chunk ("": DefaultDuplicates); the batch step
	// (Micro) always sums over its batch.
	Duplicates Duplicates
}

// Duplicates is the chunk step's rule for a row that a chunk touches more
// than once (an entity that is the source of two edges, or a relation
// every edge of the chunk shares): every engine follows the same rule.
type Duplicates string

const (
	// DuplicatesEach takes one Adagrad step per occurrence, each with
	// that occurrence's gradient, in the order of the chunk: edge by edge
	// (an edge's source before its destination), then the negatives, and
	// relations edge by edge. Every gradient is computed against the
	// parameters the chunk started from.
	DuplicatesEach Duplicates = "each"
	// DuplicatesSum takes one Adagrad step per distinct row with the sum
	// of its occurrences' gradients (PyTorch-BigGraph's optimizer within a
	// batch, and what a GPU does without serialising a row's updates).
	DuplicatesSum Duplicates = "sum"
	// DefaultDuplicates is the rule when none is given.
	DefaultDuplicates = DuplicatesEach
)

// DuplicateRules lists the rules.
var DuplicateRules = []Duplicates{DuplicatesEach, DuplicatesSum}

// Rule is h.Duplicates, or DefaultDuplicates when unset.
func (h Hyper) Rule() Duplicates {
	if h.Duplicates == "" {
		return DefaultDuplicates
	}
	return h.Duplicates
}

// ParseDuplicates reads a rule's name ("" is the default).
func ParseDuplicates(s string) (Duplicates, error) {
	if s == "" {
		return DefaultDuplicates, nil
	}
	for _, r := range DuplicateRules {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("unknown duplicate-row rule %q (each or sum)", s)
}

// MicroBatching trains each batch as one step split into micro-batches
// (Betty §4): every chunk's gradient is computed against the parameters
// the batch started from, summed per row over the whole batch, and one
// Adagrad step per touched row is taken after the last micro-batch — the
// same update however the batch is split. The split is the fewest
// micro-batches whose estimated peak (workload.EstimateBatch) fits Budget,
// or Count when set.
//
// Equality with the unsplit batch: the per-row gradient sums differ only in
// the order of float32 additions (a row's partial sums are added
// micro-batch by micro-batch), so embeddings agree to float32 rounding,
// not bitwise; TestMicroBatchingEqualsWholeBatch bounds the difference.
// This is a different update from the default path, which steps Adagrad
// after every chunk (as PBG's CPU trainer); micro-batching with one
// micro-batch is the GPU systems' batch step (Marius).
type MicroBatching struct {
	// Budget is the device memory one batch may take, in bytes.
	Budget int64
	// Count fixes the number of micro-batches (0: the fewest that fit).
	Count int
	// Split is how edges are dealt to micro-batches ("": micro.REG).
	Split micro.Method
	// Seed drives the split.
	Seed int64
}

// On reports whether micro-batching is configured.
func (m MicroBatching) On() bool { return m.Budget > 0 || m.Count > 0 }

// Check reports whether the budget can hold the smallest micro-batch (one
// edge with its chunk's negatives); any batch can then be split to fit.
func (m MicroBatching) Check(h Hyper) error {
	if m.Count < 0 || m.Budget < 0 {
		return fmt.Errorf("micro-batching: count %d and budget %d must not be negative", m.Count, m.Budget)
	}
	if m.Split != "" {
		if _, err := micro.ParseMethod(string(m.Split)); err != nil {
			return fmt.Errorf("micro-batching: %w", err)
		}
	}
	if m.Budget == 0 {
		return nil
	}
	one := workload.BatchShape{Model: h.Model, Dim: h.Dim, Edges: 1, Chunks: 1, ChunkEdges: 1, Negatives: h.Negatives, Rows: int64(2 + h.Negatives), Relations: 1, Concurrent: 1}
	if need := workload.EstimateBatch(one).Total; need > m.Budget {
		return fmt.Errorf("micro-batching: a budget of %d bytes cannot hold one edge with its %d negatives at d=%d (%d bytes)", m.Budget, h.Negatives, h.Dim, need)
	}
	return nil
}

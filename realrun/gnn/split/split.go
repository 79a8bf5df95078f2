// Package split cuts a sampled GNN mini-batch into micro-batches by its
// output nodes (Betty §4.3): range, random, METIS on the batch's graph and
// REG, METIS on the redundancy-embedded graph whose edge weights count
// the input rows two output nodes share; each micro-batch keeps every
// neighbour the batch sampled, so the micro-batches together compute
// exactly what the batch does.
package split

import (
	"errors"

	"github.com/tierflow/tierflow/realrun/gnn/block"
)

// STUB: owned by the split helper, who replaces this file.

// Method is a way to split a batch's output nodes.
type Method string

// The split methods.
const (
	Range  Method = "range"
	Random Method = "random"
	METIS  Method = "metis"
	REG    Method = "reg"
)

// Methods lists the split methods, the default first.
var Methods = []Method{REG, Range, Random, METIS}

// ParseMethod returns the named method.
func ParseMethod(s string) (Method, error) { return "", errors.New("split: not built yet") }

// Split assigns the output nodes of b — positions 0…len(b.Output())-1 —
// to k micro-batches: parts[i] lists positions in ascending order, every
// position is in exactly one part, and no part is empty (1 ≤ k ≤ the
// output nodes). seed drives Random and METIS's own seed.
func Split(b *block.Batch, k int, m Method, seed uint64) ([][]int32, error) {
	return nil, errors.New("split: not built yet")
}

// Builder builds micro-batches, reusing its scratch between calls. A
// Builder is not safe for concurrent use.
type Builder struct{}

// NewBuilder returns a Builder.
func NewBuilder() *Builder { return &Builder{} }

// Micro returns the micro-batch of b whose output nodes are those at
// positions outs (ascending) of b.Output(): its own stack of blocks, in
// which every destination keeps the neighbours b sampled for it, in the
// same order, and reads the rows it reads in b; its blocks obey
// block.Batch's invariants (a layer's destinations lead its sources, in
// the order of the next block's sources). into, when not nil, is reused.
func (bd *Builder) Micro(b *block.Batch, outs []int32, into *block.Batch) *block.Batch {
	panic("split: not built yet")
}

// Stats is what a split costs in input rows.
type Stats struct {
	// K is the number of micro-batches; Inputs the batch's own input
	// nodes; MicroInputs each micro-batch's input nodes.
	K           int
	Inputs      int
	MicroInputs []int
	// Redundant is sum(MicroInputs) - Inputs: the input rows gathered
	// more than once (Betty's Figure 16).
	Redundant int
}

// Measure returns the input rows of the split parts of b.
func Measure(b *block.Batch, parts [][]int32) Stats { panic("split: not built yet") }

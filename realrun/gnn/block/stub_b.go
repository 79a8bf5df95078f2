package block

import (
	"errors"
	"io"
	"math/rand/v2"

	"github.com/tierflow/tierflow/realrun/gnn/data"
)

// STUB (helper B replaces this file): the API of the sampler.

// Full is the fanout that takes every neighbour.
const Full = -1

// Sampler draws batches from one graph with fixed fanouts (DGL's order:
// fanouts[0] for the input layer, the last for the output layer; Full or
// a count ≥ 0), reusing its buffers.
type Sampler struct{}

// NewSampler returns a sampler of g.
func NewSampler(g *data.Graph, fanouts []int) *Sampler { return &Sampler{} }

// Sample returns the batch whose output nodes are seeds.
func (s *Sampler) Sample(seeds []int32, rng *rand.Rand) *Batch { panic("block.Sample: not built yet") }

// FullGraph returns the batch of every node with every neighbour, for
// layers layers, whose blocks have Src = 0 … N-1.
func FullGraph(g *data.Graph, layers int) *Batch { panic("block.FullGraph: not built yet") }

// Neighborhood returns the one-layer block of dst with all their
// neighbours (layer-wise inference).
func Neighborhood(g *data.Graph, dst []int32) *Block { panic("block.Neighborhood: not built yet") }

// WriteBatches writes batches in the block file format.
func WriteBatches(w io.Writer, bs []*Batch) error {
	return errors.New("block.WriteBatches: not built yet")
}

// ReadBatches reads a block file.
func ReadBatches(r io.Reader) ([]*Batch, error) {
	return nil, errors.New("block.ReadBatches: not built yet")
}

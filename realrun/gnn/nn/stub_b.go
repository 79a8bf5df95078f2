package nn

import "math/rand/v2"

// STUB (helper B replaces this file with sage.go).

// Aggregator is how a GraphSAGE layer combines a node's neighbours.
type Aggregator int

// The aggregators.
const (
	Mean Aggregator = iota
	Pool
	LSTM
)

// NewSAGE returns a GraphSAGE layer with the Mean or Pool aggregator
// (LSTM: NewSAGELSTM).
func NewSAGE(name string, agg Aggregator, in, out int, rng *rand.Rand) Layer {
	panic("nn.NewSAGE: not built yet")
}

package nn

import "math/rand/v2"

// STUB (helper C replaces this file with lstm.go and gat.go).

// NewSAGELSTM returns a GraphSAGE layer with the LSTM aggregator.
func NewSAGELSTM(name string, in, out int, rng *rand.Rand) Layer {
	panic("nn.NewSAGELSTM: not built yet")
}

// NewGAT returns a multi-head GAT layer: heads heads of outPerHead
// features, concatenated (OutDim heads·outPerHead) or averaged
// (OutDim outPerHead).
func NewGAT(name string, in, outPerHead, heads int, concat bool, rng *rand.Rand) Layer {
	panic("nn.NewGAT: not built yet")
}

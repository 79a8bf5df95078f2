package gnnsim

import (
	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
)

// AggregationBytes is the aggregation work of one training step of m on
// b, forward and backward, as bytes of the rows the edges carry: for
// each layer, edges × width × 4 × 2, where the width is the layer's
// input for sage-mean (its output where the engine projects before the
// mean, nn.ProjectFirst) and sage-pool (the pooled rows), four times
// the input for sage-lstm (the gates of every step) and the attention's
// output over the heads for gat; 0 for mlp.
func AggregationBytes(m *nn.Model, b *block.Batch) float64 {
	layers := m.Layers()
	total := 0.0
	for l := range b.Blocks {
		if l >= len(layers) {
			break
		}
		blk := &b.Blocks[l]
		e := float64(len(blk.Nbr))
		in, out := layers[l].InDim(), layers[l].OutDim()
		var width int
		switch m.Spec.Model {
		case "sage-mean":
			width = in
			if nn.ProjectFirst(in, out, blk.NumDst, blk.NumSrc(), len(blk.Nbr)) {
				width = out
			}
		case "sage-pool":
			width = in
		case "sage-lstm":
			width = 4 * in
		case "gat":
			width = out
			if l == len(layers)-1 {
				width = out * m.Spec.Heads // the last layer's heads are averaged
			}
		}
		total += e * float64(width) * 4 * 2
	}
	return total
}

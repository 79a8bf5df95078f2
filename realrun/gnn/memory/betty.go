package memory

import (
	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
)

// BettyConstant is the values Betty's Eq. 5 counts per LSTM input value
// and step: PyTorch's 18 intermediate results.
const BettyConstant = 18

// BettyPublished is Betty's published estimator (§4.4.3, Table 3, Eq. 5)
// of b's training step, in bytes at 4 a value: (1) the parameters NP,
// (2) the input features N_in·H_in, (3) the output labels N_out, (4) the
// blocks, 3 values an edge (two ids and a weight), (5) the hidden
// layers' outputs Σ N_i·h_i over every layer but the last, (6) the
// aggregator's intermediates — for sage-lstm Eq. 5, Σ_L L·B_L·H·18 over
// each LSTM layer's destinations (B_L of degree L, H its input width),
// nothing for the other aggregators, for which the paper gives no
// formula — (7) the gradients NP and (8) Adam's states 2·NP; as the
// paper has it, the peak holds the larger of (6) and (7) with all the
// rest.
func BettyPublished(spec nn.Spec, b *block.Batch) int64 {
	var np, features, labels, blocks, hidden, agg int64
	last := len(b.Blocks) - 1
	for l := range b.Blocks {
		blk := &b.Blocks[l]
		in, out := spec.Dims(l)
		np += int64(paramValues(spec, l, in, out))
		blocks += 3 * int64(len(blk.Nbr))
		if l < last {
			hidden += int64(blk.NumDst) * int64(out)
		}
		if spec.Model == "sage-lstm" {
			for deg, count := range degrees(blk) {
				agg += int64(deg) * int64(count) * int64(in) * BettyConstant
			}
		}
	}
	features = int64(len(b.Blocks[0].Src)) * int64(spec.In)
	labels = int64(b.Blocks[last].NumDst)
	return 4 * (np + features + labels + blocks + hidden + max(agg, np) + 2*np)
}

// paramValues is the learnable values of layer l (in → out features) of
// a model of spec: what nn.Model.NumParams counts.
func paramValues(spec nn.Spec, l, in, out int) int {
	switch spec.Model {
	case "mlp":
		return out*in + out
	case "sage-mean":
		return 2*out*in + out
	case "sage-pool":
		return in*in + in + 2*out*in + out
	case "sage-lstm":
		return 2*4*in*in + 2*4*in + 2*out*in + out
	}
	// gat
	f, heads := out/spec.Heads, spec.Heads
	if l == spec.Layers-1 {
		f = out
	}
	return heads*f*in + 2*heads*f + out
}

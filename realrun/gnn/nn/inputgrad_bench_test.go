package nn

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/block"
)

// igBatch is a batch of len(fanouts) blocks with out outputs; block l's
// destinations each draw up to fanouts[l] neighbours from pool new
// source rows (sorted, distinct).
func igBatch(out int, fanouts []int, pool int, rng *rand.Rand) *block.Batch {
	bs := make([]block.Block, len(fanouts))
	n := out
	for l := len(fanouts) - 1; l >= 0; l-- {
		b := block.Block{NumDst: n, Ptr: []int32{0}}
		p := min(pool, n*fanouts[l])
		for i := 0; i < n+p; i++ {
			b.Src = append(b.Src, int32(i))
		}
		for i := 0; i < n; i++ {
			for k := 0; k < fanouts[l]; k++ {
				b.Nbr = append(b.Nbr, int32(n+rng.IntN(p)))
			}
			slices.Sort(b.Nbr[b.Ptr[i]:])
			b.Nbr = append(b.Nbr[:b.Ptr[i]], slices.Compact(b.Nbr[b.Ptr[i]:])...)
			b.Ptr = append(b.Ptr, int32(len(b.Nbr)))
		}
		bs[l] = b
		n += p
	}
	return &block.Batch{Blocks: bs}
}

// BenchmarkRedditStep times one training step (Forward, loss, Backward,
// Adam) of each model at a Reddit-like shape — 602 features, 256 hidden,
// 41 classes, 2 layers, fanouts 10 (first layer) and 5, 256 outputs —
// where the first layer's input gradient, which no model needs, would be
// about a third of that layer's products. GFLOP/s divides Model.FLOPs
// (the products actually run) by the wall clock. sage-lstm is left out:
// its 602-wide LSTM takes seconds a step (BenchmarkTrainStep has it).
func BenchmarkRedditStep(bm *testing.B) {
	for _, kind := range Models {
		if kind == "sage-lstm" {
			continue
		}
		bm.Run(kind, func(bm *testing.B) {
			s := Spec{Model: kind, In: 602, Hidden: 256, Classes: 41, Layers: 2, Heads: 4, Dropout: 0.5}
			m, err := New(s, 1)
			require.NoError(bm, err)
			rng := rand.New(rand.NewPCG(1, 2))
			fan := []int{10, 5}
			if kind == "mlp" {
				fan = []int{0, 0}
			}
			const out = 256
			b := igBatch(out, fan, 4000, rng)
			x := make([]float32, b.Blocks[0].NumSrc()*s.In)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			labels := make([]int32, out)
			for i := range labels {
				labels[i] = int32(rng.IntN(s.Classes))
			}
			d := make([]float32, out*s.Classes)
			opt := NewAdam(m.Params(), 0.01)
			bm.ResetTimer()
			for i := 0; i < bm.N; i++ {
				logits := m.Forward(b, x, true, rng)
				CrossEntropy(logits, labels, s.Classes, d)
				m.Backward(d)
				opt.Step(m.Params())
				m.ZeroGrad()
			}
			bm.ReportMetric(m.FLOPs(b)*float64(bm.N)/bm.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

//go:build linux

package nn

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkRedditStep times one training step (Forward, loss, Backward,
// Adam) of each model at a Reddit-like shape — 602 features, 256 hidden,
// 41 classes, 2 layers, fanouts 10 (first layer) and 5, 256 outputs —
// where the first layer's input gradient, which no model needs, would be
// about a third of that layer's products. GFLOP/s divides Model.FLOPs
// (the products actually run) by the wall clock; cpu-ms/op is the
// process's CPU time a step (getrusage: steadier than the wall clock on a
// shared machine). sage-lstm is left out:
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
			c0 := cpuSeconds(syscall.RUSAGE_SELF)
			for i := 0; i < bm.N; i++ {
				logits := m.Forward(b, x, true, rng)
				CrossEntropy(logits, labels, s.Classes, d)
				m.Backward(d)
				opt.Step(m.Params())
				m.ZeroGrad()
			}
			cpu := cpuSeconds(syscall.RUSAGE_SELF) - c0
			bm.ReportMetric(m.FLOPs(b)*float64(bm.N)/bm.Elapsed().Seconds()/1e9, "GFLOP/s")
			bm.ReportMetric(cpu/float64(bm.N)*1e3, "cpu-ms/op")
		})
	}
}

// BenchmarkFirstLayer times Forward+Backward of a first layer with its
// input gradient (dx=true) and without (dx=false, SetInputGrad(false)):
// Linear 602→256 over 1,024 rows, GAT 602→4×64 and SAGELSTM 100→256 over
// 1,024 destinations with 10 neighbours each (sage-mean and sage-pool:
// BenchmarkSAGE). cpu-ms/op is the process's CPU time an iteration.
func BenchmarkFirstLayer(b *testing.B) {
	defer func(w int) { Workers = w }(Workers)
	Workers = 2
	const dst, fanout = 1024, 10
	layers := []struct {
		name string
		in   int
		make func(rng *rand.Rand) Layer
	}{
		{"linear", 602, func(rng *rand.Rand) Layer { return NewLinear("l", 602, 256, rng) }},
		{"gat", 602, func(rng *rand.Rand) Layer { return NewGAT("g", 602, 64, 4, true, rng) }},
		{"sage-lstm", 100, func(rng *rand.Rand) Layer { return NewSAGELSTM("s", 100, 256, rng) }},
	}
	for _, c := range layers {
		for _, dx := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/dx=%v", c.name, dx), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(7, 7))
				blk := igBatch(dst, []int{fanout}, 8000, rng).Blocks[0]
				l := c.make(rng)
				if ig, ok := l.(InputGradSetter); ok {
					ig.SetInputGrad(dx)
				}
				x := make([]float32, blk.NumSrc()*c.in)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				d := make([]float32, dst*l.OutDim())
				for i := range d {
					d[i] = float32(rng.NormFloat64()) * 1e-3
				}
				l.Forward(&blk, x, true, rng)
				l.Backward(d)
				b.ResetTimer()
				c0 := cpuSeconds(syscall.RUSAGE_SELF)
				for i := 0; i < b.N; i++ {
					l.Forward(&blk, x, true, rng)
					l.Backward(d)
				}
				cpu := cpuSeconds(syscall.RUSAGE_SELF) - c0
				b.ReportMetric(cpu/float64(b.N)*1e3, "cpu-ms/op")
			})
		}
	}
}

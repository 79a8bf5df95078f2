//go:build linux

package nn

import (
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
)

// BenchmarkSAGEOrder times forward and backward of a Mean layer
// aggregating first (agg) and projecting first (proj) at the shapes of
// a 2-layer sage-mean on the Reddit-shaped graph (6,989 nodes, mean
// degree 490, fanouts 10 and 25, batch 1024): layer 0 602 → 128 over
// ~6,800 destinations among all 6,989 nodes, layer 1 128 → 41 over
// 1,024 destinations among ~6,800; and a large graph's 602 → 128 block
// where every neighbour is a new source (1,024 + 25,600); and two
// blocks either side of projectFirst's break-even (sources 1.5 and 2
// times the destinations).
func BenchmarkSAGEOrder(b *testing.B) {
	shapes := []struct {
		name                      string
		in, out, dst, src, fanout int
		dx                        bool
	}{
		{"reddit-l0", 602, 128, 6800, 6989, 10, false},
		{"reddit-l1", 128, 41, 1024, 6800, 25, true},
		{"large-l0", 602, 128, 1024, 26624, 25, false},
		{"mid-1.5", 602, 128, 4096, 6000, 10, false}, // near projectFirst's break-even, either side
		{"mid-2.0", 602, 128, 4096, 8192, 10, false},
	}
	for _, s := range shapes {
		rng := rand.New(rand.NewPCG(1, 1))
		blk := orderBlock(s.dst, s.src, s.fanout, rng)
		x := make([]float32, blk.NumSrc()*s.in)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		d := make([]float32, s.dst*s.out)
		for i := range d {
			d[i] = float32(rng.NormFloat64()) * 1e-3
		}
		for o, name := range []string{"auto", "agg", "proj"} {
			b.Run(s.name+"/"+name, func(b *testing.B) {
				l := newOrdered(s.in, s.out, o, 1)
				l.SetInputGrad(s.dx)
				c0 := cpuSeconds(syscall.RUSAGE_SELF)
				for b.Loop() {
					l.Forward(blk, x, true, nil)
					l.Backward(d)
				}
				b.ReportMetric((cpuSeconds(syscall.RUSAGE_SELF)-c0)/float64(b.N)*1e3, "cpu-ms/op")
			})
		}
	}
}

// redditLike is a random graph of the Reddit shape's size (6,989 nodes,
// mean degree ~490, symmetric) with 602 random features.
func redditLike(rng *rand.Rand) *data.Graph {
	const n, half, f = 6989, 245, 602
	adj := make([][]int32, n)
	for v := range adj {
		for range half {
			u := int32(rng.IntN(n))
			if u != int32(v) {
				adj[v] = append(adj[v], u)
				adj[u] = append(adj[u], int32(v))
			}
		}
	}
	g := &data.Graph{Names: make([]string, n), Ptr: make([]int64, 1, n+1), F: f, X: make([]float32, n*f)}
	for v := range adj {
		slices.Sort(adj[v])
		g.Nbr = append(g.Nbr, slices.Compact(adj[v])...)
		g.Ptr = append(g.Ptr, int64(len(g.Nbr)))
	}
	for i := range g.X {
		g.X[i] = float32(rng.NormFloat64())
	}
	return g
}

// BenchmarkTrainStepReddit times one sage-mean training step (Forward,
// loss, Backward, Adam) at the Reddit shape of results/gnn (602
// features, 128 hidden, 41 classes, fanouts 10 and 25, batch 1024, over
// a random graph of Reddit-shape's size), with the layers' automatic
// order (auto) and forced to aggregate first (agg; its cpu-GFLOP/s
// counts auto's products),
// cycling over 4 sampled batches; cpu-ms/op is the process's CPU time
// per step, cpu-GFLOP/s the products Model.FLOPs counts per CPU second
// and frac-of-peak that over one core's FMA peak.
func BenchmarkTrainStepReddit(bm *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	g := redditLike(rng)
	smp := block.NewSampler(g, []int{10, 25})
	type step struct {
		b *block.Batch
		x []float32
		y []int32
	}
	var steps []step
	perm := rng.Perm(g.N())
	for k := range 4 {
		seeds := make([]int32, 1024)
		for i := range seeds {
			seeds[i] = int32(perm[k*1024+i])
		}
		b := smp.Sample(seeds, rng)
		x := make([]float32, 0, b.Blocks[0].NumSrc()*g.F)
		for _, v := range b.Input() {
			x = append(x, g.Row(v)...)
		}
		y := make([]int32, 1024)
		for i := range y {
			y[i] = int32(rng.IntN(41))
		}
		steps = append(steps, step{b, x, y})
	}
	for _, order := range []string{"auto", "agg"} {
		bm.Run(order, func(bm *testing.B) {
			s := Spec{Model: "sage-mean", In: g.F, Hidden: 128, Classes: 41, Layers: 2, Dropout: 0.5}
			m, err := New(s, 1)
			if err != nil {
				bm.Fatal(err)
			}
			if order == "agg" {
				for _, l := range m.Layers() {
					l.(*SAGE).order = 1
				}
			}
			d := make([]float32, 1024*s.Classes)
			opt := NewAdam(m.Params(), 0.01)
			c0 := cpuSeconds(syscall.RUSAGE_SELF)
			i := 0
			for bm.Loop() {
				st := steps[i%len(steps)]
				i++
				logits := m.Forward(st.b, st.x, true, rng)
				CrossEntropy(logits, st.y, s.Classes, d)
				m.Backward(d)
				opt.Step(m.Params())
				m.ZeroGrad()
			}
			cpu := cpuSeconds(syscall.RUSAGE_SELF) - c0
			flops := 0.0
			for k := 0; k < bm.N; k++ {
				flops += m.FLOPs(steps[k%len(steps)].b)
			}
			bm.ReportMetric(cpu/float64(bm.N)*1e3, "cpu-ms/op")
			bm.ReportMetric(flops/cpu/1e9, "cpu-GFLOP/s")
			bm.ReportMetric(flops/cpu/fmaPeak(), "frac-of-peak")
		})
	}
}

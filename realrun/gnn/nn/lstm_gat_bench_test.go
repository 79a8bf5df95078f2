//go:build linux

package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/tierflow/tierflow/realrun/gnn/block"
)

// seqBlock is a sampled block: dst destinations, each with fanout
// distinct neighbours. With fresh, every neighbour is a source row of its
// own (a large graph: nothing repeats); otherwise they are drawn from
// dst·(fanout/2+1) source rows, so rows repeat across destinations.
func seqBlock(dst, fanout int, fresh bool, rng *rand.Rand) *block.Block {
	src := dst + dst*fanout
	if !fresh {
		src = dst * (fanout/2 + 1)
	}
	b := &block.Block{NumDst: dst, Ptr: []int32{0}}
	for i := 0; i < src; i++ {
		b.Src = append(b.Src, int32(i))
	}
	next := dst
	for i := 0; i < dst; i++ {
		seen := map[int32]bool{}
		for len(seen) < fanout {
			var j int32
			if fresh {
				j = int32(next)
				next++
			} else {
				j = int32(rng.IntN(src))
			}
			if j == int32(i) || seen[j] {
				continue
			}
			seen[j] = true
			b.Nbr = append(b.Nbr, j)
		}
		b.Ptr = append(b.Ptr, int32(len(b.Nbr)))
	}
	return b
}

// benchLayer times Forward+Backward of l on b (Workers 2) and reports
// the FLOP/s (flops per iteration) by the wall clock, their fraction of
// two cores' FMA peak, and — steadier on a shared machine — the FLOP/s
// per CPU-second of the process (every thread) and its fraction of one
// core's peak.
func benchLayer(b *testing.B, l Layer, blk *block.Block, flops float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, blk.NumSrc()*l.InDim())
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	dOut := make([]float32, blk.NumDst*l.OutDim())
	for i := range dOut {
		dOut[i] = float32(rng.NormFloat64())
	}
	p := fmaPeak() // sage_bench_test.go
	Workers = 2
	l.Forward(blk, x, true, rng)
	l.Backward(dOut)
	b.ResetTimer()
	c0 := cpuSeconds(0) // RUSAGE_SELF
	for i := 0; i < b.N; i++ {
		l.Forward(blk, x, true, rng)
		l.Backward(dOut)
	}
	cpu := cpuSeconds(0) - c0
	g := flops * float64(b.N) / b.Elapsed().Seconds()
	gc := flops * float64(b.N) / cpu
	b.ReportMetric(g/1e9, "GFLOP/s")
	b.ReportMetric(gc/1e9, "cpu-GFLOP/s")
	if p > 0 {
		b.ReportMetric(g/(2*p), "frac-of-2-core-peak")
		b.ReportMetric(gc/p, "cpu-frac-of-peak")
		b.ReportMetric(p/1e9, "core-peak-GFLOP/s")
	}
}

// BenchmarkSAGELSTM: 1,024 destinations, fanout 10, in 128 → out 256,
// forward and backward. GFLOP/s counts the GEMMs: forward 2·nU·4in·in
// (input to gates) + 2·(E−NumDst)·4in·in (recurrence) + 2·2·NumDst·out·in
// (fc_self, fc_neigh); backward twice that.
func BenchmarkSAGELSTM(b *testing.B) {
	for _, c := range []struct {
		name  string
		fresh bool
	}{{"fresh", true}, {"repeated", false}} {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			const dst, fanout, in, out = 1024, 10, 128, 256
			blk := seqBlock(dst, fanout, c.fresh, rng)
			l := NewSAGELSTM("s", in, out, rng)
			l.Forward(blk, make([]float32, blk.NumSrc()*in), false, nil)
			nU := len(l.(*SAGELSTM).urows)
			E := len(blk.Nbr)
			fwd := 2.0*float64(nU)*4*in*in + 2*float64(E-dst)*4*in*in + 2*2*dst*out*in
			benchLayer(b, l, blk, 3*fwd)
		})
	}
}

// BenchmarkGAT: 1,024 destinations, fanout 25, in 128, 4 heads × 64,
// concatenated, forward and backward. GFLOP/s counts the GEMMs (z, dX,
// dW: 3 · 2·NumSrc·256·128) and the edge work (forward 2·edges·256 for
// the weighted sums; backward 4·edges·256 for dα and dz).
func BenchmarkGAT(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	const dst, fanout, in, heads, f = 1024, 25, 128, 4, 64
	blk := seqBlock(dst, fanout, true, rng)
	l := NewGAT("g", in, f, heads, true, rng)
	hf := float64(heads * f)
	edges := float64(len(blk.Nbr) + dst)
	flops := 3*2*float64(blk.NumSrc())*hf*in + 6*edges*hf
	benchLayer(b, l, blk, flops)
}

//go:build linux

package nn

import (
	"math/rand/v2"
	"testing"
)

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
			src := 0 // fresh rows
			if !c.fresh {
				src = dst * (fanout/2 + 1)
			}
			blk := fanoutBlock(dst, fanout, src, rng)
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
	blk := fanoutBlock(dst, fanout, 0, rng)
	l := NewGAT("g", in, f, heads, true, rng)
	hf := float64(heads * f)
	edges := float64(len(blk.Nbr) + dst)
	flops := 3*2*float64(blk.NumSrc())*hf*in + 6*edges*hf
	benchLayer(b, l, blk, flops)
}

package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tierflow/tierflow/realrun/gnn/block"
)

// testBlock is a small block: dst destinations among src sources, every
// destination with 0–3 distinct sampled neighbours (never itself), drawn
// from rng.
func testBlock(dst, src int, rng *rand.Rand) *block.Block {
	b := &block.Block{NumDst: dst, Ptr: []int32{0}}
	for i := 0; i < src; i++ {
		b.Src = append(b.Src, int32(100+i))
	}
	for i := 0; i < dst; i++ {
		k := rng.IntN(4)
		seen := map[int32]bool{}
		for len(seen) < k {
			j := int32(rng.IntN(src))
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

// checkGrad compares l's analytic gradients — of its input and of every
// parameter — with central finite differences of the loss Σ out·R for a
// fixed random R, at every coordinate (keep shapes small). Forward runs
// with train false, so dropout-free layers are deterministic.
func checkGrad(t *testing.T, l Layer, b *block.Block, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	in := make([]float32, b.NumSrc()*l.InDim())
	for i := range in {
		in[i] = float32(rng.NormFloat64())
	}
	r := make([]float64, b.NumDst*l.OutDim())
	for i := range r {
		r[i] = rng.NormFloat64()
	}
	loss := func() float64 {
		out := l.Forward(b, in, false, nil)
		s := 0.0
		for i, v := range out {
			s += float64(v) * r[i]
		}
		return s
	}
	for _, p := range l.Params() {
		clear(p.G)
	}
	loss()
	dOut := make([]float32, len(r))
	for i, v := range r {
		dOut[i] = float32(v)
	}
	dIn := append([]float32(nil), l.Backward(dOut)...)
	if len(dIn) != len(in) {
		t.Fatalf("Backward returned %d values, want %d (NumSrc×InDim)", len(dIn), len(in))
	}
	grads := map[string][]float32{}
	for _, p := range l.Params() {
		grads[p.Name] = append([]float32(nil), p.G...)
	}
	check := func(what string, x []float32, ana []float32) {
		const eps = 1e-2
		bad := 0
		for i := range x {
			old := x[i]
			x[i] = old + eps
			up := loss()
			x[i] = old - eps
			down := loss()
			x[i] = old
			num := (up - down) / (2 * eps)
			if !(math.Abs(num-float64(ana[i])) <= 2e-2*math.Max(1, math.Abs(num))) { // NaN fails
				if bad < 5 {
					t.Errorf("%s[%d]: analytic %.5g, finite difference %.5g", what, i, ana[i], num)
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d coordinates off", what, bad, len(x))
		}
	}
	check("input", in, dIn)
	for _, p := range l.Params() {
		check(p.Name, p.W, grads[p.Name])
	}
}

func TestLinearGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, w := range []int{1, 2} {
		Workers = w
		b := testBlock(130, 150, rng) // enough rows for two workers
		checkGrad(t, NewLinear("fc", 5, 3, rng), b, 3)
	}
	Workers = 2
}

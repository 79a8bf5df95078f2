package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/block"
)

// newOrdered returns a Mean SAGE layer of in → out features forced to
// one order of operations (1 aggregates first, 2 projects first), its
// weights and biases drawn from seed.
func newOrdered(in, out, order int, seed uint64) *SAGE {
	rng := rand.New(rand.NewPCG(seed, 9))
	l := NewSAGE("sage", Mean, in, out, rng).(*SAGE)
	randomBiases(l, 0, rng)
	l.order = order
	return l
}

// TestSAGEProjectFirstSame: projecting first and aggregating first are
// the same function, with the same gradients, on the same weights, for
// narrowing and widening shapes, Workers 1 and 2, with and without the
// input gradient, on blocks with destinations without neighbours.
func TestSAGEProjectFirstSame(t *testing.T) {
	defer func(w int) { Workers = w }(Workers)
	for _, w := range []int{1, 2} {
		for _, shape := range [][2]int{{9, 4}, {4, 9}, {6, 5}} {
			for _, dx := range []bool{true, false} {
				Workers = w
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				b := testBlock(150, 400, rng) // sources without edges too
				in, out := shape[0], shape[1]
				x := make([]float32, b.NumSrc()*in)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				d := make([]float32, b.NumDst*out)
				for i := range d {
					d[i] = float32(rng.NormFloat64())
				}
				var ys, dxs [2][]float32
				var gs [2][][]float32
				for o := 1; o <= 2; o++ {
					l := newOrdered(in, out, o, 3)
					l.SetInputGrad(dx)
					dirty(l, rng)
					ys[o-1] = append([]float32(nil), l.Forward(b, x, true, nil)...)
					require.Equal(t, o == 2, l.proj)
					dxs[o-1] = append([]float32(nil), l.Backward(d)...)
					for _, p := range l.Params() {
						gs[o-1] = append(gs[o-1], append([]float32(nil), p.G...))
					}
				}
				name := fmt.Sprintf("workers=%d %d→%d dx=%v", w, in, out, dx)
				near(t, name+" output", ys[0], ys[1])
				if dx {
					near(t, name+" input gradient", dxs[0], dxs[1])
				} else {
					require.Nil(t, dxs[1], name)
				}
				for i := range gs[0] {
					near(t, fmt.Sprintf("%s parameter %d", name, i), gs[0][i], gs[1][i])
				}
			}
		}
	}
}

// near fails unless a and b agree elementwise within float32 rounding of
// sums of a few terms.
func near(t *testing.T, what string, a, b []float32) {
	t.Helper()
	require.Len(t, b, len(a), what)
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-4*math.Max(1, math.Abs(float64(a[i]))) {
			t.Fatalf("%s[%d]: %g aggregating first, %g projecting first", what, i, a[i], b[i])
		}
	}
}

// TestSAGEProjectFirstGrad: the finite-difference check of the
// project-first path, narrowing, Workers 1 and 2, on a block where some
// destinations have no neighbours, and of the automatic choice on a
// block where it projects first.
func TestSAGEProjectFirstGrad(t *testing.T) {
	defer func(w int) { Workers = w }(Workers)
	for _, w := range []int{1, 2} {
		Workers = w
		rng := rand.New(rand.NewPCG(uint64(w), 11))
		l := newOrdered(6, 3, 2, uint64(w))
		dirty(l, rng)
		checkGrad(t, l, testBlock(130, 150, rng), 3, gradOpts{})

		l = newOrdered(7, 2, 0, uint64(w))
		dirty(l, rng)
		b := testBlock(130, 132, rng)
		require.True(t, projectFirst(7, 2, b.NumDst, b.NumSrc(), len(b.Nbr)))
		checkGrad(t, l, b, 4, gradOpts{})
		require.True(t, l.proj)
	}
}

// TestProjectFirstRule: DGL's condition (in > out) and the work's.
func TestProjectFirstRule(t *testing.T) {
	require.False(t, projectFirst(128, 256, 1000, 1000, 10000), "widening")
	require.False(t, projectFirst(128, 128, 1000, 1000, 10000), "square")
	require.True(t, projectFirst(602, 128, 1000, 1000, 10000), "sources = destinations")
	require.False(t, projectFirst(602, 128, 1024, 26624, 25600), "every neighbour a new source")
}

// orderBlock is a block of dst destinations among src sources (the
// destinations first), each with fanout distinct neighbours drawn
// uniformly from all sources but itself.
func orderBlock(dst, src, fanout int, rng *rand.Rand) *block.Block {
	b := &block.Block{NumDst: dst, Src: make([]int32, src), Ptr: make([]int32, 1, dst+1)}
	for i := range b.Src {
		b.Src[i] = int32(i)
	}
	seen := make(map[int32]bool, fanout)
	for i := 0; i < dst; i++ {
		clear(seen)
		for len(seen) < fanout {
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

// TestSAGEOrdersNoAllocs: both orders, with and without the input
// gradient, allocate nothing in steady state (one worker).
func TestSAGEOrdersNoAllocs(t *testing.T) {
	if sageRace {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	defer func(w int) { Workers = w }(Workers)
	Workers = 1
	for _, order := range []int{1, 2} {
		for _, dx := range []bool{true, false} {
			rng := rand.New(rand.NewPCG(3, 3))
			b := testBlock(100, 140, rng)
			l := newOrdered(16, 8, order, 1)
			l.SetInputGrad(dx)
			x := make([]float32, b.NumSrc()*16)
			d := make([]float32, 100*8)
			run := func() { l.Forward(b, x, true, nil); l.Backward(d) }
			run()
			require.Zero(t, testing.AllocsPerRun(10, run), "order %d dx %v", order, dx)
		}
	}
}

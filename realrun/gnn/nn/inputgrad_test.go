package nn

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/block"
)

// igBlock is a block of dst destinations among src sources with degrees
// 0…maxDeg (distinct neighbours per destination). With fresh, every edge
// reads a source row of its own (src must be at least dst + dst·maxDeg);
// otherwise rows repeat across destinations.
func igBlock(dst, src, maxDeg int, fresh bool, rng *rand.Rand) *block.Block {
	b := &block.Block{NumDst: dst, Ptr: []int32{0}}
	for i := 0; i < src; i++ {
		b.Src = append(b.Src, int32(i))
	}
	next := dst
	for i := 0; i < dst; i++ {
		k := rng.IntN(maxDeg + 1)
		seen := map[int32]bool{}
		for len(seen) < k {
			j := int32(rng.IntN(src))
			if fresh {
				j = int32(next)
				next++
			}
			if seen[j] {
				continue
			}
			seen[j] = true
			b.Nbr = append(b.Nbr, j)
		}
		b.Ptr = append(b.Ptr, int32(len(b.Nbr)))
	}
	return b
}

// TestNoInputGrad: for every layer, SetInputGrad(false) makes Backward
// return nil and leaves the parameters' gradients bit for bit as they
// are with the input gradient, with one worker and two; SetInputGrad(true)
// brings the same input gradient back.
func TestNoInputGrad(t *testing.T) {
	defer func(w int) { Workers = w }(Workers)
	type layerCase struct {
		name  string
		dst   int
		src   int
		deg   int
		fresh bool
		make  func(rng *rand.Rand) Layer
	}
	cases := []layerCase{
		{"linear", 150, 170, 0, false, func(rng *rand.Rand) Layer { return NewLinear("l", 21, 9, rng) }},
		{"sage-mean", 150, 200, 6, false, func(rng *rand.Rand) Layer { return NewSAGE("s", Mean, 19, 7, rng) }},
		{"sage-pool", 150, 200, 6, false, func(rng *rand.Rand) Layer { return NewSAGE("s", Pool, 19, 7, rng) }},
		{"gat concat", 150, 200, 6, false, func(rng *rand.Rand) Layer { return NewGAT("g", 19, 5, 3, true, rng) }},
		{"gat mean", 150, 200, 6, false, func(rng *rand.Rand) Layer { return NewGAT("g", 19, 5, 3, false, rng) }},
		{"sage-lstm repeated", 150, 200, 5, false, func(rng *rand.Rand) Layer { return NewSAGELSTM("s", 13, 7, rng) }},
		{"sage-lstm fresh", 150, 150 + 150*5, 5, true, func(rng *rand.Rand) Layer { return NewSAGELSTM("s", 16, 7, rng) }},
	}
	for _, c := range cases {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", c.name, w), func(t *testing.T) {
				Workers = w
				rng := rand.New(rand.NewPCG(4, 2))
				b := igBlock(c.dst, c.src, c.deg, c.fresh, rng)
				l := c.make(rng)
				ig, ok := l.(InputGradSetter)
				require.True(t, ok, "the layer has no SetInputGrad")
				x := make([]float32, b.NumSrc()*l.InDim())
				d := make([]float32, b.NumDst*l.OutDim())
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				for i := range d {
					d[i] = float32(rng.NormFloat64())
				}
				grads := func() [][]float32 {
					var g [][]float32
					for _, p := range l.Params() {
						g = append(g, append([]float32(nil), p.G...))
						clear(p.G)
					}
					return g
				}
				l.Forward(b, x, true, rng)
				dx := l.Backward(d)
				require.NotNil(t, dx)
				dx = append([]float32(nil), dx...)
				want := grads()

				ig.SetInputGrad(false)
				l.Forward(b, x, true, rng)
				assert.Nil(t, l.Backward(d))
				got := grads()
				for i, p := range l.Params() {
					assert.Equal(t, want[i], got[i], "%s: not bit-identical", p.Name)
				}

				ig.SetInputGrad(true)
				l.Forward(b, x, true, rng)
				assert.Equal(t, dx, l.Backward(d), "the input gradient once back on")
				again := grads()
				for i, p := range l.Params() {
					assert.Equal(t, want[i], again[i], p.Name)
				}
			})
		}
	}
}

// TestNoInputGradModel: New turns the first layer's input gradient off
// for every model, and a training step still runs.
func TestNoInputGradModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, kind := range Models {
		s := Spec{Model: kind, In: 11, Hidden: 8, Classes: 3, Layers: 2, Heads: 2}
		m, err := New(s, 1)
		require.NoError(t, err)
		fan := []int{4, 3}
		if kind == "mlp" {
			fan = []int{0, 0}
		}
		b := igBatch(20, fan, 30, rng)
		x := make([]float32, b.Blocks[0].NumSrc()*s.In)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		logits := m.Forward(b, x, true, rng)
		d := make([]float32, len(logits))
		CrossEntropy(logits, make([]int32, 20), s.Classes, d)
		m.Backward(d)
		nonzero := 0
		for _, v := range m.Params()[0].G {
			if v != 0 {
				nonzero++
			}
		}
		assert.NotZero(t, nonzero, "%s: the first layer's gradient", kind)
		first := m.Layers()[0]
		assert.Nil(t, first.Backward(make([]float32, b.Blocks[0].NumDst*first.OutDim())), kind)
		assert.NotNil(t, m.Layers()[1].Backward(make([]float32, len(logits))), kind)
	}
}

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

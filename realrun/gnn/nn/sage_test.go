package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/block"
)

func TestSAGEGrad(t *testing.T) {
	defer func(w int) { Workers = w }(Workers)
	for _, w := range []int{1, 2} {
		Workers = w
		rng := rand.New(rand.NewPCG(uint64(w), 5))
		// Mean is smooth: the shared check at every coordinate, on a
		// block with enough rows for two workers, where some
		// destinations have no neighbours.
		l := NewSAGE("sage", Mean, 5, 3, rng)
		randomBiases(l, 0, rng)
		dirty(l, rng)
		checkGrad(t, l, testBlock(130, 150, rng), 3, gradOpts{})

		// Pool, smooth case: at most one neighbour each (no max to
		// switch) and pre-activations far above 0 (no ReLU kink).
		l = NewSAGE("sage", Pool, 5, 3, rng)
		randomBiases(l, 0, rng)
		copy(l.(*SAGE).PoolB.W, []float32{20, 20, 20, 20, 20})
		dirty(l, rng)
		checkGrad(t, l, degreeBlock(130, 150, 1, false, rng), 4, gradOpts{})

		// Pool, general case: up to 3 neighbours and ReLUs at work;
		// coordinates where a max or ReLU switches within the step
		// (finite differences at two steps disagree) are skipped, at
		// most a fifth of each tensor's.
		l = NewSAGE("sage", Pool, 5, 3, rng)
		randomBiases(l, 0.5, rng)
		dirty(l, rng)
		checkGrad(t, l, testBlock(130, 150, rng), 5, gradOpts{steps: []float32{1e-3, 2.5e-4}, skip: 0.2})
	}
}

// dirty runs l forward and backward on a larger random block, leaving
// values in the buffers it reuses, and clears the gradients.
func dirty(l Layer, rng *rand.Rand) {
	b := testBlock(200, 260, rng)
	x := normals(b.NumSrc()*l.InDim(), rng)
	d := normals(b.NumDst*l.OutDim(), rng)
	l.Forward(b, x, true, nil)
	l.Backward(d)
	for _, p := range l.Params() {
		clear(p.G)
	}
}

// randomBiases sets l's biases to shift+N(0,1) values, so the check sees
// them act.
func randomBiases(l Layer, shift float64, rng *rand.Rand) {
	for _, p := range l.Params() {
		if len(p.Shape) == 1 {
			for i := range p.W {
				p.W[i] = float32(shift + rng.NormFloat64())
			}
		}
	}
}

// naiveSAGE computes the layer's output for destination i in float64,
// straight from the definition.
func naiveSAGE(l *SAGE, b *block.Block, x []float32, i int) []float64 {
	k, o := l.in, l.out
	row := func(j int) []float64 {
		r := make([]float64, k)
		for f := range r {
			r[f] = float64(x[j*k+f])
		}
		return r
	}
	agg := make([]float64, k)
	nb := b.Nbr[b.Ptr[i]:b.Ptr[i+1]]
	for n, j := range nb {
		v := row(int(j))
		if l.agg == Pool {
			p := make([]float64, k)
			for f := range p {
				s := float64(l.PoolB.W[f])
				for g := range v {
					s += float64(l.PoolW.W[f*k+g]) * v[g]
				}
				p[f] = max(s, 0)
			}
			v = p
		}
		for f := range agg {
			if l.agg == Mean {
				agg[f] += v[f] / float64(len(nb))
			} else if n == 0 || v[f] > agg[f] {
				agg[f] = v[f]
			}
		}
	}
	self := row(i)
	out := make([]float64, o)
	for c := range out {
		s := float64(l.SelfB.W[c])
		for f := 0; f < k; f++ {
			s += float64(l.Self.W[c*k+f])*self[f] + float64(l.Neigh.W[c*k+f])*agg[f]
		}
		out[c] = s
	}
	return out
}

func TestSAGEReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, agg := range []Aggregator{Mean, Pool} {
		b := testBlock(200, 260, rng)
		l := NewSAGE("s", agg, 37, 19, rng).(*SAGE)
		x := normals(b.NumSrc()*37, rng)
		y := l.Forward(b, x, true, nil)
		require.Len(t, y, 200*19)
		for i := 0; i < b.NumDst; i++ {
			want := naiveSAGE(l, b, x, i)
			for c, v := range want {
				assert.InDelta(t, v, y[i*19+c], 1e-4, "agg %d dst %d out %d", agg, i, c)
			}
		}
	}
}

func TestSAGEParams(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	names := func(l Layer) (ns []string, shapes [][]int) {
		for _, p := range l.Params() {
			ns = append(ns, p.Name)
			shapes = append(shapes, p.Shape)
		}
		return
	}
	n, s := names(NewSAGE("layers.0", Mean, 7, 4, rng))
	assert.Equal(t, []string{"layers.0.fc_self.weight", "layers.0.fc_self.bias", "layers.0.fc_neigh.weight"}, n)
	assert.Equal(t, [][]int{{4, 7}, {4}, {4, 7}}, s)
	n, s = names(NewSAGE("l", Pool, 7, 4, rng))
	assert.Equal(t, []string{"l.fc_self.weight", "l.fc_self.bias", "l.fc_neigh.weight", "l.fc_pool.weight", "l.fc_pool.bias"}, n)
	assert.Equal(t, [][]int{{4, 7}, {4}, {4, 7}, {7, 7}, {7}}, s)
	l := NewSAGE("l", Mean, 100, 50, rng).(*SAGE)
	bound := float32(1.4143 * 0.2) // √2·√(6/150)
	for _, w := range l.Self.W {
		require.LessOrEqual(t, w, bound)
		require.GreaterOrEqual(t, w, -bound)
	}
	assert.Panics(t, func() { NewSAGE("l", LSTM, 3, 3, rng) })
}

// TestSAGENoInputGrad: SetInputGrad(false) skips dx but leaves the
// parameters' gradients as they were.
func TestSAGENoInputGrad(t *testing.T) {
	for _, agg := range []Aggregator{Mean, Pool} {
		rng := rand.New(rand.NewPCG(2, 2))
		b := testBlock(100, 140, rng)
		l := NewSAGE("s", agg, 9, 6, rng).(*SAGE)
		x := normals(b.NumSrc()*9, rng)
		d := normals(100*6, rng)
		l.Forward(b, x, true, nil)
		require.NotNil(t, l.Backward(d))
		var want [][]float32
		for _, p := range l.Params() {
			want = append(want, append([]float32(nil), p.G...))
			clear(p.G)
		}
		l.SetInputGrad(false)
		l.Forward(b, x, true, nil)
		assert.Nil(t, l.Backward(d))
		for i, p := range l.Params() {
			assert.InDeltaSlice(t, want[i], p.G, 1e-4, p.Name)
		}
	}
}

// TestSAGENoAllocs: forward and backward allocate nothing in steady state
// (the goroutines of parallelRows aside, with one worker).
func TestSAGENoAllocs(t *testing.T) {
	if sageRace {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	defer func(w int) { Workers = w }(Workers)
	Workers = 1
	for _, agg := range []Aggregator{Mean, Pool} {
		rng := rand.New(rand.NewPCG(3, 3))
		b := testBlock(100, 140, rng)
		l := NewSAGE("s", agg, 16, 8, rng)
		x := make([]float32, b.NumSrc()*16)
		d := make([]float32, 100*8)
		run := func() { l.Forward(b, x, true, nil); l.Backward(d) }
		run()
		assert.Zero(t, testing.AllocsPerRun(10, run))
	}
}

// TestSAGEWorkersAgree: one worker and two give the same output and
// gradients at a width (130) where pool's scatter splits by column too.
func TestSAGEWorkersAgree(t *testing.T) {
	defer func(w int) { Workers = w }(Workers)
	for _, agg := range []Aggregator{Mean, Pool} {
		var outs, dxs [2][]float32
		var grads [2][][]float32
		for w := 1; w <= 2; w++ {
			Workers = w
			rng := rand.New(rand.NewPCG(6, 6))
			b := testBlock(150, 200, rng)
			l := NewSAGE("s", agg, 130, 7, rng)
			x := normals(b.NumSrc()*130, rng)
			d := normals(150*7, rng)
			outs[w-1] = append([]float32(nil), l.Forward(b, x, true, nil)...)
			dxs[w-1] = append([]float32(nil), l.Backward(d)...)
			for _, p := range l.Params() {
				grads[w-1] = append(grads[w-1], append([]float32(nil), p.G...))
			}
		}
		assert.InDeltaSlice(t, outs[0], outs[1], 1e-4, "output")
		assert.InDeltaSlice(t, dxs[0], dxs[1], 1e-4, "dx")
		for i := range grads[0] {
			assert.InDeltaSlice(t, grads[0][i], grads[1][i], 1e-3, "gradient %d", i)
		}
	}
}

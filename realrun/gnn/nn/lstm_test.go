package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/model"
)

func TestSAGELSTMGrad(t *testing.T) {
	defer func() { Workers = 2 }()
	cases := []struct {
		name             string
		dst, src, maxDeg int
		in, out          int
		distinct         bool
	}{
		{"small overlapping", 9, 14, 3, 3, 2, false},
		{"small distinct", 7, 40, 5, 4, 3, true},
		{"two workers overlapping", 140, 160, 4, 3, 2, false},
		{"two workers distinct", 140, 700, 4, 2, 3, true},
		{"degrees 0–3", 130, 150, 3, 4, 3, false},
		{"no edges", 5, 8, 0, 3, 2, true},
		{"in 8 (AVX2 activations)", 9, 14, 4, 8, 2, false},
		{"in 11 (AVX2 over 8, Go over 3)", 9, 14, 4, 11, 2, false},
		{"steps split over workers", 260, 280, 3, 2, 2, false},
		{"steps split, distinct, in 8", 260, 520, 3, 8, 2, true},
	}
	for _, c := range cases {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, workers %d", c.name, w), func(t *testing.T) {
				Workers = w
				rng := rand.New(rand.NewPCG(7, uint64(w)))
				b := degreeBlock(c.dst, c.src, c.maxDeg, c.distinct, rng)
				l := NewSAGELSTM("sage", c.in, c.out, rng)
				checkGrad(t, l, b, 11, gradOpts{})
				// The path taken: distinct rows go straight into the gates.
				assert.Equal(t, c.distinct, l.(*SAGELSTM).identity)
			})
		}
	}
}

// naiveLSTMOut is destination i's output written straight from the
// definition, in float64: PyTorch's LSTM cell over the neighbours in Nbr
// order, then fc_self(x_i) + fc_neigh(h_last).
func naiveLSTMOut(l *SAGELSTM, b *block.Block, x []float32, i int) []float64 {
	H := l.in
	W := func(p *Param, r, c int) float64 { return float64(p.W[r*p.Shape[1]+c]) }
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	h := make([]float64, H)
	c := make([]float64, H)
	for e := b.Ptr[i]; e < b.Ptr[i+1]; e++ {
		xj := x[int(b.Nbr[e])*H : int(b.Nbr[e]+1)*H]
		pre := make([]float64, 4*H)
		for g := 0; g < 4*H; g++ {
			s := float64(l.Bih.W[g]) + float64(l.Bhh.W[g])
			for k := 0; k < H; k++ {
				s += W(&l.Wih, g, k)*float64(xj[k]) + W(&l.Whh, g, k)*h[k]
			}
			pre[g] = s
		}
		for k := 0; k < H; k++ {
			ig, fg, gg, og := sig(pre[k]), sig(pre[H+k]), math.Tanh(pre[2*H+k]), sig(pre[3*H+k])
			c[k] = fg*c[k] + ig*gg
			h[k] = og * math.Tanh(c[k])
		}
	}
	out := make([]float64, l.out)
	for o := 0; o < l.out; o++ {
		s := float64(l.fcSelf.B.W[o])
		for k := 0; k < H; k++ {
			s += W(&l.fcSelf.W, o, k)*float64(x[i*H+k]) + W(&l.fcNeigh.W, o, k)*h[k]
		}
		out[o] = s
	}
	return out
}

func TestSAGELSTMReference(t *testing.T) {
	defer func() { Workers = 2 }()
	for _, distinct := range []bool{false, true} {
		for _, w := range []int{1, 2} {
			Workers = w
			rng := rand.New(rand.NewPCG(21, 22))
			b := degreeBlock(150, 1400, 8, distinct, rng)
			l := NewSAGELSTM("s", 6, 5, rng).(*SAGELSTM)
			// Larger weights than the default, so that the gates saturate
			// and a wrong gate order or layout shows.
			for _, p := range l.Params() {
				for k := range p.W {
					p.W[k] *= 3
				}
			}
			x := normals(b.NumSrc()*6, rng)
			out := l.Forward(b, x, false, nil)
			require.Len(t, out, 150*5)
			for i := 0; i < b.NumDst; i++ {
				want := naiveLSTMOut(l, b, x, i)
				for o, v := range want {
					require.InDelta(t, v, out[i*5+o], 2e-5*math.Max(1, math.Abs(v)), "destination %d (degree %d) output %d", i, b.Ptr[i+1]-b.Ptr[i], o)
				}
			}
		}
	}
}

func TestSAGELSTMParams(t *testing.T) {
	l := NewSAGELSTM("layer0", 4, 3, rand.New(rand.NewPCG(1, 1)))
	var names []string
	for _, p := range l.Params() {
		names = append(names, p.Name)
		n := 1
		for _, s := range p.Shape {
			n *= s
		}
		assert.Len(t, p.W, n, p.Name)
		assert.Len(t, p.G, n, p.Name)
	}
	assert.Equal(t, []string{"layer0.lstm.weight_ih", "layer0.lstm.weight_hh", "layer0.lstm.bias_ih",
		"layer0.lstm.bias_hh", "layer0.fc_self.weight", "layer0.fc_self.bias", "layer0.fc_neigh.weight"}, names)
	for _, p := range l.Params()[:4] { // PyTorch: uniform ±1/√hidden
		for _, v := range p.W {
			assert.LessOrEqual(t, math.Abs(float64(v)), 0.5, p.Name)
		}
	}
	assert.Equal(t, 4, l.InDim())
	assert.Equal(t, 3, l.OutDim())
}

func TestExpf(t *testing.T) {
	for x := -87.0; x <= 88; x += 0.01 {
		got := float64(expf(float32(x)))
		want := math.Exp(float64(float32(x))) // float32(x) rounds x
		if math.Abs(got-want) > 4e-7*want {
			t.Fatalf("expf(%g) = %g, want %g", x, got, want)
		}
	}
	assert.Less(t, expf(-200), float32(2e-38)) // saturates at e^-87
	assert.False(t, math.IsInf(float64(expf(1000)), 0))
	for x := -20.0; x <= 20; x += 0.001 {
		assert.InDelta(t, math.Tanh(x), float64(tanhf(float32(x))), 3e-7)
		assert.InDelta(t, 1/(1+math.Exp(-x)), float64(sigmoid(float32(x))), 3e-7)
	}
}

// TestActivationSlices checks sigmoidSlice and tanhSlice against math at
// every kernel level (the AVX2 assembly and the Go loop), over lengths
// with and without a tail, including saturated and extreme inputs.
func TestActivationSlices(t *testing.T) {
	defer model.SetLevel(model.SetLevel(model.Generic))
	for _, lvl := range model.SupportedLevels() {
		model.SetLevel(lvl)
		for _, n := range []int{1, 7, 8, 9, 64, 1003} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i%401-200) * 0.07 // −14 … 14
			}
			x[0] = -1000
			if n > 1 {
				x[n-1] = 1000
			}
			y := make([]float32, n)
			tanhSlice(x, y)
			s := append([]float32(nil), x...)
			sigmoidSlice(s)
			for i, v := range x {
				require.InDelta(t, math.Tanh(float64(v)), float64(y[i]), 3e-7, "%v tanh(%g) (n %d)", lvl, v, n)
				require.InDelta(t, 1/(1+math.Exp(-float64(v))), float64(s[i]), 3e-7, "%v sigmoid(%g) (n %d)", lvl, v, n)
			}
		}
	}
}

func BenchmarkSigmoidSlice(b *testing.B) {
	x := make([]float32, 1<<16)
	for i := range x {
		x[i] = float32(i%200-100) * 0.05
	}
	y := make([]float32, len(x))
	for b.Loop() {
		copy(y, x)
		sigmoidSlice(y)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/value")
}

// TestLayerReuse runs each layer on a large block, then a small one, then
// the large one again, and compares outputs and gradients with fresh
// layers of the same parameters: buffers reused across calls must not
// carry anything over.
func TestLayerReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 41))
	big := degreeBlock(150, 300, 6, false, rng)
	small := degreeBlock(20, 30, 3, false, rng)
	distinct := degreeBlock(40, 400, 5, true, rng)
	mk := []func() Layer{
		func() Layer { return NewSAGELSTM("s", 8, 3, rand.New(rand.NewPCG(1, 2))) },
		func() Layer { return NewGAT("g", 8, 8, 2, true, rand.New(rand.NewPCG(1, 2))) },
		func() Layer { return NewGAT("g", 8, 8, 2, false, rand.New(rand.NewPCG(1, 2))) },
	}
	run := func(l Layer, b *block.Block) ([]float32, []float32, [][]float32) {
		r := rand.New(rand.NewPCG(uint64(b.NumSrc()), 3))
		x := normals(b.NumSrc()*l.InDim(), r)
		d := normals(b.NumDst*l.OutDim(), r)
		for _, p := range l.Params() {
			clear(p.G)
		}
		out := append([]float32(nil), l.Forward(b, x, false, nil)...)
		dx := append([]float32(nil), l.Backward(d)...)
		var gs [][]float32
		for _, p := range l.Params() {
			gs = append(gs, append([]float32(nil), p.G...))
		}
		return out, dx, gs
	}
	for li, m := range mk {
		reused := m()
		for bi, b := range []*block.Block{big, small, distinct, big, small} {
			o1, d1, g1 := run(reused, b)
			o2, d2, g2 := run(m(), b)
			require.Equal(t, o2, o1, "layer %d, block %d: output", li, bi)
			require.Equal(t, d2, d1, "layer %d, block %d: input gradient", li, bi)
			require.Equal(t, g2, g1, "layer %d, block %d: parameter gradients", li, bi)
		}
	}
}

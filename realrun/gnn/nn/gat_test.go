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

func TestGATGrad(t *testing.T) {
	defer func() { Workers = 2 }()
	cases := []struct {
		name             string
		dst, src, maxDeg int
		in, f, heads     int
		concat           bool
	}{
		{"concat 1 head", 9, 15, 4, 3, 2, 1, true},
		{"concat 3 heads", 8, 14, 5, 3, 2, 3, true},
		{"mean 1 head", 9, 15, 4, 4, 3, 1, false},
		{"mean 3 heads", 8, 14, 5, 3, 2, 3, false},
		{"two workers concat", 140, 170, 4, 2, 2, 3, true},
		{"two workers mean", 140, 170, 3, 2, 2, 3, false}, // testBlock's degrees
		{"no edges", 5, 8, 0, 3, 2, 2, true},
		{"concat F 8 (AVX2 dot)", 9, 15, 4, 2, 8, 2, true},
		{"mean F 16 (AVX2 dot)", 130, 150, 3, 2, 16, 2, false},
	}
	for _, c := range cases {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, workers %d", c.name, w), func(t *testing.T) {
				Workers = w
				rng := rand.New(rand.NewPCG(9, uint64(w)))
				b := degreeBlock(c.dst, c.src, c.maxDeg, false, rng)
				l := NewGAT("gat", c.in, c.f, c.heads, c.concat, rng)
				// Larger attention vectors than the default, so the softmax
				// is far from uniform; a nonzero bias.
				g := l.(*GAT)
				for k := range g.AttnL.W {
					g.AttnL.W[k] *= 4
					g.AttnR.W[k] *= 4
				}
				for k := range g.Bias.W {
					g.Bias.W[k] = float32(k) * 0.1
				}
				// Where a step moves an attention logit across LeakyReLU's
				// kink, one-sided differences or smaller steps (down to
				// 1e-3, where float32 rounding still leaves the 2%
				// tolerance); at most 5% skipped.
				checkGrad(t, g, b, 13, gradOpts{steps: []float32{1e-2, 3e-3, 1e-3}, crossed: g.signs, skip: 0.05})
			})
		}
	}
}

// signs returns, for the last Forward, whether each edge's attention
// logit is on LeakyReLU's positive side, per head.
func (l *GAT) signs() []bool {
	var s []bool
	for i := 0; i < l.ndst; i++ {
		for k := l.b.Ptr[i]; k <= l.b.Ptr[i+1]; k++ {
			j := i
			if k < l.b.Ptr[i+1] {
				j = int(l.b.Nbr[k])
			}
			for h := 0; h < l.heads; h++ {
				s = append(s, l.el[j*l.heads+h]+l.er[i*l.heads+h] > 0)
			}
		}
	}
	return s
}

// naiveGATOut is destination i's output written straight from the
// definition, in float64.
func naiveGATOut(l *GAT, b *block.Block, x []float32, i int) []float64 {
	H, F, in := l.heads, l.f, l.in
	z := func(j, h, f int) float64 {
		s := 0.0
		for k := 0; k < in; k++ {
			s += float64(l.FC.W[(h*F+f)*in+k]) * float64(x[j*in+k])
		}
		return s
	}
	nodes := []int{i}
	for _, j := range b.Nbr[b.Ptr[i]:b.Ptr[i+1]] {
		nodes = append(nodes, int(j))
	}
	heads := make([][]float64, H)
	for h := 0; h < H; h++ {
		er := 0.0
		for f := 0; f < F; f++ {
			er += z(i, h, f) * float64(l.AttnR.W[h*F+f])
		}
		e := make([]float64, len(nodes))
		sum := 0.0
		for n, j := range nodes {
			el := 0.0
			for f := 0; f < F; f++ {
				el += z(j, h, f) * float64(l.AttnL.W[h*F+f])
			}
			v := el + er
			if v < 0 {
				v *= 0.2
			}
			e[n] = math.Exp(v)
			sum += e[n]
		}
		heads[h] = make([]float64, F)
		for n, j := range nodes {
			for f := 0; f < F; f++ {
				heads[h][f] += e[n] / sum * z(j, h, f)
			}
		}
	}
	var out []float64
	if l.concat {
		for h := 0; h < H; h++ {
			out = append(out, heads[h]...)
		}
	} else {
		out = make([]float64, F)
		for h := 0; h < H; h++ {
			for f := 0; f < F; f++ {
				out[f] += heads[h][f] / float64(H)
			}
		}
	}
	for k := range out {
		out[k] += float64(l.Bias.W[k])
	}
	return out
}

func TestGATReference(t *testing.T) {
	defer func() { Workers = 2 }()
	for _, c := range []struct {
		concat      bool
		f, heads, w int
	}{
		{true, 4, 3, 1}, {true, 4, 3, 2}, {false, 4, 3, 1}, {false, 4, 3, 2},
		{true, 16, 2, 2}, {false, 8, 3, 2}, // F a multiple of 8: the AVX2 dot
		{false, 11, 2, 2}, // AVX2 over 8, Go over 3
	} {
		concat := c.concat
		Workers = c.w
		rng := rand.New(rand.NewPCG(31, 32))
		b := degreeBlock(150, 400, 9, false, rng)
		l := NewGAT("g", 5, c.f, c.heads, concat, rng).(*GAT)
		for k := range l.AttnL.W {
			l.AttnL.W[k] *= 5
			l.AttnR.W[k] *= 5
		}
		for k := range l.Bias.W {
			l.Bias.W[k] = 0.3 * float32(k+1)
		}
		x := make([]float32, b.NumSrc()*5)
		for k := range x {
			x[k] = float32(rng.NormFloat64()) * 3 // large logits: the max shift matters
		}
		out := l.Forward(b, x, false, nil)
		od := l.OutDim()
		require.Len(t, out, 150*od)
		for i := 0; i < b.NumDst; i++ {
			want := naiveGATOut(l, b, x, i)
			for o, v := range want {
				require.InDelta(t, v, out[i*od+o], 2e-5*math.Max(1, math.Abs(v)), "concat %v destination %d (degree %d) output %d", concat, i, b.Ptr[i+1]-b.Ptr[i], o)
			}
		}
	}
}

func TestGATParams(t *testing.T) {
	for _, c := range []struct {
		concat bool
		out    int
	}{{true, 12}, {false, 4}} {
		l := NewGAT("layer1", 5, 4, 3, c.concat, rand.New(rand.NewPCG(1, 1)))
		assert.Equal(t, c.out, l.OutDim())
		assert.Equal(t, 5, l.InDim())
		var names []string
		var shapes [][]int
		for _, p := range l.Params() {
			names = append(names, p.Name)
			shapes = append(shapes, p.Shape)
		}
		assert.Equal(t, []string{"layer1.fc.weight", "layer1.attn_l", "layer1.attn_r", "layer1.bias"}, names)
		assert.Equal(t, [][]int{{12, 5}, {3, 4}, {3, 4}, {c.out}}, shapes)
	}
}

// TestGATSoftmaxStable: logits in the thousands must not overflow.
func TestGATSoftmaxStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	b := degreeBlock(6, 10, 4, false, rng)
	l := NewGAT("g", 3, 2, 2, true, rng).(*GAT)
	x := make([]float32, b.NumSrc()*3)
	for k := range x {
		x[k] = float32(rng.NormFloat64()) * 1000
	}
	for _, v := range l.Forward(b, x, false, nil) {
		require.False(t, math.IsNaN(float64(v)) || math.IsInf(float64(v), 0))
	}
}

// TestDot checks dot against float64 sums at every kernel level, over
// lengths the assembly takes (multiples of 8) and those it leaves to Go.
func TestDot(t *testing.T) {
	defer model.SetLevel(model.SetLevel(model.Generic))
	rng := rand.New(rand.NewPCG(8, 8))
	for _, lvl := range model.SupportedLevels() {
		model.SetLevel(lvl)
		for _, n := range []int{1, 5, 8, 13, 16, 24, 47, 64, 72} {
			x, y := make([]float32, n), make([]float32, n)
			for i := range x {
				x[i], y[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			}
			want := 0.0
			for i := range x {
				want += float64(x[i]) * float64(y[i])
			}
			assert.InDelta(t, want, float64(dot(x, y)), 1e-5*float64(n), "%v dot n %d", lvl, n)
		}
	}
}

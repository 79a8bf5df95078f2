package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/workload"
)

// refSoftplus is log(1 + e^x) in float64, written plainly (the tail
// e^x ≈ 0 or log(1 + e^x) ≈ x + e^{−x} where the plain form would round).
func refSoftplus(x float64) float64 {
	if x > 30 {
		return x + math.Exp(-x)
	}
	return math.Log1p(math.Exp(x))
}

// refWeights are the negatives' weights of the spec: 1/m, or the softmax of
// α·n_k over the row (shifted by its maximum, which changes nothing but
// the overflow).
func refWeights(o workload.Objective, n []float64) []float64 {
	w := make([]float64, len(n))
	if o.Adversarial == 0 {
		for k := range w {
			w[k] = 1 / float64(len(n))
		}
		return w
	}
	mx := math.Inf(-1)
	for _, v := range n {
		mx = math.Max(mx, v)
	}
	var z float64
	for k, v := range n {
		w[k] = math.Exp(o.Adversarial * (v - mx))
		z += w[k]
	}
	for k := range w {
		w[k] /= z
	}
	return w
}

// refRowLoss is one row's loss in float64 from the spec's formulas, with
// the negatives' weights w (nil: refWeights).
func refRowLoss(o workload.Objective, p float64, n, w []float64) float64 {
	if w == nil && o.LossKind() != workload.Softmax {
		w = refWeights(o, n)
	}
	m := float64(len(n))
	switch o.LossKind() {
	case workload.Softmax:
		mx := p
		for _, v := range n {
			mx = math.Max(mx, v)
		}
		z := math.Exp(p - mx)
		for _, v := range n {
			z += math.Exp(v - mx)
		}
		return mx + math.Log(z) - p
	case workload.Ranking:
		var l float64
		for k, v := range n {
			l += w[k] * m * math.Max(0, o.Margin-p+v)
		}
		return l
	case workload.Logistic:
		l := refSoftplus(-(p + o.Margin))
		for k, v := range n {
			l += w[k] * refSoftplus(v+o.Margin)
		}
		return l
	}
	return math.NaN()
}

var testObjectives = []workload.Objective{
	{},
	{Loss: workload.Softmax},
	{Loss: workload.Ranking, Margin: 0.1},
	{Loss: workload.Ranking, Margin: 1},
	{Loss: workload.Ranking, Margin: 0.5, Adversarial: 1},
	{Loss: workload.Ranking, Adversarial: 0.3},
	{Loss: workload.Logistic},
	{Loss: workload.Logistic, Margin: 2},
	{Loss: workload.Logistic, Adversarial: 1},
	{Loss: workload.Logistic, Margin: 6, Adversarial: 0.5},
}

func objName(o workload.Objective) string {
	return fmt.Sprintf("%s/margin=%g/adv=%g", o.LossKind(), o.Margin, o.Adversarial)
}

func TestRowLoss(t *testing.T) { eachLevel(t, testRowLoss) }

// testRowLoss checks each loss's value against refRowLoss and its gradient
// against central differences of refRowLoss with the weights held at the
// row's (the self-adversarial weights are constants of the gradient).
func testRowLoss(t *testing.T) {
	for _, o := range testObjectives {
		for _, m := range []int{1, 2, 7, 33, advKeep + 77} { // the last: weights exponentiated twice
			for _, scale := range []float32{0.3, 3} {
				t.Run(fmt.Sprintf("%s/m=%d/scale=%g", objName(o), m, scale), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(m), uint64(scale*10)))
					p := scale * float32(rng.NormFloat64())
					row := randVec(rng, m, scale)
					pf, nf := float64(p), f64(row)
					w := refWeights(o, nf)
					want := refRowLoss(o, pf, nf, nil)

					l, gp := rowLoss(&o, p, row)
					assert.InDelta(t, want, l, 1e-5*math.Max(1, math.Abs(want)))

					const h = 1e-6
					fd := func(x *float64) float64 {
						orig := *x
						*x = orig + h
						lp := refRowLoss(o, pf, nf, w)
						*x = orig - h
						lm := refRowLoss(o, pf, nf, w)
						*x = orig
						return (lp - lm) / (2 * h)
					}
					// The ranking loss has kinks at margin − p + n_k = 0;
					// random scores sit far from them (checked).
					if o.LossKind() == workload.Ranking {
						for _, v := range nf {
							require.Greater(t, math.Abs(o.Margin-pf+v), 1e-4)
						}
					}
					g := fd(&pf)
					assert.InDelta(t, g, float64(gp), 1e-4+1e-4*math.Abs(g), "dL/dp")
					for k := range nf {
						g := fd(&nf[k])
						assert.InDelta(t, g, float64(row[k]), 1e-4+1e-4*math.Abs(g), "dL/dn[%d]", k)
					}
				})
			}
		}
	}
}

// TestRowLossSoftmaxUnchanged checks that the zero Objective and an explicit
// softmax are today's softmaxRow, bit for bit.
func TestRowLossSoftmaxUnchanged(t *testing.T) {
	eachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 9))
		for _, o := range []workload.Objective{{}, {Loss: workload.Softmax}} {
			row := randVec(rng, 37, 2)
			ref := append([]float32(nil), row...)
			l, g := rowLoss(&o, 0.7, row)
			lr, gr := softmaxRow(0.7, ref)
			assert.Equal(t, math.Float64bits(lr), math.Float64bits(l))
			assert.Equal(t, math.Float32bits(gr), math.Float32bits(g))
			for k := range row {
				assert.Equal(t, math.Float32bits(ref[k]), math.Float32bits(row[k]))
			}
		}
	})
}

func TestRowLossEdgeCases(t *testing.T) { eachLevel(t, testRowLossEdgeCases) }

func testRowLossEdgeCases(t *testing.T) {
	nan := float32(math.NaN())
	for _, o := range testObjectives {
		t.Run(objName(o), func(t *testing.T) {
			// No negatives: softmax and ranking lose nothing, logistic
			// only the positive's term.
			l, gp := rowLoss(&o, 0.25, nil)
			switch o.LossKind() {
			case workload.Logistic:
				assert.InDelta(t, refSoftplus(-(0.25 + o.Margin)), l, 1e-7)
				assert.InDelta(t, -1/(1+math.Exp(0.25+o.Margin)), gp, 1e-7)
			default:
				assert.Zero(t, l)
				assert.Zero(t, gp)
			}

			// Huge scores stay finite and match the reference.
			for _, tc := range []struct {
				p   float32
				row []float32
			}{
				{1e4, []float32{-1e4, 3, 1e4 - 1}},
				{-1e4, []float32{1e4, -3, -1e4}},
				{88, []float32{-88, 87, 100, -100}},
				{-200, []float32{-300, -250, -199}},
			} {
				want := refRowLoss(o, float64(tc.p), f64(tc.row), nil)
				row := append([]float32(nil), tc.row...)
				l, gp := rowLoss(&o, tc.p, row)
				assert.False(t, math.IsNaN(l) || math.IsInf(l, 0), "loss %v", l)
				assert.InDelta(t, want, l, 1e-5*math.Max(1, math.Abs(want)), "p=%g row=%v", tc.p, tc.row)
				for _, g := range append(row, gp) {
					assert.False(t, math.IsNaN(float64(g)) || math.IsInf(float64(g), 0), "gradient %v", g)
				}
			}

			// NaN in, NaN out: in the positive or in any negative.
			l, _ = rowLoss(&o, nan, []float32{0.1, 0.2})
			assert.True(t, math.IsNaN(l), "NaN positive: loss %v", l)
			for k := 0; k < 3; k++ {
				row := []float32{0.1, -0.2, 0.3}
				row[k] = nan
				l, gp := rowLoss(&o, 0.5, row)
				assert.True(t, math.IsNaN(l), "NaN negative %d: loss %v", k, l)
				if o.LossKind() != workload.Softmax || k == 0 {
					assert.True(t, math.IsNaN(float64(gp)) || math.IsNaN(float64(row[k])), "NaN negative %d: gradient %v, %v", k, gp, row)
				}
			}
		})
	}
	// An unknown loss is NaN, not a silent softmax.
	l, gp := rowLoss(&workload.Objective{Loss: "hinge"}, 0, []float32{1})
	assert.True(t, math.IsNaN(l))
	assert.True(t, math.IsNaN(float64(gp)))
}

// TestRowLossRankingKink checks that the hinge's gradient is 0 at its kink
// and that self-adversarial weights over equal scores give PBG's ranking
// loss.
func TestRowLossRankingKink(t *testing.T) {
	o := workload.Objective{Loss: workload.Ranking, Margin: 0.5}
	row := []float32{0.5, 1, 0}
	l, gp := rowLoss(&o, 1, row) // hinges 0, 0.5, −0.5
	assert.InDelta(t, 0.5, l, 1e-7)
	assert.Equal(t, []float32{0, 1, 0}, row)
	assert.Equal(t, float32(-1), gp)

	adv := workload.Objective{Loss: workload.Ranking, Margin: 0.5, Adversarial: 2}
	eq := []float32{0.2, 0.2, 0.2, 0.2}
	la, ga := rowLoss(&adv, 0, eq)
	lp, gpp := rowLoss(&o, 0, []float32{0.2, 0.2, 0.2, 0.2})
	assert.InDelta(t, lp, la, 1e-6)
	assert.InDelta(t, gpp, ga, 1e-6)
}

func TestLog1pUnit(t *testing.T) {
	for y := float32(0); y <= 1; y += 1.0 / 1024 {
		want := math.Log1p(float64(y))
		assert.InDelta(t, want, log1pUnit(y), 1e-12+2e-10*want, "y=%g", y)
	}
	assert.True(t, math.IsNaN(log1pUnit(float32(math.NaN()))))
}

func TestLog1pPoly(t *testing.T) {
	for y := float32(0); y <= 1; y += 1.0 / 4096 {
		assert.InDelta(t, math.Log1p(float64(y)), float64(log1pPoly(y)), 2e-7, "y=%g", y)
	}
	assert.Zero(t, log1pPoly(0))
	assert.True(t, math.IsNaN(float64(log1pPoly(float32(math.NaN())))))
}

func TestRowLossNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	row := randVec(rng, 100, 1)
	for _, o := range testObjectives {
		allocs := testing.AllocsPerRun(20, func() { rowLoss(&o, 0.1, row) })
		assert.Zero(t, allocs, objName(o))
	}
}

// BenchmarkRowLoss is one row of 1,000 negatives under each loss (softmax
// at the active SIMD level).
func BenchmarkRowLoss(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	src := randVec(rng, 1000, 2)
	row := make([]float32, len(src))
	for _, o := range []workload.Objective{
		{Loss: workload.Softmax},
		{Loss: workload.Ranking, Margin: 0.1},
		{Loss: workload.Ranking, Margin: 0.1, Adversarial: 1},
		{Loss: workload.Logistic},
		{Loss: workload.Logistic, Adversarial: 1},
	} {
		b.Run(objName(o), func(b *testing.B) {
			b.SetBytes(int64(4 * len(row)))
			for i := 0; i < b.N; i++ {
				copy(row, src)
				rowLoss(&o, 0.3, row)
			}
		})
	}
}

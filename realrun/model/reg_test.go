package model

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/workload"
)

// refPenalty is the regularisation of a chunk's n positive edges in
// float64, written from the spec: λ·Σ_i P(s_i) + P(d_i) + P(r_i).
func refPenalty(k workload.Model, o workload.Objective, d int, S, R, D []float64, n int) float64 {
	reg := o.Reg()
	if reg == workload.RegNone {
		return 0
	}
	// p is P over v, as d-wide complex [re | im] rows when cplx.
	p := func(v []float64, cplx bool) float64 {
		var s float64
		if reg == workload.RegL2 {
			for _, x := range v {
				s += x * x
			}
			return s
		}
		if !cplx {
			for _, x := range v {
				s += math.Pow(math.Abs(x), 3)
			}
			return s
		}
		for o := 0; o < len(v); o += d {
			for j := 0; j < d/2; j++ {
				s += math.Pow(cmplx.Abs(complex(v[o+j], v[o+d/2+j])), 3)
			}
		}
		return s
	}
	w := k.RelWidth(d)
	var L float64
	for i := 0; i < n; i++ {
		L += p(S[i*d:i*d+d], k.Complex()) + p(D[i*d:i*d+d], k.Complex())
		if w > 0 && k.Operator() != workload.OpRotate {
			L += p(R[i*w:i*w+w], k.Operator() == workload.OpComplexDiagonal)
		}
	}
	return o.RegCoef * L
}

// regModels are the named models and PBG pairs of every operator.
var regModels = append(append([]workload.Model(nil), workload.Models...),
	"linear+cos", "affine+dot", "complex_diagonal+cos", "translation+squared_l2", "diagonal+l2", "none+l1")

func TestRegularize(t *testing.T) {
	const n, d = 3, 4
	for _, k := range regModels {
		require.True(t, k.Valid(), k)
		for _, o := range []workload.Objective{
			{Regularizer: workload.RegL2, RegCoef: 0.3},
			{Regularizer: workload.RegN3, RegCoef: 0.7},
		} {
			t.Run(string(k)+"/"+string(o.Reg()), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(len(k)), 17))
				w := k.RelWidth(d)
				S, R, D := randVec(rng, n*d, 1), randVec(rng, n*w, 1), randVec(rng, n*d, 1)
				// The gradients start non-zero: regularize adds into them.
				g0S, g0R, g0D := randVec(rng, n*d, 1), randVec(rng, n*w, 1), randVec(rng, n*d, 1)
				gS, gR, gD := append([]float32(nil), g0S...), append([]float32(nil), g0R...), append([]float32(nil), g0D...)
				if w == 0 {
					R, gR = nil, nil
				}
				pen := regularize(k, &o, d, S, R, D, n, gS, gR, gD)

				s, r, dd := f64(S), f64(R), f64(D)
				want := refPenalty(k, o, d, s, r, dd, n)
				assert.Greater(t, want, 0.0)
				assert.InDelta(t, want, pen, 1e-5*want)

				const h = 1e-6
				check := func(name string, x []float64, g, g0 []float32) {
					for i := range x {
						orig := x[i]
						x[i] = orig + h
						lp := refPenalty(k, o, d, s, r, dd, n)
						x[i] = orig - h
						lm := refPenalty(k, o, d, s, r, dd, n)
						x[i] = orig
						fd := (lp - lm) / (2 * h)
						assert.InDelta(t, fd, float64(g[i]-g0[i]), 1e-4+1e-4*math.Abs(fd), "%s[%d]", name, i)
					}
				}
				check("S", s, gS, g0S)
				check("D", dd, gD, g0D)
				check("R", r, gR, g0R)
				if k == workload.RotatE {
					assert.Equal(t, g0R, gR, "RotatE's phases are not penalised")
				}
			})
		}
	}
}

func TestRegularizeEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const n, d = 2, 4
	S, R, D := randVec(rng, n*d, 1), randVec(rng, n*d, 1), randVec(rng, n*d, 1)
	gS, gR, gD := make([]float32, n*d), make([]float32, n*d), make([]float32, n*d)
	zero := make([]float32, n*d)
	for _, o := range []workload.Objective{{}, {Regularizer: workload.RegNone}, {Loss: workload.Ranking, Margin: 1}} {
		assert.Zero(t, regularize(workload.DistMult, &o, d, S, R, D, n, gS, gR, gD))
	}
	l2 := workload.Objective{Regularizer: workload.RegL2, RegCoef: 1}
	assert.Zero(t, regularize(workload.DistMult, &l2, d, nil, nil, nil, 0, nil, nil, nil))
	assert.Equal(t, zero, gS)
	assert.Equal(t, zero, gR)
	assert.Equal(t, zero, gD)
	bad := workload.Objective{Regularizer: "l1", RegCoef: 1}
	assert.True(t, math.IsNaN(regularize(workload.DistMult, &bad, d, S, R, D, n, gS, gR, gD)))
	// NaN in, NaN out.
	S[3] = float32(math.NaN())
	for _, o := range []workload.Objective{l2, {Regularizer: workload.RegN3, RegCoef: 1}} {
		for _, k := range []workload.Model{workload.DistMult, workload.ComplEx} {
			assert.True(t, math.IsNaN(regularize(k, &o, d, S, R, D, n, gS, gR, gD)), "%s %s", k, o.Reg())
		}
	}
}

func TestRegularizeNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	const n, d = 10, 16
	for _, k := range regModels {
		w := k.RelWidth(d)
		S, R, D := randVec(rng, n*d, 1), randVec(rng, n*w, 1), randVec(rng, n*d, 1)
		gS, gR, gD := make([]float32, n*d), make([]float32, n*w), make([]float32, n*d)
		for _, o := range []workload.Objective{{Regularizer: workload.RegL2, RegCoef: 1}, {Regularizer: workload.RegN3, RegCoef: 1}} {
			allocs := testing.AllocsPerRun(10, func() { regularize(k, &o, d, S, R, D, n, gS, gR, gD) })
			assert.Zero(t, allocs, "%s %s", k, o.Reg())
		}
	}
}

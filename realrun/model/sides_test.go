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

// sidesObjectives are the objectives the ChunkGradSides tests run: every
// loss, with and without self-adversarial weights, and both regularisers.
func sidesObjectives() []workload.Objective {
	return []workload.Objective{
		{},
		{Loss: workload.Ranking, Margin: 1},
		{Loss: workload.Ranking, Margin: 0.5, Adversarial: 1},
		{Loss: workload.Logistic, Margin: 2},
		{Loss: workload.Logistic, Adversarial: 0.5},
		{Regularizer: workload.RegL2, RegCoef: 0.05},
		{Loss: workload.Logistic, Regularizer: workload.RegN3, RegCoef: 0.05},
	}
}

func objString(o workload.Objective) string {
	return fmt.Sprintf("%s-m%g-a%g-%s%g", o.LossKind(), o.Margin, o.Adversarial, o.Regularizer, o.RegCoef)
}

func bitsEqual(t *testing.T, want, got []float32, msg string) {
	t.Helper()
	require.Equal(t, len(want), len(got), msg)
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			t.Fatalf("%s[%d]: %v (%#x) != %v (%#x)", msg, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// TestChunkGradSidesSameAsChunkGrad: ChunkGradSides with the same
// negatives on both sides, given as two distinct slices with the same
// values and two distinct gradient slices summed afterwards, or as one
// slice, is ChunkGrad bit for bit (loss and every gradient), for every
// model and objective at every level.
func TestChunkGradSidesSameAsChunkGrad(t *testing.T) {
	type shape struct{ d, n, m int }
	shapes := []shape{{18, 7, 33}, {34, 20, 40}, {16, 5, 0}}
	eachLevel(t, func(t *testing.T) {
		for _, k := range allModels() {
			for _, o := range sidesObjectives() {
				for _, s := range shapes {
					rng := rand.New(rand.NewPCG(uint64(s.d), uint64(len(k))))
					c := newChunkK(rng, k, s.d, s.n, s.m, 0.5)
					name := fmt.Sprintf("%s/%s/%v", k, objString(o), s)
					want := ChunkGrad(k, o, s.d, c.S, c.R, c.D, c.N, s.n, s.m, c.gS, c.gR, c.gD, c.gN, NewScratch())

					// One slice for both sides.
					one := newChunkK(rng, k, s.d, s.n, s.m, 0.5)
					one.zeroGrad()
					got := ChunkGradSides(k, o, s.d, c.S, c.R, c.D, c.N, c.N, s.n, s.m, one.gS, one.gR, one.gD, one.gN, one.gN, NewScratch())
					require.Equal(t, math.Float32bits(want), math.Float32bits(got), "%s loss", name)
					bitsEqual(t, c.gS, one.gS, name+" gS")
					bitsEqual(t, c.gD, one.gD, name+" gD")
					bitsEqual(t, c.gR, one.gR, name+" gR")
					bitsEqual(t, c.gN, one.gN, name+" gN")

					// A copy of N for the source side, one gradient slice:
					// the preparation is redone for the copy, with the
					// same bits.
					cp := append([]float32(nil), c.N...)
					one.zeroGrad()
					sc := NewScratch()
					got = ChunkGradSides(k, o, s.d, c.S, c.R, c.D, c.N, cp, s.n, s.m, one.gS, one.gR, one.gD, one.gN, one.gN, sc)
					require.Equal(t, math.Float32bits(want), math.Float32bits(got), "%s loss (copy)", name)
					bitsEqual(t, c.gS, one.gS, name+" gS (copy)")
					bitsEqual(t, c.gR, one.gR, name+" gR (copy)")
					bitsEqual(t, c.gN, one.gN, name+" gN (copy)")
				}
			}
		}
	})
}

// TestChunkGradSidesGradients: with two different negative sets, the loss
// against the float64 reference (each side scored against its own set)
// and every gradient against its central differences, for every model
// under the softmax, ranking and logistic losses and both regularisers, at
// every level; a negative set's gradient is zero where the other side's
// set alone would move.
func TestChunkGradSidesGradients(t *testing.T) {
	type obj struct {
		o   workload.Objective
		rl  func(p float64, negs []float64) float64
		reg workload.Regularizer
	}
	objs := []obj{
		{workload.Objective{}, refSoftmax, ""},
		{workload.Objective{Loss: workload.Ranking, Margin: 1}, refRanking(1), ""},
		{workload.Objective{Loss: workload.Logistic, Margin: 2}, refLogistic(2), ""},
		{workload.Objective{Regularizer: workload.RegL2, RegCoef: 0.05}, refSoftmax, workload.RegL2},
		{workload.Objective{Loss: workload.Logistic, Regularizer: workload.RegN3, RegCoef: 0.05}, refLogistic(0), workload.RegN3},
	}
	const n, m, d = 3, 4, 6
	eachLevel(t, func(t *testing.T) {
		for _, k := range allModels() {
			for oi, ob := range objs {
				t.Run(fmt.Sprintf("%s/%d", k, oi), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(41, uint64(len(k)+oi)))
					c := newChunkK(rng, k, d, n, m, 1)
					Nsrc := randVec(rng, m*d, 1)
					gNsrc := make([]float32, m*d)
					L := ChunkGradSides(k, ob.o, d, c.S, c.R, c.D, c.N, Nsrc, n, m, c.gS, c.gR, c.gD, c.gN, gNsrc, NewScratch())
					S, R, D, Nd, Ns := f64(c.S), f64(c.R), f64(c.D), f64(c.N), f64(Nsrc)
					var reg func(S, R, D []float64) float64
					if ob.reg != "" {
						reg = refChunkPenalty(k, ob.reg, 0.05, d)
					}
					total := func() float64 {
						var L float64
						refRowsSides(k, d, S, R, D, Nd, Ns, n, m, func(_ int, p float64, negs []float64) { L += ob.rl(p, negs) })
						if reg != nil {
							L += reg(S, R, D)
						}
						return L
					}
					want := total()
					require.InDelta(t, want, float64(L), 1e-4*math.Max(1, math.Abs(want)), "loss")
					const h = 1e-5
					check := func(name string, x []float64, g []float32) {
						for i := range x {
							orig := x[i]
							x[i] = orig + h
							lp := total()
							x[i] = orig - h
							lm := total()
							x[i] = orig
							fd := (lp - lm) / (2 * h)
							assert.InDelta(t, fd, float64(g[i]), 2e-4+2e-4*math.Abs(fd), "%s[%d]", name, i)
						}
					}
					check("S", S, c.gS)
					check("D", D, c.gD)
					check("R", R, c.gR)
					check("Ndst", Nd, c.gN)
					check("Nsrc", Ns, gNsrc)
				})
			}
		}
	})
}

// TestChunkGradSidesNoAllocs: no allocation per chunk with two negative
// sets once the Scratch has grown.
func TestChunkGradSidesNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	eachLevel(t, func(t *testing.T) {
		for _, k := range allModels() {
			c := newChunkK(rng, k, 16, 10, 20, 1)
			Nsrc, gNsrc := randVec(rng, 20*16, 1), make([]float32, 20*16)
			sc := NewScratch()
			allocs := testing.AllocsPerRun(5, func() {
				ChunkGradSides(k, workload.Objective{}, 16, c.S, c.R, c.D, c.N, Nsrc, 10, 20, c.gS, c.gR, c.gD, c.gN, gNsrc, sc)
			})
			assert.Zero(t, allocs, k)
		}
	})
}

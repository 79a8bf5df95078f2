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

// naiveObjectiveLoss is the float64 reference of ChunkGrad's loss under the
// objective o: every destination-side and source-side row (refQuery and
// refCmp, so a PBG pair's source side takes its right-hand operator)
// through refRowLoss, plus refPenalty. W, when not nil, holds each row's
// negative weights (rows 2i and 2i+1: edge i's destination and source
// side), held constant as the gradient holds the self-adversarial weights;
// it returns the weights it used.
func naiveObjectiveLoss(k workload.Model, o workload.Objective, d int, S, R, D, N []float64, n, m int, W [][]float64) (float64, [][]float64) {
	if W == nil {
		W = make([][]float64, 2*n)
	}
	var L float64
	refRows(k, d, S, R, D, N, n, m, func(row int, p float64, negs []float64) {
		if W[row] == nil && o.LossKind() != workload.Softmax {
			W[row] = refWeights(o, negs)
		}
		L += refRowLoss(o, p, negs, W[row])
	})
	return L + refPenalty(k, o, d, S, R, D, n), W
}

// TestChunkGradObjectives checks ChunkGrad's loss and gradients under the
// ranking and logistic losses and both regularizers against central
// differences of naiveObjectiveLoss, at every SIMD level: the losses flow
// through the whole chunk, for DistMult and ComplEx (GEMM comparator dot),
// TransE-L2 (l2), RotatE (modulus_l1, unpenalised phases) and two PBG pairs
// (linear+cos; complex_diagonal+l1, whose two operators n3 takes as moduli).
func TestChunkGradObjectives(t *testing.T) { eachLevel(t, testChunkGradObjectives) }

func testChunkGradObjectives(t *testing.T) {
	const n, m, d = 3, 5, 6
	objectives := []workload.Objective{
		{Loss: workload.Ranking, Margin: 0.1},
		{Loss: workload.Ranking, Margin: 1, Adversarial: 1, Regularizer: workload.RegN3, RegCoef: 0.05},
		{Loss: workload.Logistic},
		{Loss: workload.Logistic, Adversarial: 1},
		{Loss: workload.Logistic, Margin: 2, Regularizer: workload.RegL2, RegCoef: 0.1},
		{Loss: workload.Logistic, Adversarial: 1, Regularizer: workload.RegN3, RegCoef: 0.1},
		{Loss: workload.Softmax, Regularizer: workload.RegL2, RegCoef: 0.01},
		{Loss: workload.Ranking, Margin: 0.1, Regularizer: workload.RegL2, RegCoef: 0.2},
	}
	for _, k := range []workload.Model{workload.DistMult, workload.ComplEx, workload.TransEL2, workload.RotatE, "linear+cos", "complex_diagonal+l1"} {
		for oi, o := range objectives {
			require.NoError(t, o.Validate(k))
			t.Run(fmt.Sprintf("%s/%s/reg=%s", k, objName(o), o.Reg()), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(oi), uint64(len(k))))
				c := newChunk(rng, k, d, n, m, 1)
				L := ChunkGrad(k, o, d, c.S, c.R, c.D, c.N, n, m, c.gS, c.gR, c.gD, c.gN, NewScratch())

				S, R, D, N := f64(c.S), f64(c.R), f64(c.D), f64(c.N)
				want, W := naiveObjectiveLoss(k, o, d, S, R, D, N, n, m, nil)
				assert.InDelta(t, want, float64(L), 1e-4*math.Max(1, math.Abs(want)))

				const h = 1e-6
				check := func(name string, x []float64, g []float32) {
					for i := range x {
						orig := x[i]
						x[i] = orig + h
						lp, _ := naiveObjectiveLoss(k, o, d, S, R, D, N, n, m, W)
						x[i] = orig - h
						lm, _ := naiveObjectiveLoss(k, o, d, S, R, D, N, n, m, W)
						x[i] = orig
						fd := (lp - lm) / (2 * h)
						assert.InDelta(t, fd, float64(g[i]), 1e-4+1e-4*math.Abs(fd), "%s[%d]", name, i)
					}
				}
				check("S", S, c.gS)
				check("R", R, c.gR)
				check("D", D, c.gD)
				check("N", N, c.gN)
			})
		}
	}
}

// TestObjectivesDecrease trains one chunk a few Adagrad steps under each
// loss: the loss falls.
func TestObjectivesDecrease(t *testing.T) {
	const n, m, d = 8, 16, 10
	for _, k := range []workload.Model{workload.DistMult, workload.ComplEx} {
		for _, o := range []workload.Objective{
			{Loss: workload.Ranking, Margin: 0.1},
			{Loss: workload.Logistic},
			{Loss: workload.Logistic, Adversarial: 1, Regularizer: workload.RegN3, RegCoef: 1e-3},
		} {
			t.Run(string(k)+"/"+objName(o), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(11, 12))
				c := newChunk(rng, k, d, n, m, 0.5)
				ws := [][]float32{c.S, c.D, c.N, c.R}
				gs := [][]float32{c.gS, c.gD, c.gN, c.gR}
				st := make([][]float32, len(ws))
				for i := range ws {
					st[i] = make([]float32, len(ws[i]))
				}
				sc := NewScratch()
				var first, last float32
				for step := 0; step < 30; step++ {
					c.zeroGrad()
					last = ChunkGrad(k, o, d, c.S, c.R, c.D, c.N, n, m, c.gS, c.gR, c.gD, c.gN, sc)
					if step == 0 {
						first = last
					}
					for i := range ws {
						Adagrad(ws[i], st[i], gs[i], 0.05, 1e-8)
					}
				}
				assert.Less(t, last, 0.8*first)
			})
		}
	}
}

func TestChunkGradObjectiveNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []workload.Model{workload.DistMult, workload.ComplEx, workload.TransEL2, workload.RotatE, "linear+cos"} {
		c := newChunk(rng, k, 16, 10, 20, 1)
		sc := NewScratch()
		for _, o := range []workload.Objective{
			{Loss: workload.Ranking, Margin: 0.1, Adversarial: 1, Regularizer: workload.RegL2, RegCoef: 1e-3},
			{Loss: workload.Logistic, Adversarial: 1, Regularizer: workload.RegN3, RegCoef: 1e-3},
		} {
			allocs := testing.AllocsPerRun(10, func() {
				ChunkGrad(k, o, 16, c.S, c.R, c.D, c.N, 10, 20, c.gS, c.gR, c.gD, c.gN, sc)
			})
			assert.Zero(t, allocs, "%s %s", k, objName(o))
		}
	}
}

// BenchmarkChunkGradObjectives is one DistMult chunk (d = 100, 100 edges,
// 100 negatives: realrun's defaults) at the active level under each loss;
// cpu-edges/s counts by the thread's CPU time, which a shared machine
// disturbs less than the wall clock.
func BenchmarkChunkGradObjectives(b *testing.B) {
	const n, m, d = 100, 100, 100
	k := workload.DistMult
	for _, o := range []workload.Objective{
		{Loss: workload.Softmax},
		{Loss: workload.Ranking, Margin: 0.1},
		{Loss: workload.Logistic},
		{Loss: workload.Logistic, Adversarial: 1},
		{Loss: workload.Logistic, Adversarial: 1, Regularizer: workload.RegN3, RegCoef: 1e-3},
	} {
		b.Run(fmt.Sprintf("%s/reg=%s", objName(o), o.Reg()), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			c := newChunk(rng, k, d, n, m, 0.1)
			sc := NewScratch()
			ChunkGrad(k, o, d, c.S, c.R, c.D, c.N, n, m, c.gS, c.gR, c.gD, c.gN, sc)
			b.ResetTimer()
			cpu := cpuLoop(b, func() { ChunkGrad(k, o, d, c.S, c.R, c.D, c.N, n, m, c.gS, c.gR, c.gD, c.gN, sc) })
			b.ReportMetric(float64(n)*float64(b.N)/cpu, "cpu-edges/s")
		})
	}
}

package model

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/workload"
)

// allModels is every score function: the named models and every PBG pair.
func allModels() []workload.Model {
	ms := append([]workload.Model(nil), workload.Models...)
	for _, op := range workload.Operators {
		for _, c := range workload.Comparators {
			m, err := workload.ParseTriple(string(op), string(c))
			if err != nil {
				panic(err)
			}
			if !m.Named() {
				ms = append(ms, m)
			}
		}
	}
	return ms
}

// newChunkK is newChunk with relation rows of k's width.
func newChunkK(rng *rand.Rand, k workload.Model, d, n, m int, scale float32) *chunk {
	c := &chunk{
		S: randVec(rng, n*d, scale), D: randVec(rng, n*d, scale), N: randVec(rng, m*d, scale),
		gS: make([]float32, n*d), gD: make([]float32, n*d), gN: make([]float32, m*d),
	}
	if w := k.RelWidth(d); w > 0 {
		c.R = randVec(rng, n*w, scale)
		c.gR = make([]float32, n*w)
	}
	return c
}

// refOp is the float64 reference of an operator: op(x; p), adj the named
// model's source-side form.
func refOp(op workload.Operator, adj bool, x, p []float64) []float64 {
	d := len(x)
	q := make([]float64, d)
	h := d / 2
	switch op {
	case workload.OpNone:
		copy(q, x)
	case workload.OpDiagonal:
		for j := range x {
			q[j] = x[j] * p[j]
		}
	case workload.OpTranslation:
		for j := range x {
			if adj {
				q[j] = x[j] - p[j]
			} else {
				q[j] = x[j] + p[j]
			}
		}
	case workload.OpLinear, workload.OpAffine:
		for j := 0; j < d; j++ {
			for l := 0; l < d; l++ {
				q[j] += p[j*d+l] * x[l]
			}
			if op == workload.OpAffine {
				q[j] += p[d*d+j]
			}
		}
	case workload.OpComplexDiagonal:
		for j := 0; j < h; j++ {
			z := complex(x[j], x[h+j]) * complex(p[j], p[h+j])
			if adj { // ComplEx's source side: (Re, −Im) of r·conj(x)
				z = cmplx.Conj(complex(p[j], p[h+j]) * cmplx.Conj(complex(x[j], x[h+j])))
			}
			q[j], q[h+j] = real(z), imag(z)
		}
	case workload.OpRotate:
		for j := 0; j < h; j++ {
			th := p[j]
			if adj {
				th = -th
			}
			z := complex(x[j], x[h+j]) * complex(math.Cos(th), math.Sin(th))
			q[j], q[h+j] = real(z), imag(z)
		}
	}
	return q
}

// refCmp is the float64 reference of a comparator.
func refCmp(c workload.Comparator, q, x []float64) float64 {
	var dot, qn, xn, d2, l1 float64
	for j := range q {
		dot += q[j] * x[j]
		qn += q[j] * q[j]
		xn += x[j] * x[j]
		d2 += (q[j] - x[j]) * (q[j] - x[j])
		l1 += math.Abs(q[j] - x[j])
	}
	switch c {
	case workload.CmpDot:
		return dot
	case workload.CmpCos:
		return dot / (math.Max(math.Sqrt(qn), 1e-30) * math.Max(math.Sqrt(xn), 1e-30))
	case workload.CmpL2:
		return -math.Sqrt(math.Max(d2, 1e-30))
	case workload.CmpSquaredL2:
		return -d2
	case workload.CmpL1:
		return -l1
	case workload.CmpModulusL1:
		h := len(q) / 2
		var s float64
		for j := 0; j < h; j++ {
			a, b := q[j]-x[j], q[h+j]-x[h+j]
			s += math.Sqrt(math.Max(a*a+b*b, 1e-30))
		}
		return -s
	}
	return math.NaN()
}

// refQuery is the reference query of one edge on a side.
func refQuery(k workload.Model, d int, s, r, dst []float64, side Side) []float64 {
	op := k.Operator()
	w := workload.OperatorWidth(op, d)
	if side == DstSide {
		var p []float64
		if w > 0 {
			p = r[:w]
		}
		return refOp(op, false, s, p)
	}
	if k.Named() {
		var p []float64
		if w > 0 {
			p = r[:w]
		}
		return refOp(op, true, dst, p)
	}
	var p []float64
	if w > 0 {
		p = r[w : 2*w]
	}
	return refOp(op, false, dst, p)
}

// refScore is the reference f(s, r, d) as the given side computes it.
func refScore(k workload.Model, d int, s, r, dst []float64, side Side) float64 {
	q := refQuery(k, d, s, r, dst, side)
	if side == DstSide {
		return refCmp(k.Comparator(), q, dst)
	}
	return refCmp(k.Comparator(), q, s)
}

// refSoftmax is the softmax row loss.
func refSoftmax(p float64, negs []float64) float64 {
	mx := p
	for _, v := range negs {
		mx = math.Max(mx, v)
	}
	z := math.Exp(p - mx)
	for _, v := range negs {
		z += math.Exp(v - mx)
	}
	return mx + math.Log(z) - p
}

// refRows calls f with every query row of a chunk in the float64
// reference: row 2i is edge i's destination side, 2i+1 its source side, p
// the positive score and negs the m negatives' scores.
func refRows(k workload.Model, d int, S, R, D, N []float64, n, m int, f func(row int, p float64, negs []float64)) {
	refRowsSides(k, d, S, R, D, N, N, n, m, f)
}

// refRowsSides is refRows with each side's own negatives: the destination
// side's queries scored against Ndst, the source side's against Nsrc
// (ChunkGradSides).
func refRowsSides(k workload.Model, d int, S, R, D, Ndst, Nsrc []float64, n, m int, f func(row int, p float64, negs []float64)) {
	w := k.RelWidth(d)
	row := func(a []float64, i, w int) []float64 { return a[i*w : i*w+w] }
	for i := 0; i < n; i++ {
		s, dst := row(S, i, d), row(D, i, d)
		var r []float64
		if w > 0 {
			r = row(R, i, w)
		}
		for si, side := range []Side{DstSide, SrcSide} {
			q := refQuery(k, d, s, r, dst, side)
			truth, N := dst, Ndst
			if side == SrcSide {
				truth, N = s, Nsrc
			}
			negs := make([]float64, m)
			for j := range negs {
				negs[j] = refCmp(k.Comparator(), q, row(N, j, d))
			}
			f(2*i+si, refCmp(k.Comparator(), q, truth), negs)
		}
	}
}

// refChunkLoss is the float64 reference of ChunkGrad's loss with the row
// loss rl (both sides, no regularisation).
func refChunkLoss(k workload.Model, d int, S, R, D, N []float64, n, m int, rl func(p float64, negs []float64) float64) float64 {
	var L float64
	refRows(k, d, S, R, D, N, n, m, func(_ int, p float64, negs []float64) { L += rl(p, negs) })
	return L
}

// gradCheck compares ChunkGrad's loss and gradients with the float64
// reference and its central differences.
func gradCheck(t *testing.T, k workload.Model, o workload.Objective, rl func(p float64, negs []float64) float64, seed uint64) {
	gradCheckReg(t, k, o, rl, nil, seed)
}

// gradCheckReg is gradCheck with a reference penalty reg(S, R, D) added to
// the loss (nil: none).
func gradCheckReg(t *testing.T, k workload.Model, o workload.Objective, rl func(p float64, negs []float64) float64, reg func(S, R, D []float64) float64, seed uint64) {
	const n, m, d = 3, 4, 6
	rng := rand.New(rand.NewPCG(seed, uint64(len(k))))
	c := newChunkK(rng, k, d, n, m, 1)
	require.NoError(t, CheckChunk(k, d, c.S, c.R, c.D, c.N, n, m, c.gS, c.gR, c.gD, c.gN))
	L := ChunkGrad(k, o, d, c.S, c.R, c.D, c.N, n, m, c.gS, c.gR, c.gD, c.gN, NewScratch())
	S, R, D, N := f64(c.S), f64(c.R), f64(c.D), f64(c.N)
	total := func() float64 {
		L := refChunkLoss(k, d, S, R, D, N, n, m, rl)
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
	check("N", N, c.gN)
	check("R", R, c.gR)
}

// TestChunkGradAllModels: every model's loss and gradients against the
// float64 reference and its central differences, softmax loss, at every
// level.
func TestChunkGradAllModels(t *testing.T) {
	eachLevel(t, func(t *testing.T) {
		for _, k := range allModels() {
			t.Run(string(k), func(t *testing.T) { gradCheck(t, k, workload.Objective{}, refSoftmax, 7) })
		}
	})
}

// TestChunkGradAllModelsLevelsAgree: every level computes the same up to
// float rounding, deterministically, at chunk shapes around the SIMD
// widths.
func TestChunkGradAllModelsLevelsAgree(t *testing.T) {
	type shape struct{ d, n, m int }
	shapes := []shape{{34, 20, 40}, {18, 7, 33}, {2, 1, 1}, {16, 5, 0}, {100, 10, 30}}
	for _, k := range allModels() {
		for _, s := range shapes {
			t.Run(fmt.Sprintf("%s/%v", k, s), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(15, 16))
				c := newChunkK(rng, k, s.d, s.n, s.m, 0.5)
				var ref *chunk
				var refLoss float32
				for _, l := range SupportedLevels() {
					prev := SetLevel(l)
					c.zeroGrad()
					loss := ChunkGrad(k, workload.Objective{}, s.d, c.S, c.R, c.D, c.N, s.n, s.m, c.gS, c.gR, c.gD, c.gN, NewScratch())
					again := newChunkK(rng, k, s.d, s.n, s.m, 0.5)
					again.zeroGrad()
					loss2 := ChunkGrad(k, workload.Objective{}, s.d, c.S, c.R, c.D, c.N, s.n, s.m, again.gS, again.gR, again.gD, again.gN, NewScratch())
					SetLevel(prev)
					require.Equal(t, loss, loss2, "%s deterministic loss", l)
					require.Equal(t, c.gN, again.gN, "%s deterministic gN", l)
					require.Equal(t, c.gR, again.gR, "%s deterministic gR", l)
					require.False(t, math.IsNaN(float64(loss)), "%s loss NaN", l)
					if ref == nil {
						ref = &chunk{gS: append([]float32(nil), c.gS...), gR: append([]float32(nil), c.gR...),
							gD: append([]float32(nil), c.gD...), gN: append([]float32(nil), c.gN...)}
						refLoss = loss
						continue
					}
					tol := 2e-4
					assert.InDelta(t, float64(refLoss), float64(loss), 1e-4*(1+math.Abs(float64(refLoss))), "%s loss", l)
					assert.InDeltaSlice(t, f64(ref.gS), f64(c.gS), tol, "%s gS", l)
					assert.InDeltaSlice(t, f64(ref.gD), f64(c.gD), tol, "%s gD", l)
					assert.InDeltaSlice(t, f64(ref.gN), f64(c.gN), tol, "%s gN", l)
					assert.InDeltaSlice(t, f64(ref.gR), f64(c.gR), tol, "%s gR", l)
				}
			})
		}
	}
}

// TestChunkGradAllModelsNoAllocs: no allocation per chunk once the
// Scratch has grown.
func TestChunkGradAllModelsNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	eachLevel(t, func(t *testing.T) {
		for _, k := range allModels() {
			c := newChunkK(rng, k, 16, 10, 20, 1)
			sc := NewScratch()
			allocs := testing.AllocsPerRun(5, func() {
				ChunkGrad(k, workload.Objective{}, 16, c.S, c.R, c.D, c.N, 10, 20, c.gS, c.gR, c.gD, c.gN, sc)
			})
			assert.Zero(t, allocs, k)
		}
	})
}

// TestRankCountsAllModels: RankCounts counts the candidates that score
// above and equal to the true edge as a direct float64 scoring of
// f(s, r, d) on that side orders them, with exact ties for copies of the
// true node, for every model at every level.
func TestRankCountsAllModels(t *testing.T) {
	const d, m = 20, 41
	eachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(4, 4))
		for _, k := range allModels() {
			for _, side := range []Side{DstSide, SrcSide} {
				s, dst := randVec(rng, d, 1), randVec(rng, d, 1)
				r := randVec(rng, max(k.RelWidth(d), 1), 0.5)
				C := randVec(rng, m*d, 1)
				truth := dst
				if side == SrcSide {
					truth = s
				}
				copy(C[5*d:6*d], truth)
				copy(C[17*d:18*d], truth)
				copy(C[9*d:10*d], C[2*d:3*d])
				S64, R64, D64 := f64(s), f64(r), f64(dst)
				ts := refScore(k, d, S64, R64, D64, side)
				var wantH, wantE int
				for j := 0; j < m; j++ {
					if j == 5 || j == 17 {
						wantE++
						continue
					}
					c := f64(C[j*d : j*d+d])
					var v float64
					if side == DstSide {
						v = refScore(k, d, S64, R64, c, side)
					} else {
						v = refScore(k, d, c, R64, D64, side)
					}
					require.Greater(t, math.Abs(v-ts), 1e-4, "%s %s candidate %d too close to call", k, side, j)
					if v > ts {
						wantH++
					}
				}
				h, e := RankCounts(k, d, s, r, dst, side, C, m, nil)
				assert.Equal(t, wantH, h, "%s %s higher", k, side)
				assert.Equal(t, wantE, e, "%s %s equal", k, side)
				h, e = RankCounts(k, d, s, r, dst, side, C, m, func(j int) bool { return j == 5 })
				assert.Equal(t, wantH, h, "%s %s higher, skip", k, side)
				assert.Equal(t, wantE-1, e, "%s %s equal, skip", k, side)
			}
		}
	})
}

// TestScoresAllComparators: Scores against a float64 reference, and the
// same bits for a score whether it is computed in one block, in a block of
// part of the candidates (with or without Norms) or alone (1×1): the
// invariance filtered ranking's ties rest on.
func TestScoresAllComparators(t *testing.T) {
	cmps := append(append([]workload.Comparator(nil), workload.Comparators...), workload.CmpModulusL1)
	eachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(8, 8))
		for _, cmp := range cmps {
			for _, sh := range [][3]int{{1, 1, 2}, {7, 37, 18}, {33, 70, 100}} {
				b, m, d := sh[0], sh[1], sh[2]
				Q, C := randVec(rng, b*d, 1), randVec(rng, m*d, 1)
				copy(C[:d], Q[:d]) // a candidate equal to the first query
				whole := make([]float32, b*m)
				Scores(cmp, d, b, m, Q, C, nil, whole)
				for i := 0; i < b; i++ {
					for j := 0; j < m; j++ {
						want := refCmp(cmp, f64(Q[i*d:i*d+d]), f64(C[j*d:j*d+d]))
						require.InDelta(t, want, float64(whole[i*m+j]), 2e-3*(1+math.Abs(want)), "%s %v (%d,%d)", cmp, sh, i, j)
					}
				}
				lo := m / 3
				part := make([]float32, b*(m-lo))
				Scores(cmp, d, b, m-lo, Q, C[lo*d:], Norms(cmp, d, m-lo, C[lo*d:], make([]float32, m-lo)), part)
				var one [1]float32
				for i := 0; i < b; i++ {
					for j := lo; j < m; j++ {
						require.Equal(t, whole[i*m+j], part[i*(m-lo)+j-lo], "%s %v part (%d,%d)", cmp, sh, i, j)
					}
					for j := 0; j < m; j += 5 {
						Scores(cmp, d, 1, 1, Q[i*d:i*d+d], C[j*d:j*d+d], nil, one[:])
						require.Equal(t, whole[i*m+j], one[0], "%s %v alone (%d,%d)", cmp, sh, i, j)
					}
				}
			}
		}
	})
}

// refRanking is PBG's ranking loss Σ_k max(0, margin − p + n_k).
func refRanking(margin float64) func(p float64, negs []float64) float64 {
	return func(p float64, negs []float64) float64 {
		var l float64
		for _, v := range negs {
			l += math.Max(0, margin-p+v)
		}
		return l
	}
}

// refLogistic is softplus(−(p + γ)) + (1/m)·Σ_k softplus(n_k + γ).
func refLogistic(gamma float64) func(p float64, negs []float64) float64 {
	sp := func(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }
	return func(p float64, negs []float64) float64 {
		l := sp(-(p + gamma))
		for _, v := range negs {
			l += sp(v+gamma) / float64(len(negs))
		}
		return l
	}
}

// TestChunkGradOtherLosses: the gradient check of a few models under the
// ranking and logistic losses (rowLoss; skipped while it does not compute
// them).
func TestChunkGradOtherLosses(t *testing.T) {
	models := []workload.Model{workload.DistMult, workload.TransEL1, workload.TransEL2, workload.RotatE, "linear+cos", "affine+l2", "translation+squared_l2", "complex_diagonal+l1"}
	losses := []struct {
		name string
		o    workload.Objective
		rl   func(p float64, negs []float64) float64
	}{
		{"ranking", workload.Objective{Loss: workload.Ranking, Margin: 1}, refRanking(1)},
		{"logistic", workload.Objective{Loss: workload.Logistic}, refLogistic(0)},
		{"logistic-gamma", workload.Objective{Loss: workload.Logistic, Margin: 2}, refLogistic(2)},
	}
	for _, l := range losses {
		var sc Scratch
		sc.obj = l.o
		if ls, _ := rowLoss(&sc.obj, 0.5, []float32{0.25, 1}); math.IsNaN(ls) {
			t.Logf("rowLoss does not compute the %s loss yet; skipped", l.name)
			continue
		}
		eachLevel(t, func(t *testing.T) {
			for _, k := range models {
				t.Run(l.name+"/"+string(k), func(t *testing.T) { gradCheck(t, k, l.o, l.rl, 21) })
			}
		})
	}
}

// TestVectorRowAndPairKernels: the vector kernels of the comparators
// compute every lane as the Go loops do (bit for bit), the row sums to
// rounding, at ragged lengths around the vector widths.
func TestVectorRowAndPairKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	eachLevel(t, func(t *testing.T) {
		if ActiveLevel() == Generic {
			return
		}
		for _, n := range raggedSizes() {
			row, nn, ninv := randVec(rng, n, 1), randVec(rng, n, 1), randVec(rng, n, 1)
			for i := range nn {
				nn[i] = nn[i]*nn[i] + 0.5
			}
			if n > 3 {
				row[1] = 0.5 * (0.25 + nn[1]) // D2 = 0: the clamp
			}
			type rowCase struct {
				name string
				vec  func(r, f, cc []float32) float32
				gof  func(r, f, cc []float32) float32
			}
			for _, c := range []rowCase{
				{"l2Fwd", func(r, f, _ []float32) float32 { l2FwdRow(r, nn, f, 0.25); return 0 }, func(r, f, _ []float32) float32 { l2FwdGo(r, nn, f, 0.25); return 0 }},
				{"sqFwd", func(r, _, _ []float32) float32 { sqFwdRow(r, nn, 0.25); return 0 }, func(r, _, _ []float32) float32 { sqFwdGo(r, nn, 0.25); return 0 }},
				{"cosFwd", func(r, f, _ []float32) float32 { cosFwdRow(r, ninv, f, 0.7); return 0 }, func(r, f, _ []float32) float32 { cosFwdGo(r, ninv, f, 0.7); return 0 }},
				{"mulBack", func(r, f, cc []float32) float32 { return mulBackRow(r, f, cc) }, func(r, f, cc []float32) float32 { return mulBackGo(r, f, cc) }},
				{"cosBack", func(r, f, cc []float32) float32 { return cosBackRow(r, f, ninv, cc, 0.7) }, func(r, f, cc []float32) float32 { return cosBackGo(r, f, ninv, cc, 0.7) }},
			} {
				f0, cc0 := randVec(rng, n, 1), randVec(rng, n, 1)
				r1, f1, c1 := append([]float32(nil), row...), append([]float32(nil), f0...), append([]float32(nil), cc0...)
				r2, f2, c2 := append([]float32(nil), row...), append([]float32(nil), f0...), append([]float32(nil), cc0...)
				s1, s2 := c.vec(r1, f1, c1), c.gof(r2, f2, c2)
				require.Equal(t, r2, r1, "%s n=%d row", c.name, n)
				require.Equal(t, f2, f1, "%s n=%d f", c.name, n)
				require.Equal(t, c2, c1, "%s n=%d cc", c.name, n)
				require.InDelta(t, float64(s2), float64(s1), 1e-5*float64(n), "%s n=%d sum", c.name, n)
			}
			for _, cmp := range []workload.Comparator{workload.CmpL1, workload.CmpModulusL1} {
				d := n
				if cmp == workload.CmpModulusL1 {
					d = 2 * n
				}
				q, C := randVec(rng, d, 1), randVec(rng, 4*d, 1)
				copy(C[2*d:3*d], q) // zero differences: sign(0) = 0, the clamp
				gq0, gC0 := randVec(rng, d, 1), randVec(rng, 4*d, 1)
				g := [4]float32{0.5, -1.25, 2, 0}
				gq1, gC1 := append([]float32(nil), gq0...), append([]float32(nil), gC0...)
				pairGrad4(cmp, d, &g, q, C, gq1, gC1)
				gq2, gC2 := append([]float32(nil), gq0...), append([]float32(nil), gC0...)
				for j := range g {
					pairGradGo(cmp, d, g[j], q, C[j*d:j*d+d], gq2, gC2[j*d:j*d+d])
				}
				require.Equal(t, gq2, gq1, "%s pairGrad4 n=%d gq", cmp, n)
				require.Equal(t, gC2, gC1, "%s pairGrad4 n=%d gC", cmp, n)
				gq1, gC1 = append([]float32(nil), gq0...), append([]float32(nil), gC0...)
				pairGrad(cmp, d, g[1], q, C[d:2*d], gq1, gC1[d:2*d])
				gq2, gC2 = append([]float32(nil), gq0...), append([]float32(nil), gC0...)
				pairGradGo(cmp, d, g[1], q, C[d:2*d], gq2, gC2[d:2*d])
				require.Equal(t, gq2, gq1, "%s pairGrad n=%d gq", cmp, n)
				require.Equal(t, gC2, gC1, "%s pairGrad n=%d gC", cmp, n)
				var o [4]float32
				dist4(cmp, d, q, C, d, &o)
				for j := range o {
					want := l1Dist(q, C[j*d:j*d+d])
					if cmp == workload.CmpModulusL1 {
						want = modDist(d, q, C[j*d:j*d+d])
					}
					require.InDelta(t, float64(want), float64(o[j]), 1e-5*float64(d), "%s dist4 n=%d j=%d", cmp, n, j)
					require.Equal(t, -o[j], pairScore(cmp, d, q, C[j*d:j*d+d]), "%s dist4 vs alone n=%d j=%d", cmp, n, j)
				}
			}
		}
	})
}

// refChunkPenalty is the spec's regularisation of the chunk's positive edges:
// λ·(P(s_i) + P(d_i) + P(r_i)); n3 takes the modulus of each (re, im)
// pair of the entity rows of a complex model and of complex_diagonal's
// parameters, RotatE's phases are not penalised.
func refChunkPenalty(k workload.Model, reg workload.Regularizer, lam float64, d int) func(S, R, D []float64) float64 {
	p := func(v []float64, cplx bool) float64 {
		var s float64
		if reg == workload.RegL2 {
			for _, x := range v {
				s += x * x
			}
			return s
		}
		if cplx {
			for o := 0; o < len(v); o += d {
				h := d / 2
				for j := 0; j < h; j++ {
					s += math.Pow(math.Hypot(v[o+j], v[o+h+j]), 3)
				}
			}
			return s
		}
		for _, x := range v {
			s += math.Pow(math.Abs(x), 3)
		}
		return s
	}
	return func(S, R, D []float64) float64 {
		L := p(S, k.Complex()) + p(D, k.Complex())
		if k.Operator() != workload.OpRotate && R != nil {
			L += p(R, k.Operator() == workload.OpComplexDiagonal)
		}
		return lam * L
	}
}

// TestChunkGradRegularized: the gradient check with l2 and n3
// regularisation (regularize) for models of every operator.
func TestChunkGradRegularized(t *testing.T) {
	models := []workload.Model{workload.ComplEx, workload.TransEL2, workload.RotatE, "complex_diagonal+cos", "linear+l1", "affine+squared_l2", "diagonal+l2", "none+cos"}
	for _, reg := range []workload.Regularizer{workload.RegL2, workload.RegN3} {
		o := workload.Objective{Regularizer: reg, RegCoef: 0.05}
		for _, k := range models {
			t.Run(string(reg)+"/"+string(k), func(t *testing.T) {
				gradCheckReg(t, k, o, refSoftmax, refChunkPenalty(k, reg, 0.05, 6), 31)
			})
		}
	}
}

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

func randVec(rng *rand.Rand, n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = (rng.Float32()*2 - 1) * scale
	}
	return v
}

func TestParseKind(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want workload.Model
	}{{"dot", workload.Dot}, {"DistMult", workload.DistMult}, {" complex ", workload.ComplEx}, {"ComplEx", workload.ComplEx}} {
		k, err := workload.ParseModel(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, k)
	}
	_, err := workload.ParseModel("transd")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"transd"`)
	assert.Contains(t, err.Error(), "complex")
	assert.False(t, workload.Dot.UsesRelations())
	assert.True(t, workload.DistMult.UsesRelations())
	assert.True(t, workload.ComplEx.UsesRelations())
}

func TestCheckDim(t *testing.T) {
	for _, tc := range []struct {
		k  workload.Model
		d  int
		ok bool
	}{
		{workload.Dot, 3, true}, {workload.DistMult, 3, true}, {workload.ComplEx, 4, true}, {workload.ComplEx, 3, false},
		{workload.Dot, 0, false}, {workload.DistMult, -2, false}, {workload.Model("x"), 4, false},
	} {
		err := tc.k.CheckDim(tc.d)
		if tc.ok {
			assert.NoError(t, err, "%s d=%d", tc.k, tc.d)
		} else {
			assert.Error(t, err, "%s d=%d", tc.k, tc.d)
		}
	}
}

func TestScore(t *testing.T) {
	s := []float32{1, 2, 3, 4}
	r := []float32{0.5, -1, 2, 0.25}
	d := []float32{2, 1, -1, 3}
	// ComplEx with d=4: s = (1+3i, 2+4i), r = (0.5+2i, −1+0.25i), d = (2−i, 1+3i).
	var want complex128
	for j := 0; j < 2; j++ {
		sc := complex(float64(s[j]), float64(s[j+2]))
		rc := complex(float64(r[j]), float64(r[j+2]))
		dc := complex(float64(d[j]), float64(d[j+2]))
		want += sc * rc * cmplx.Conj(dc)
	}
	for _, tc := range []struct {
		k    workload.Model
		r    []float32
		want float64
	}{
		{workload.Dot, nil, 1*2 + 2*1 + 3*-1 + 4*3},
		{workload.DistMult, r, 1*0.5*2 + 2*-1*1 + 3*2*-1 + 4*0.25*3},
		{workload.ComplEx, r, real(want)},
	} {
		assert.InDelta(t, tc.want, Score(tc.k, s, tc.r, d), 1e-5, tc.k)
	}
	assert.True(t, math.IsNaN(float64(Score(workload.Model("x"), s, r, d))))

	// Random longer vectors against float64 references.
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 37
	a, b, c := randVec(rng, 2*n, 1), randVec(rng, 2*n, 1), randVec(rng, 2*n, 1)
	for _, k := range workload.Models {
		assert.InDelta(t, naiveScore(k, f64(a), f64(b), f64(c)), Score(k, a, b, c), 1e-4, k)
	}
}

func f64(v []float32) []float64 {
	o := make([]float64, len(v))
	for i, x := range v {
		o[i] = float64(x)
	}
	return o
}

// naiveScore is the float64 reference score (ComplEx via complex128).
func naiveScore(k workload.Model, s, r, d []float64) float64 {
	var acc float64
	switch k {
	case workload.Dot:
		for i := range s {
			acc += s[i] * d[i]
		}
	case workload.DistMult:
		for i := range s {
			acc += s[i] * r[i] * d[i]
		}
	case workload.ComplEx:
		h := len(s) / 2
		var z complex128
		for i := 0; i < h; i++ {
			z += complex(s[i], s[h+i]) * complex(r[i], r[h+i]) * cmplx.Conj(complex(d[i], d[h+i]))
		}
		acc = real(z)
	default:
		return refScore(k, len(s), s, r, d, DstSide)
	}
	return acc
}

// naiveLoss is the float64 reference of ChunkGrad's loss, written directly
// from its definition.
func naiveLoss(k workload.Model, d int, S, R, D, N []float64, n, m int) float64 {
	row := func(a []float64, i int) []float64 { return a[i*d : i*d+d] }
	rel := func(i int) []float64 {
		if R == nil {
			return nil
		}
		w := k.RelWidth(d)
		return R[i*w : i*w+w]
	}
	lse := func(v []float64) float64 {
		mx := math.Inf(-1)
		for _, x := range v {
			mx = math.Max(mx, x)
		}
		var z float64
		for _, x := range v {
			z += math.Exp(x - mx)
		}
		return mx + math.Log(z)
	}
	var L float64
	for i := 0; i < n; i++ {
		p := naiveScore(k, row(S, i), rel(i), row(D, i))
		dstSide := []float64{p}
		srcSide := []float64{p}
		for j := 0; j < m; j++ {
			dstSide = append(dstSide, naiveScore(k, row(S, i), rel(i), row(N, j)))
			srcSide = append(srcSide, naiveScore(k, row(N, j), rel(i), row(D, i)))
		}
		L += lse(dstSide) - p + lse(srcSide) - p
	}
	return L
}

type chunk struct {
	S, R, D, N     []float32
	gS, gR, gD, gN []float32
}

func newChunk(rng *rand.Rand, k workload.Model, d, n, m int, scale float32) *chunk {
	return newChunkK(rng, k, d, n, m, scale)
}

func (c *chunk) zeroGrad() {
	clear(c.gS)
	clear(c.gR)
	clear(c.gD)
	clear(c.gN)
}

func TestChunkGradFiniteDifferences(t *testing.T) {
	const n, m, d = 3, 4, 6
	for _, k := range workload.Models {
		t.Run(string(k), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(len(k))))
			c := newChunk(rng, k, d, n, m, 1)
			require.NoError(t, CheckChunk(k, d, c.S, c.R, c.D, c.N, n, m, c.gS, c.gR, c.gD, c.gN))
			L := ChunkGrad(k, workload.Objective{}, d, c.S, c.R, c.D, c.N, n, m, c.gS, c.gR, c.gD, c.gN, NewScratch())

			S, D, N := f64(c.S), f64(c.D), f64(c.N)
			var R []float64
			if k.UsesRelations() {
				R = f64(c.R)
			}
			want := naiveLoss(k, d, S, R, D, N, n, m)
			assert.InDelta(t, want, float64(L), 1e-4*math.Max(1, math.Abs(want)))

			const h = 1e-5
			check := func(name string, x []float64, g []float32) {
				for i := range x {
					orig := x[i]
					x[i] = orig + h
					lp := naiveLoss(k, d, S, R, D, N, n, m)
					x[i] = orig - h
					lm := naiveLoss(k, d, S, R, D, N, n, m)
					x[i] = orig
					fd := (lp - lm) / (2 * h)
					assert.InDelta(t, fd, float64(g[i]), 1e-4+1e-4*math.Abs(fd), "%s[%d]", name, i)
				}
			}
			check("S", S, c.gS)
			check("D", D, c.gD)
			check("N", N, c.gN)
			if k.UsesRelations() {
				check("R", R, c.gR)
			}
		})
	}
}

// TestChunkGradAccumulates checks that ChunkGrad adds into the gradients and
// that a reused Scratch across different shapes gives identical results.
func TestChunkGradAccumulates(t *testing.T) {
	for _, k := range workload.Models {
		rng := rand.New(rand.NewPCG(3, 4))
		sc := NewScratch()
		big := newChunk(rng, k, 8, 9, 11, 1)
		ChunkGrad(k, workload.Objective{}, 8, big.S, big.R, big.D, big.N, 9, 11, big.gS, big.gR, big.gD, big.gN, sc)

		c := newChunk(rng, k, 6, 3, 5, 1)
		L1 := ChunkGrad(k, workload.Objective{}, 6, c.S, c.R, c.D, c.N, 3, 5, c.gS, c.gR, c.gD, c.gN, sc)
		g1 := append([]float32(nil), c.gN...)
		L2 := ChunkGrad(k, workload.Objective{}, 6, c.S, c.R, c.D, c.N, 3, 5, c.gS, c.gR, c.gD, c.gN, NewScratch())
		assert.Equal(t, L1, L2, k)
		for i := range g1 {
			assert.InDelta(t, 2*g1[i], c.gN[i], 1e-6, "%s gN[%d]", k, i)
		}
	}
}

func TestChunkGradEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, k := range workload.Models {
		// No negatives: each logsumexp is over the positive alone, so L = 0.
		c := newChunk(rng, k, 4, 2, 0, 1)
		L := ChunkGrad(k, workload.Objective{}, 4, c.S, c.R, c.D, c.N, 2, 0, c.gS, c.gR, c.gD, c.gN, nil)
		assert.InDelta(t, 0, L, 1e-6, k)
		for _, g := range c.gS {
			assert.InDelta(t, 0, g, 1e-6)
		}
		// No edges.
		assert.Zero(t, ChunkGrad(k, workload.Objective{}, 4, nil, nil, nil, c.N, 0, 0, nil, nil, nil, nil, nil))
		// Large scores stay finite thanks to the max subtraction.
		c = newChunk(rng, k, 4, 2, 3, 30)
		L = ChunkGrad(k, workload.Objective{}, 4, c.S, c.R, c.D, c.N, 2, 3, c.gS, c.gR, c.gD, c.gN, nil)
		assert.False(t, math.IsNaN(float64(L)) || math.IsInf(float64(L), 0), k)
	}
	assert.True(t, math.IsNaN(float64(ChunkGrad(workload.Model("x"), workload.Objective{}, 4, nil, nil, nil, nil, 1, 1, nil, nil, nil, nil, nil))))
}

func TestCheckChunk(t *testing.T) {
	mk := func(n int) []float32 { return make([]float32, n) }
	const n, m, d = 2, 3, 4
	require.NoError(t, CheckChunk(workload.Dot, d, mk(n*d), nil, mk(n*d), mk(m*d), n, m, mk(n*d), nil, mk(n*d), mk(m*d)))
	require.NoError(t, CheckChunk(workload.ComplEx, d, mk(n*d), mk(n*d), mk(n*d), mk(m*d), n, m, mk(n*d), mk(n*d), mk(n*d), mk(m*d)))
	err := CheckChunk(workload.DistMult, d, mk(n*d), nil, mk(n*d), mk(m*d), n, m, mk(n*d), mk(n*d), mk(n*d), mk(m*d))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "len(R)")
	assert.Error(t, CheckChunk(workload.Dot, d, mk(n*d), nil, mk(n*d), mk(m*d+1), n, m, mk(n*d), nil, mk(n*d), mk(m*d)))
	assert.Error(t, CheckChunk(workload.ComplEx, 3, nil, nil, nil, nil, 0, 0, nil, nil, nil, nil))
	assert.Error(t, CheckChunk(workload.Dot, d, nil, nil, nil, nil, -1, 0, nil, nil, nil, nil))
}

func TestLossDecreases(t *testing.T) {
	const n, m, d = 8, 16, 10
	for _, opt := range []string{"sgd", "adagrad"} {
		for _, k := range workload.Models {
			t.Run(opt+"/"+string(k), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(11, 12))
				c := newChunk(rng, k, d, n, m, 0.5)
				type param struct{ w, g, st []float32 }
				params := []param{{c.S, c.gS, nil}, {c.D, c.gD, nil}, {c.N, c.gN, nil}}
				if k.UsesRelations() {
					params = append(params, param{c.R, c.gR, nil})
				}
				for i := range params {
					params[i].st = make([]float32, len(params[i].w))
				}
				sc := NewScratch()
				// A distance's gradient does not shrink with the
				// embeddings (‖∂‖q−x‖/∂q‖ = 1), so plain SGD takes a
				// smaller step on the distance models to stay monotone.
				lr := float32(0.05)
				if opt == "sgd" && k.Distance() {
					lr = 0.02
				}
				var first, last float32
				for step := 0; step < 20; step++ {
					c.zeroGrad()
					L := ChunkGrad(k, workload.Objective{}, d, c.S, c.R, c.D, c.N, n, m, c.gS, c.gR, c.gD, c.gN, sc)
					if step == 0 {
						first = L
					} else {
						assert.Less(t, L, last, "step %d", step)
					}
					last = L
					for _, p := range params {
						if opt == "sgd" {
							axpy(-lr, p.g, p.w)
						} else {
							Adagrad(p.w, p.st, p.g, 0.05, 1e-8)
						}
					}
				}
				assert.Less(t, last, 0.8*first)
			})
		}
	}
}

func TestChunkGradNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, k := range workload.Models {
		c := newChunk(rng, k, 16, 10, 20, 1)
		sc := NewScratch()
		allocs := testing.AllocsPerRun(10, func() {
			ChunkGrad(k, workload.Objective{}, 16, c.S, c.R, c.D, c.N, 10, 20, c.gS, c.gR, c.gD, c.gN, sc)
		})
		assert.Zero(t, allocs, k)
	}
}

func TestExpNeg(t *testing.T) {
	for x := float32(-90); x <= 0; x += 0.0137 {
		want := math.Exp(float64(x))
		got := float64(expNeg(x))
		if x <= -87.3 { // flushed to zero near the bottom of the normal range
			assert.InDelta(t, want, got, 1.3e-38)
			continue
		}
		assert.InEpsilon(t, want, got, 3e-7, "x=%v", x)
	}
	assert.Equal(t, float32(1), expNeg(0))
	assert.Zero(t, expNeg(float32(math.Inf(-1))))
	nan := float32(math.NaN())
	assert.True(t, math.IsNaN(float64(expNeg(nan))))
}

func naiveNT(m, n, k int, A, B, C []float32) []float64 {
	out := f64(C)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			for p := 0; p < k; p++ {
				out[i*n+j] += float64(A[i*k+p]) * float64(B[j*k+p])
			}
		}
	}
	return out
}

func transposed(rows, cols int, a []float32) []float32 {
	o := make([]float32, len(a))
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			o[j*rows+i] = a[i*cols+j]
		}
	}
	return o
}

func TestSgemm(t *testing.T) {
	sizes := [][3]int{{7, 13, 5}, {64, 33, 100}, {1, 1, 1}, {2, 3, 4}, {3, 2, 9}, {5, 7, 3}, {4, 5, 0}, {0, 3, 2}}
	rng := rand.New(rand.NewPCG(9, 9))
	for _, sz := range sizes {
		m, n, k := sz[0], sz[1], sz[2]
		A := randVec(rng, m*k, 1)  // m×k
		Bt := randVec(rng, n*k, 1) // n×k
		C0 := randVec(rng, m*n, 1)
		want := naiveNT(m, n, k, A, Bt, C0)
		tol := 1e-5 * float64(k+1)

		C := append([]float32(nil), C0...)
		SgemmNT(m, n, k, A, Bt, C)
		assert.InDeltaSlice(t, want, f64(C), tol, "NT %v", sz)

		C = append([]float32(nil), C0...)
		SgemmNN(m, n, k, A, transposed(n, k, Bt), C) // B is k×n
		assert.InDeltaSlice(t, want, f64(C), tol, "NN %v", sz)

		C = append([]float32(nil), C0...)
		SgemmTN(m, n, k, transposed(m, k, A), transposed(n, k, Bt), C) // A is k×m, B is k×n
		assert.InDeltaSlice(t, want, f64(C), tol, "TN %v", sz)
	}
}

func TestTranspose(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, sz := range [][2]int{{1, 1}, {3, 5}, {17, 33}, {50, 100}} {
		a := randVec(rng, sz[0]*sz[1], 1)
		got := make([]float32, len(a))
		transpose(sz[0], sz[1], a, got)
		assert.Equal(t, transposed(sz[0], sz[1], a), got)
	}
}

func TestAdagrad(t *testing.T) {
	emb := []float32{1, -2, 0.5}
	state := []float32{0, 3, 1}
	grad := []float32{0.5, 1, -2}
	const lr, eps = 0.1, 1e-6
	Adagrad(emb, state, grad, lr, eps)
	assert.InDeltaSlice(t, []float32{0.25, 4, 5}, state, 1e-7)
	assert.InDeltaSlice(t, []float64{
		1 - 0.1*0.5/(0.5+eps),
		-2 - 0.1*1/(2+eps),
		0.5 + 0.1*2/(math.Sqrt(5)+eps),
	}, f64(emb), 1e-6)
}

func TestRankCounts(t *testing.T) { eachLevel(t, testRankCounts) }

func testRankCounts(t *testing.T) {
	const d, m = 40, 23
	rng := rand.New(rand.NewPCG(4, 4))
	for _, k := range workload.Models {
		for _, side := range []Side{DstSide, SrcSide} {
			s, r, dst := randVec(rng, d, 1), randVec(rng, d, 1), randVec(rng, d, 1)
			if k == workload.Dot {
				r = nil
			}
			C := randVec(rng, m*d, 1)
			truth := dst
			if side == SrcSide {
				truth = s
			}
			// Ties: the true node itself and a duplicated candidate.
			copy(C[5*d:6*d], truth)
			copy(C[17*d:18*d], truth)
			copy(C[9*d:10*d], C[2*d:3*d])
			skips := map[string]func(int) bool{
				"nil":  nil,
				"odd":  func(j int) bool { return j%2 == 1 },
				"true": func(j int) bool { return j == 5 },
			}
			for name, skip := range skips {
				var wantH, wantE int
				ts := Score(k, s, r, dst)
				for j := 0; j < m; j++ {
					if skip != nil && skip(j) {
						continue
					}
					c := C[j*d : j*d+d]
					var v float32
					if side == DstSide {
						v = Score(k, s, r, c)
					} else {
						v = Score(k, c, r, dst)
					}
					if v > ts {
						wantH++
					} else if v == ts {
						wantE++
					}
				}
				h, e := RankCounts(k, d, s, r, dst, side, C, m, skip)
				assert.Equal(t, wantH, h, "%s %s skip=%s higher", k, side, name)
				assert.Equal(t, wantE, e, "%s %s skip=%s equal", k, side, name)
			}
		}
	}
	h, e := RankCounts(workload.Model("x"), d, nil, nil, nil, DstSide, nil, 3, nil)
	assert.Zero(t, h+e)
}

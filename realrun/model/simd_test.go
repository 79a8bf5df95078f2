package model

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/workload"
)

// eachLevel runs f once per kernel level this machine supports (Generic
// always, so the portable fallback is tested everywhere), restoring the
// active level afterwards.
func eachLevel(t *testing.T, f func(t *testing.T)) {
	for _, l := range SupportedLevels() {
		t.Run(l.String(), func(t *testing.T) {
			prev := SetLevel(l)
			defer SetLevel(prev)
			f(t)
		})
	}
}

func TestChooseLevel(t *testing.T) {
	for _, tc := range []struct {
		env  string
		sup  []Level
		want Level
	}{
		{"", []Level{AVX2, AVX512}, AVX512},
		{"0", []Level{AVX2}, AVX2},
		{"1", []Level{AVX2, AVX512}, Generic},
		{"yes", []Level{AVX2}, Generic},
		{"", nil, Generic},
	} {
		assert.Equal(t, tc.want, chooseLevel(tc.env, tc.sup), "env=%q sup=%v", tc.env, tc.sup)
	}
	assert.Equal(t, Generic, SupportedLevels()[0])
	assert.Equal(t, "avx512", AVX512.String())
	assert.Panics(t, func() { SetLevel(Level(99)) })
}

// TestNoSIMDEnv runs this test binary again with TIERFLOW_NOSIMD=1 and
// checks that the child chose the portable kernels.
func TestNoSIMDEnv(t *testing.T) {
	if os.Getenv("TIERFLOW_TEST_CHILD") == "1" {
		os.Stdout.WriteString("level=" + ActiveLevel().String() + "\n")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoSIMDEnv$")
	cmd.Env = append(os.Environ(), "TIERFLOW_TEST_CHILD=1", NoSIMDEnv+"=1")
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "level=generic")
}

// raggedSizes are vector lengths around and between the vector widths.
func raggedSizes() []int {
	var s []int
	for n := 1; n <= 70; n++ {
		s = append(s, n)
	}
	return append(s, 100, 127, 128, 129, 200, 400, 1000)
}

func TestSgemmRandomShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	type shape [3]int
	shapes := []shape{{100, 200, 100}, {100, 100, 200}, {200, 100, 100}, {12, 32, 1}, {13, 33, 257}, {1, 1, 1}, {300, 70, 600}}
	for i := 0; i < 60; i++ {
		shapes = append(shapes, shape{1 + rng.IntN(70), 1 + rng.IntN(70), 1 + rng.IntN(70)})
	}
	eachLevel(t, func(t *testing.T) {
		for _, sz := range shapes {
			m, n, k := sz[0], sz[1], sz[2]
			A, Bt, C0 := randVec(rng, m*k, 1), randVec(rng, n*k, 1), randVec(rng, m*n, 1)
			want := naiveNT(m, n, k, A, Bt, C0)
			tol := 1e-5 * float64(k+1)
			C := append([]float32(nil), C0...)
			SgemmNT(m, n, k, A, Bt, C)
			require.InDeltaSlice(t, want, f64(C), tol, "NT %v", sz)
			C = append([]float32(nil), C0...)
			SgemmNN(m, n, k, A, transposed(n, k, Bt), C)
			require.InDeltaSlice(t, want, f64(C), tol, "NN %v", sz)
			C = append([]float32(nil), C0...)
			SgemmTN(m, n, k, transposed(m, k, A), transposed(n, k, Bt), C)
			require.InDeltaSlice(t, want, f64(C), tol, "TN %v", sz)
		}
	})
}

func TestVectorKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	eachLevel(t, func(t *testing.T) {
		for _, n := range raggedSizes() {
			a, b := randVec(rng, n, 1), randVec(rng, n, 1)
			var want float64
			for i := range a {
				want += float64(a[i]) * float64(b[i])
			}
			assert.InDelta(t, want, float64(vecDot(a, b)), 1e-5*float64(n), "dot n=%d", n)
			assert.Equal(t, vecDot(a, b), vecDot(a, b), "dot deterministic n=%d", n)

			y := append([]float32(nil), b...)
			vecAxpy(0.5, a, y)
			for i := range y {
				assert.InDelta(t, b[i]+0.5*a[i], y[i], 1e-6, "axpy n=%d i=%d", n, i)
			}
			x := append([]float32(nil), a...)
			vecScal(-3, x)
			for i := range x {
				assert.Equal(t, -3*a[i], x[i], "scal n=%d", n)
			}

			wantMax := float32(-2)
			for _, v := range a {
				wantMax = max(wantMax, v)
			}
			assert.Equal(t, wantMax, vecMax(-2, a), "max n=%d", n)

			// exp of x − max over a spread that reaches the flush-to-zero range.
			e := randVec(rng, n, 60)
			mx := vecMax(float32(math.Inf(-1)), e)
			orig := append([]float32(nil), e...)
			z := vecExpSum(e, mx)
			var wantZ float64
			for i, v := range orig {
				w := float64(expNeg(v - mx))
				wantZ += w
				assert.InDelta(t, w, float64(e[i]), 2e-7*w+1e-38, "exp n=%d x=%v", n, v-mx)
			}
			assert.InEpsilon(t, wantZ, float64(z), 1e-5, "expsum n=%d", n)

			emb, st, g := randVec(rng, n, 1), randVec(rng, n, 1), randVec(rng, n, 1)
			for i := range st {
				st[i] = float32(math.Abs(float64(st[i])))
			}
			emb2, st2 := append([]float32(nil), emb...), append([]float32(nil), st...)
			Adagrad(emb, st, g, 0.1, 1e-10)
			adagradGo(emb2, st2, g, 0.1, 1e-10)
			assert.Equal(t, emb2, emb, "adagrad bit-identical n=%d", n)
			assert.Equal(t, st2, st, "adagrad state n=%d", n)
		}
	})
}

func TestVectorKernelsSpecialValues(t *testing.T) {
	nan := float32(math.NaN())
	eachLevel(t, func(t *testing.T) {
		x := make([]float32, 37)
		for i := range x {
			x[i] = -float32(i) * 3 // down to −108: the bottom flushes to zero
		}
		x[20] = nan
		x[33] = float32(math.Inf(-1))
		assert.Equal(t, float32(0), vecMax(float32(math.Inf(-1)), x), "max skips NaN")
		vecExpSum(x, 0)
		assert.Equal(t, float32(1), x[0])
		assert.True(t, math.IsNaN(float64(x[20])), "NaN stays NaN")
		assert.Zero(t, x[33], "exp(−Inf) = 0")
		assert.Zero(t, x[36], "below −87.3 flushes to 0")
	})
}

func TestChunkGradLevelsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	type shape struct{ d, n, m int }
	shapes := []shape{{100, 100, 200}, {17, 7, 33}, {1, 1, 1}, {64, 50, 0}, {30, 3, 70}, {8, 100, 5}}
	for _, k := range workload.Models {
		for _, s := range shapes {
			d := s.d
			if k == workload.ComplEx && d%2 == 1 {
				d++
			}
			c := newChunk(rng, k, d, s.n, s.m, 0.5)
			var ref *chunk
			var refLoss float32
			for _, l := range SupportedLevels() {
				prev := SetLevel(l)
				c.zeroGrad()
				loss := ChunkGrad(k, workload.Objective{}, d, c.S, c.R, c.D, c.N, s.n, s.m, c.gS, c.gR, c.gD, c.gN, NewScratch())
				// Deterministic: the same inputs give bit-identical results.
				again := &chunk{gS: make([]float32, len(c.gS)), gR: make([]float32, len(c.gR)), gD: make([]float32, len(c.gD)), gN: make([]float32, len(c.gN))}
				loss2 := ChunkGrad(k, workload.Objective{}, d, c.S, c.R, c.D, c.N, s.n, s.m, again.gS, again.gR, again.gD, again.gN, NewScratch())
				SetLevel(prev)
				require.Equal(t, loss, loss2, "%s %v %s deterministic loss", k, s, l)
				require.Equal(t, c.gN, again.gN, "%s %v %s deterministic gN", k, s, l)
				require.Equal(t, c.gS, again.gS, "%s %v %s deterministic gS", k, s, l)
				if ref == nil {
					ref = &chunk{gS: append([]float32(nil), c.gS...), gR: append([]float32(nil), c.gR...),
						gD: append([]float32(nil), c.gD...), gN: append([]float32(nil), c.gN...)}
					refLoss = loss
					continue
				}
				tol := 1e-4
				assert.InDelta(t, float64(refLoss), float64(loss), 1e-4*(1+math.Abs(float64(refLoss))), "%s %v %s loss", k, s, l)
				assert.InDeltaSlice(t, f64(ref.gS), f64(c.gS), tol, "%s %v %s gS", k, s, l)
				assert.InDeltaSlice(t, f64(ref.gD), f64(c.gD), tol, "%s %v %s gD", k, s, l)
				assert.InDeltaSlice(t, f64(ref.gN), f64(c.gN), tol, "%s %v %s gN", k, s, l)
				if k.UsesRelations() {
					assert.InDeltaSlice(t, f64(ref.gR), f64(c.gR), tol, "%s %v %s gR", k, s, l)
				}
			}
		}
	}
}

func TestFMAPeakCountsFlops(t *testing.T) {
	want := map[Level]float64{Generic: 0, AVX2: 10 * fmaPeakFlopsY, AVX512: 10 * fmaPeakFlopsZ}
	eachLevel(t, func(t *testing.T) {
		assert.Equal(t, want[ActiveLevel()], FMAPeak(10))
	})
}

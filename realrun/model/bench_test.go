package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tierflow/tierflow/workload"
)

// chunkFlops counts the floating-point operations of the score GEMMs of one
// ChunkGrad call (elementwise work, the softmax and the positive scores are
// not counted):
//
//	forward:  2 sides × Q·Nᵀ           = 2·(2·n·m·d)
//	backward: 2 sides × (G·N and Gᵀ·Q) = 2·(2·2·n·m·d)
//
// i.e. 12·n·m·d per chunk.
func chunkFlops(n, m, d int) float64 {
	return 2*(2*float64(n*m*d)) + 2*(2*2*float64(n*m*d))
}

// benchModels are the models BenchmarkChunkGrad runs, with their
// dimensions: every named model at d = 100 and 400, every PBG pair at
// d = 100.
func benchModels() []struct {
	k  workload.Model
	ds []int
} {
	var out []struct {
		k  workload.Model
		ds []int
	}
	for _, k := range allModels() {
		ds := []int{100}
		if k.Named() {
			ds = []int{100, 400}
		}
		out = append(out, struct {
			k  workload.Model
			ds []int
		}{k, ds})
	}
	return out
}

// BenchmarkChunkGrad runs one chunk (n = 100 edges, m = 200 negatives) of
// every model at every level and reports edges/s; for the comparators
// computed by GEMM (dot, cos, l2, squared_l2) also the score products'
// GFLOP/s and their fraction of the FMA peak (chunkFlops: the operators'
// and the pairwise comparators' work is not counted).
func BenchmarkChunkGrad(b *testing.B) {
	const n, m = 100, 200
	for _, bm := range benchModels() {
		k := bm.k
		for _, d := range bm.ds {
			b.Run(fmt.Sprintf("%s/d=%d,n=%d,m=%d", k, d, n, m), func(b *testing.B) {
				atLevels(b, func(b *testing.B) {
					rng := rand.New(rand.NewPCG(1, 2))
					c := newChunk(rng, k, d, n, m, 0.1)
					sc := NewScratch()
					ChunkGrad(k, workload.Objective{}, d, c.S, c.R, c.D, c.N, n, m, c.gS, c.gR, c.gD, c.gN, sc)
					b.ReportAllocs()
					b.ResetTimer()
					cpu := cpuLoop(b, func() { ChunkGrad(k, workload.Objective{}, d, c.S, c.R, c.D, c.N, n, m, c.gS, c.gR, c.gD, c.gN, sc) })
					b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
					b.ReportMetric(float64(n)*float64(b.N)/cpu, "edges/cpu-s")
					switch k.Comparator() {
					case workload.CmpDot, workload.CmpCos, workload.CmpL2, workload.CmpSquaredL2:
						reportPeak(b, chunkFlops(n, m, d), cpu)
					}
				})
			})
		}
	}
}

// BenchmarkSgemmNT measures the single-core ceiling of the GEMM kernel
// (2·m·n·k flops per call).
func BenchmarkSgemmNT(b *testing.B) {
	for _, sz := range [][3]int{{256, 256, 256}, {50, 100, 100}} {
		m, n, k := sz[0], sz[1], sz[2]
		b.Run(fmt.Sprintf("m=%d,n=%d,k=%d", m, n, k), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			A, B, C := randVec(rng, m*k, 1), randVec(rng, n*k, 1), make([]float32, m*n)
			b.ResetTimer()
			for b.Loop() {
				SgemmNT(m, n, k, A, B, C)
			}
			b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkSgemmNNTN(b *testing.B) {
	const m, n, k = 256, 256, 256
	rng := rand.New(rand.NewPCG(3, 4))
	A, B, C := randVec(rng, m*k, 1), randVec(rng, n*k, 1), make([]float32, m*n)
	for _, v := range []struct {
		name string
		f    func(m, n, k int, A, B, C []float32)
	}{{"NN", SgemmNN}, {"TN", SgemmTN}} {
		b.Run(fmt.Sprintf("%s/m=%d,n=%d,k=%d", v.name, m, n, k), func(b *testing.B) {
			for b.Loop() {
				v.f(m, n, k, A, B, C)
			}
			b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkRankCounts(b *testing.B) {
	const d, m = 100, 10000
	for _, k := range workload.Models {
		b.Run(fmt.Sprintf("%s/d=%d,m=%d", k, d, m), func(b *testing.B) {
			atLevels(b, func(b *testing.B) {
				rng := rand.New(rand.NewPCG(5, 6))
				s, r, dst, C := randVec(rng, d, 1), randVec(rng, d, 1), randVec(rng, d, 1), randVec(rng, m*d, 1)
				b.ReportAllocs()
				cpu := cpuLoop(b, func() { RankCounts(k, d, s, r, dst, DstSide, C, m, nil) })
				b.ReportMetric(float64(m)*float64(b.N)/b.Elapsed().Seconds(), "candidates/s")
				b.ReportMetric(float64(m)*float64(b.N)/cpu, "candidates/cpu-s")
			})
		})
	}
}

// BenchmarkScores scores a block of 32 queries against 10000 candidates
// under each comparator (filtered evaluation's and query's inner loop),
// with the candidates' norms given (Norms, once a partition).
func BenchmarkScores(b *testing.B) {
	const bq, m, d = 32, 10000, 100
	cmps := append(append([]workload.Comparator(nil), workload.Comparators...), workload.CmpModulusL1)
	for _, cmp := range cmps {
		b.Run(fmt.Sprintf("%s/b=%d,m=%d,d=%d", cmp, bq, m, d), func(b *testing.B) {
			atLevels(b, func(b *testing.B) {
				rng := rand.New(rand.NewPCG(5, 6))
				Q, C, out := randVec(rng, bq*d, 1), randVec(rng, m*d, 1), make([]float32, bq*m)
				cn := Norms(cmp, d, m, C, make([]float32, m))
				b.ReportAllocs()
				cpu := cpuLoop(b, func() { Scores(cmp, d, bq, m, Q, C, cn, out) })
				b.ReportMetric(float64(bq*m)*float64(b.N)/cpu, "scores/cpu-s")
			})
		})
	}
}

package cuda

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/workload"
)

// BenchmarkChunkKernels times the chunk step's launches one kind at a time
// at the GPU verification's throughput shape (Dot, d=100, chunks of 1,000
// edges sharing 1,000 negatives, partitions of 26,000 rows): each kind
// launched b.N times back to back between two events, so that gpu-us is
// the GPU's time per launch with the queue full and host-us the host's
// time to issue one; "chunk" is a whole chunk (its seven launches) and
// "chunk-graph" the same replayed as one CUDA graph, whose edges/s is the
// chunk step's ceiling on this GPU with nothing else in the way. On the emulator it measures the emulator: run it on a GPU
// (tests/cuda.test -test.bench ChunkKernels in the GPU bundle).
func BenchmarkChunkKernels(b *testing.B) {
	for _, tf32 := range []bool{false, true} {
		name := "fp32"
		if tf32 {
			name = "tf32"
		}
		b.Run(name, func(b *testing.B) { benchChunkKernels(b, tf32, workload.Dot) })
	}
}

// BenchmarkChunkModels is BenchmarkChunkKernels' whole chunk ("chunk",
// "chunk-graph") for the other score functions at the same shape: TransE
// (L2: the product and norms; L1: the pairwise kernels), RotatE (pairwise)
// and PBG pairs with a d×d linear operator, FP32.
func BenchmarkChunkModels(b *testing.B) {
	for _, m := range []workload.Model{workload.DistMult, workload.ComplEx, workload.TransEL2, workload.TransEL1, workload.RotatE, "linear+cos", "affine+dot"} {
		b.Run(string(m), func(b *testing.B) { benchChunkKernels(b, false, m) })
	}
}

func benchChunkKernels(b *testing.B, tf32 bool, model workload.Model) {
	const rows, d, nc, m = 26_000, 100, 1_000, 1_000
	st, deg := memStore(rows, d, 1)
	e, err := testEngine(realrun.EngineOptions{Engine: "cuda", Buffer: realrun.BufferGPU, Store: st, Degrees: deg, Seed: 1, C: 2,
		Hyper: realrun.Hyper{Training: workload.Training{Model: model, Dim: d, Batch: 50_000, Negatives: m, ChunkSize: nc}, LR: 0.1, Workers: 1, TF32: tf32}})
	require.NoError(b, err)
	defer e.Close()
	done, err := e.bind()
	require.NoError(b, err)
	defer done()
	rng := rand.New(rand.NewPCG(1, 2))
	s := computeStream
	for t := range 2 {
		f := randFloats(rng, 2*rows*d)
		for i := rows * d; i < 2*rows*d; i++ {
			f[i] = 0.1 + rng.Float32() // Adagrad state
		}
		require.NoError(b, e.g.htod(e.slotMem[t].p, unsafe.Pointer(&f[0]), int64(4*len(f)), s))
	}
	rd := int64(rows * d)
	t := tables{embA: e.slotMem[0].p, stateA: e.slotMem[0].at(rd), embB: e.slotMem[1].p, stateB: e.slotMem[1].at(rd), rowsA: rows, rowsB: rows}
	piece := make([]int32, pieceInts+e.L)
	t.header(piece)
	ci := piece[pieceInts:]
	ci[0] = nc
	for i := 1; i <= nc; i++ {
		ci[i], ci[nc+i] = int32(rng.IntN(rows)), int32(rng.IntN(rows))
	}
	for k := 0; k < m; k++ {
		ci[1+3*nc+k], ci[1+3*nc+m+k] = int32(rng.IntN(rows)), int32(k%2)
	}
	require.NoError(b, e.g.htod(e.idx[0].p, unsafe.Pointer(&piece[0]), int64(4*len(piece)), s))
	require.NoError(b, e.g.sync(s))
	idx := e.idx[0].p
	bound := int64(2*nc + m)
	rowsQ := 2 * nc
	qs, ns, ts := int64(rowsQ*d), int64(m*d), int64(rowsQ*m)
	code := modelCode(e.h.Model)
	items := int64(nc + m)
	kinds := []struct {
		name string
		run  func() error
	}{
		{"chunk_prep", func() error {
			return e.launch1D(s, "chunk_prep", 32*items, code, 1, nc, m, d, e.L, idx, 0, e.rel.p, e.Q.p, e.N.p, e.pos.p,
				e.qn.p, e.nn.p, e.bn.p, e.counts.p, 1)
		}},
		{"gemm_T=QNt", func() error {
			return e.gemm(1, false, true, rowsQ, m, d, 1, e.Q.p, d, qs, e.N.p, d, ns, 0, e.T.p, m, ts)
		}},
		{"chunk_softmax", func() error {
			return e.launch1D(s, "chunk_softmax", 32*int64(rowsQ), 1, nc, m, e.L, idx, 0, e.pos.p, e.T.p, e.gp.p, e.loss.p,
				0, 0, float32(0), float32(0), e.qn.p, e.nn.p, e.aq.p, e.bn.p)
		}},
		{"gemm_gQ=GN", func() error {
			return e.gemm(1, false, false, rowsQ, d, m, 1, e.T.p, m, ts, e.N.p, d, ns, 0, e.gQ.p, d, qs)
		}},
		{"gemm_gN=GtQ", func() error {
			return e.gemm(1, true, false, m, d, rowsQ, 1, e.T.p, m, ts, e.Q.p, d, qs, 0, e.gN.p, d, ns)
		}},
		{"chunk_back", func() error {
			return e.launch1D(s, "chunk_back", 32*items, code, ruleSum, 1, nc, m, d, e.L, idx, 0, e.rel.p,
				e.gQ.p, e.gN.p, e.gp.p, e.gR.p, e.accs.p, e.counts.p, e.Q.p, e.N.p, e.aq.p, e.bn.p, 0, float32(0), e.loss.p)
		}},
		{"adagrad_sum", func() error { return e.step(idx, bound) }},
		{"chunk", func() error {
			if err := e.group(idx, 0, 1, true); err != nil {
				return err
			}
			return e.step(idx, bound)
		}},
		{"chunk-graph", func() error { return e.chunkStep(0, 0) }},
	}
	for _, k := range kinds {
		if model != workload.Dot && !strings.HasPrefix(k.name, "chunk-") && k.name != "chunk" {
			continue // the single launches are Dot's (their parameters are its)
		}
		b.Run(k.name, func(b *testing.B) {
			require.NoError(b, k.run()) // warm up: module load, cuBLAS's choice of kernels
			require.NoError(b, e.g.sync(s))
			b.ResetTimer()
			start := time.Now()
			require.NoError(b, e.g.record(evBucketStart, s))
			for i := 0; i < b.N; i++ {
				if err := k.run(); err != nil {
					b.Fatal(err)
				}
			}
			host := time.Since(start)
			require.NoError(b, e.g.record(evBucketEnd, s))
			gpu, err := e.g.elapsed(evBucketStart, evBucketEnd)
			require.NoError(b, err)
			b.StopTimer()
			b.ReportMetric(1e6*gpu/float64(b.N), "gpu-us/op")
			b.ReportMetric(1e6*host.Seconds()/float64(b.N), "host-us/op")
			if strings.HasPrefix(k.name, "chunk") && k.name != "chunk_prep" && k.name != "chunk_softmax" && k.name != "chunk_back" {
				b.ReportMetric(float64(nc)*float64(b.N)/gpu, "edges/s")
			}
		})
	}
}

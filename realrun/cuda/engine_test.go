package cuda

// These tests run the engine on the emulated GPU (emu.go) in the default
// build, and on the real GPU with -tags cuda (where, on a machine without
// one, the probe package ends the test binary with a SKIP line first).

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	cpuengine "github.com/tierflow/tierflow/realrun/cpu"
	"github.com/tierflow/tierflow/realrun/eval"

	"github.com/tierflow/tierflow/workload"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/telemetry"
	"github.com/tierflow/tierflow/realrun/workdir"
)

// memStore is a store with only a manifest: enough for New.
func memStore(rows int64, d, relations int) (*store.Store, []int32) {
	m := store.Manifest{Nodes: rows, Relations: relations, P: 1, Dim: d, Rows: rows, PartitionBytes: 2 * 4 * rows * int64(d)}
	return &store.Store{M: m}, make([]int32, rows)
}

func randFloats(rng *rand.Rand, n int) []float32 {
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(rng.NormFloat64()) * 0.5
	}
	return f
}

func upload(t *testing.T, e *Engine, dst ptr, f []float32) {
	t.Helper()
	if len(f) > 0 {
		require.NoError(t, e.g.htod(dst, unsafe.Pointer(&f[0]), int64(4*len(f)), computeStream))
		require.NoError(t, e.g.sync(computeStream))
	}
}

func download(t *testing.T, e *Engine, src ptr, n int) []float32 {
	t.Helper()
	f := make([]float32, n)
	if n > 0 {
		require.NoError(t, e.g.dtoh(unsafe.Pointer(&f[0]), src, int64(4*n), computeStream))
		require.NoError(t, e.g.sync(computeStream))
	}
	return f
}

func uploadInts(t *testing.T, e *Engine, dst ptr, v []int32) {
	t.Helper()
	require.NoError(t, e.g.htod(dst, unsafe.Pointer(&v[0]), int64(4*len(v)), computeStream))
	require.NoError(t, e.g.sync(computeStream))
}

func closeTo(t *testing.T, want, got []float32, tol float64, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), what)
	for i := range want {
		if d := math.Abs(float64(want[i] - got[i])); d > tol*(1+math.Abs(float64(want[i]))) {
			t.Fatalf("%s[%d]: GPU %g, CPU %g", what, i, got[i], want[i])
		}
	}
}

// TestChunkMatchesModel runs one batch of every shape of kernelCases
// through the GPU kernels (gather, queries, batched GEMMs, softmax loss,
// gradients, scatter-add, Adagrad) and compares the loss, the per-row
// gradient sums and the Adagrad step with the CPU engine's Go reference
// (model.ChunkGrad, model.Adagrad), for Dot, DistMult and ComplEx: see
// checkKernels. Without -tags cuda the kernels are train.cu itself
// compiled for the CPU where a C++ compiler is found (else their Go
// transcription), with the engine's own SGEMM kernel, not cuBLAS.
func TestChunkMatchesModel(t *testing.T) {
	for _, c := range kernelCases {
		t.Run(c.String(), func(t *testing.T) {
			require.NoError(t, checkKernels(func() gpu { return kernelGPU(t) }, c))
		})
	}
}

// TestEveryModelMatchesModel is TestChunkMatchesModel for modelCases: the
// other named models, PBG pairs (each operator and comparator at least
// once), the ranking and logistic losses with and without
// self-adversarial weights, and the L2 and N3 regularisers.
func TestEveryModelMatchesModel(t *testing.T) {
	for _, c := range modelCases {
		t.Run(c.String(), func(t *testing.T) {
			require.NoError(t, checkKernels(func() gpu { return kernelGPU(t) }, c))
		})
	}
}

// TestEachManyOccurrences is checkEach for eachCases: rows stepped
// hundreds and thousands of times under rule each (adagrad_each's sort
// wider than its block, the scan past EACH_CAP, relation rows of two
// spans).
func TestEachManyOccurrences(t *testing.T) {
	for _, c := range eachCases {
		t.Run(c.String(), func(t *testing.T) {
			require.NoError(t, checkEachKernels(func() gpu { return kernelGPU(t) }, c))
		})
	}
}

func prepare(t *testing.T) (*store.Store, []int32) {
	t.Helper()
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: "fb15k", Scale: 0.05, Seed: 3, P: 4, Dim: 16, Model: "distmult", Workdir: filepath.Join(t.TempDir(), "work")})
	require.NoError(t, err)
	deg, err := st.Degrees()
	require.NoError(t, err)
	return st, deg
}

func hyper() realrun.Hyper {
	return realrun.Hyper{Training: workload.Training{Model: workload.DistMult, Dim: 16, Batch: 500, Negatives: 20}, DegreeFrac: 0.5, LR: 0.1, Workers: 1}
}

// TestBufferBytesMatchPlan: with --buffer gpu every load installs one
// partition and every write evicts one; with --buffer host no whole
// partition crosses PCIe. (Needs RunEpoch to call the SlotResident hooks.)
func TestBufferBytesMatchPlan(t *testing.T) {
	st, deg := prepare(t)
	plan, err := orderings.Build("beta", st.M.P, 2, orderings.Belady, 0)
	require.NoError(t, err)
	for _, mode := range []string{realrun.BufferHost, realrun.BufferGPU} {
		t.Run(mode, func(t *testing.T) {
			require.NoError(t, st.InitPartitions(3, 0.1))
			e, err := testEngine(realrun.EngineOptions{Engine: "cuda", Buffer: mode, Hyper: hyper(), Store: st, Degrees: deg, Seed: 1, C: plan.C})
			require.NoError(t, err)
			defer e.Close()
			ep, err := realrun.RunEpoch(st, plan, e, realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: 1})
			skipUnwired(t, e, err)
			require.NoError(t, err)
			tr := e.Transfers()
			pb := st.M.PartitionBytes
			if mode == realrun.BufferGPU {
				assert.Equal(t, int64(plan.Counts.Loads)*pb, tr.SlotIn)
				assert.Equal(t, int64(plan.Counts.Writes+plan.Counts.FinalWrites)*pb, tr.SlotOut)
			} else {
				assert.Zero(t, tr.SlotIn+tr.SlotOut)
			}
			assert.Equal(t, int64(plan.Counts.Loads)*pb, ep.ReadBytes)
			if ep.GPU == nil {
				t.Skip("RunEpoch does not call realrun.EpochHooks yet (see realrun/seam.go)")
			}
			assert.NotEmpty(t, ep.GPU.Name)
			assert.Equal(t, tr.H2D, ep.GPU.H2DBytes)
			t.Logf("%s: %s, h2d %d, d2h %d, kernels %.3f s, utilisation %.2f", mode, ep.GPU.Name, tr.H2D, tr.D2H, ep.GPU.KernelSeconds, ep.GPU.Utilization)
		})
	}
}

// TestMRRMatchesCPU trains three epochs on the CPU engine (one worker) and
// on both buffer modes from the same initial partitions and seed; the MRRs
// must agree within 15% (both step after every chunk; TestStepMatchesCPU
// compares the embeddings themselves) and be well above random.
func TestMRRMatchesCPU(t *testing.T) {
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: "twitter", Scale: 0.0001, Seed: 3, P: 4, Dim: 16, Model: "dot", Workdir: filepath.Join(t.TempDir(), "work")})
	require.NoError(t, err)
	deg, err := st.Degrees()
	require.NoError(t, err)
	h := realrun.Hyper{Training: workload.Training{Model: workload.Dot, Dim: 16, Batch: 500, Negatives: 20}, DegreeFrac: 0.5, LR: 0.1, Workers: 1}
	plan, err := orderings.Build("beta", st.M.P, 2, orderings.Belady, 0)
	require.NoError(t, err)
	var baseline float64
	mrr := func(eng realrun.Engine) float64 {
		require.NoError(t, st.InitPartitions(3, 0.1))
		for ep := 1; ep <= 3; ep++ {
			_, err := realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: ep})
			if e, ok := eng.(*Engine); ok {
				skipUnwired(t, e, err)
			}
			require.NoError(t, err)
		}
		ev := eval.DefaultEval
		ev.Seed, ev.MaxEdges = 1, 2000
		q, err := eval.Evaluate(st, workload.Dot, eng.Relations(), deg, ev)
		require.NoError(t, err)
		baseline = q.Baseline
		return q.MRR
	}
	cpu := mrr(cpuengine.New(h, st, deg, 1))
	require.Greater(t, cpu, 3*baseline, "the CPU engine learns")
	for _, mode := range []string{realrun.BufferHost, realrun.BufferGPU} { // gpu last: it skips until wired
		e, err := testEngine(realrun.EngineOptions{Engine: "cuda", Buffer: mode, Hyper: h, Store: st, Degrees: deg, Seed: 1, C: plan.C})
		require.NoError(t, err)
		got := mrr(e)
		require.NoError(t, e.Close())
		t.Logf("MRR cpu %.4f, cuda --buffer %s %.4f (random %.4f)", cpu, mode, got, baseline)
		assert.InDelta(t, cpu, got, 0.15*cpu, "--buffer %s", mode)
	}
}

// TestCalibrate measures the GPU at a small shape, both buffer modes, at
// a given bucket size: positive bandwidths and rates, and the GPU's name.
func TestCalibrate(t *testing.T) {
	cal, err := Calibrate(func() (gpu, error) { return testGPU(t), nil }, 1<<20,
		realrun.Hyper{Training: workload.Training{Model: workload.Dot, Dim: 16, Batch: 100, Negatives: 10}, LR: 0.1, Workers: 1}, 1000, 700)
	require.NoError(t, err)
	assert.NotEmpty(t, cal.Name)
	assert.Positive(t, cal.H2D)
	assert.Positive(t, cal.D2H)
	assert.Positive(t, cal.EdgesPerSecond)
	assert.Positive(t, cal.HostEdgesPerSecond)
	assert.Equal(t, int64(700), cal.BucketEdges)
	assert.Contains(t, cal.Shape, "bucket=700")
	t.Logf("%+v", cal)
}

// skipUnwired skips a --buffer gpu run when the buffer manager does not
// call the SlotResident hooks yet (the engine then finds no partition on
// the GPU).
func skipUnwired(t *testing.T, e *Engine, err error) {
	t.Helper()
	if err != nil && e.mode == realrun.BufferGPU && e.Transfers().SlotIn == 0 {
		t.Skipf("the buffer manager does not call realrun.SlotResident yet: %v", err)
	}
}

// TestEpochTelemetryJSON: a GPU epoch's JSON names the GPU and carries its
// sampled utilisation and PCIe bytes (a fake NVML source on the emulated
// GPU) and the bytes the engine copied. The epoch runs in a synctest
// bubble: the sampler ticks on the bubble's fake clock, so the samples and
// the integrated PCIe bytes are exact, and no test waits on the wall clock.
func TestEpochTelemetryJSON(t *testing.T) {
	st, deg := prepare(t)
	synctest.Test(t, func(t *testing.T) {
		e, err := timedEngine(realrun.EngineOptions{Engine: "cuda", Buffer: realrun.BufferHost, Hyper: hyper(), Store: st, Degrees: deg, Seed: 1, C: 2})
		require.NoError(t, err)
		defer e.Close()
		e.useNVML(&telemetry.Fake{
			GPU:      telemetry.Info{Name: "NVIDIA H100 (fake NVML)", MemoryBytes: 80 << 30, Driver: "580.65", CUDA: "13.0"},
			Readings: []telemetry.Sample{{Utilization: 0.9, MemoryUsed: 2 << 30, PCIeRXPerSec: 2e10, PCIeTXPerSec: 1e10}},
		})
		t0 := time.Now()
		require.NoError(t, e.StartEpoch(1))
		edges, err := st.ReadBucket(0, 1)
		require.NoError(t, err)
		src, err := st.NewBuffer()
		require.NoError(t, err)
		defer src.Free()
		dst, err := st.NewBuffer()
		require.NoError(t, err)
		defer dst.Free()
		_, err = st.ReadPartition(0, src)
		require.NoError(t, err)
		_, err = st.ReadPartition(1, dst)
		require.NoError(t, err)
		_, err = e.TrainBucket(edges, 0, src, 1, dst, rand.New(rand.NewPCG(1, 2)))
		require.NoError(t, err)
		// The rest of the epoch (fake time): it ends 50 ms after a tick of
		// the sampler's 100 ms clock and at least 150 ms after it began.
		time.Sleep(150*time.Millisecond - time.Since(t0)%telemetry.DefaultInterval)
		elapsed := time.Since(t0).Seconds()
		ep := realrun.Epoch{Epoch: 1}
		ep.EpochSeconds = elapsed
		require.NoError(t, e.FinishEpoch(&ep))
		data, err := json.Marshal(ep)
		require.NoError(t, err)
		var got struct {
			Util float64 `json:"gpu_utilization"`
			GPU  struct {
				Name    string  `json:"name"`
				Driver  string  `json:"driver"`
				GEMM    string  `json:"gemm"`
				Util    float64 `json:"utilization"`
				Samples int     `json:"samples"`
				RX      int64   `json:"pcie_rx_bytes"`
				TX      int64   `json:"pcie_tx_bytes"`
				H2D     int64   `json:"h2d_bytes"`
				D2H     int64   `json:"d2h_bytes"`
				Kernel  float64 `json:"kernel_seconds"`
			} `json:"gpu"`
		}
		require.NoError(t, json.Unmarshal(data, &got))
		assert.Equal(t, "NVIDIA H100 (fake NVML)", got.GPU.Name)
		assert.Equal(t, "580.65", got.GPU.Driver)
		assert.Equal(t, e.GEMM(), got.GPU.GEMM, "the engine's GEMM note beside NVML's info")
		assert.NotEmpty(t, got.GPU.GEMM)
		assert.InDelta(t, 0.9, got.Util, 1e-12)
		assert.InDelta(t, 0.9, got.GPU.Util, 1e-12)
		// One sample at the start, one per tick, one at the end.
		assert.Equal(t, 2+int(elapsed/telemetry.DefaultInterval.Seconds()), got.GPU.Samples)
		// Constant rates integrated over the whole epoch.
		assert.InDelta(t, 2e10*elapsed, got.GPU.RX, 2, "PCIe bytes integrated over the epoch")
		assert.InDelta(t, 1e10*elapsed, got.GPU.TX, 2)
		assert.Positive(t, got.GPU.H2D)
		assert.Positive(t, got.GPU.D2H)
		assert.Positive(t, got.GPU.Kernel)
		assert.LessOrEqual(t, got.GPU.Kernel, elapsed, "kernel time within the epoch")
	})
}

// TestStepMatchesCPU trains one epoch from the same partitions and seed on
// the CPU engine (one worker) and on the CUDA engine in both buffer modes,
// under each update rule — the chunk step with a row that occurs twice in
// a chunk stepped per occurrence (each) or once with the summed gradient
// (sum), and the batch step (micro-batching with one micro-batch) — and
// measures how far apart the trained embeddings are, as a share of how far
// training moved them. Same edges in the same order, same negatives, same
// rule: the engines agree to float rounding (under 1e-3 of the movement),
// while the rules themselves differ by far more on this small, skewed
// graph. Until 2026-11-26 the CUDA engine always took the batch step, and
// until 2026-11-27 its chunk step always summed.
func TestStepMatchesCPU(t *testing.T) {
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: "fb15k", Scale: 0.1, Seed: 3, P: 2, Dim: 8, Model: "dot", Workdir: filepath.Join(t.TempDir(), "work")})
	require.NoError(t, err)
	deg, err := st.Degrees()
	require.NoError(t, err)
	plan, err := orderings.Build("beta", st.M.P, 2, orderings.Belady, 0)
	require.NoError(t, err)
	require.NoError(t, st.InitPartitions(3, 0.1))
	init := fixture.Embeddings(t, st)
	train := func(eng realrun.Engine) []float32 {
		require.NoError(t, st.InitPartitions(3, 0.1))
		_, err := realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: 1})
		require.NoError(t, err)
		return fixture.Embeddings(t, st)
	}
	// dist is |a−b| over the movement |a−init|.
	dist := func(a, b []float32) float64 {
		var num, den float64
		for i := range a {
			num += float64(a[i]-b[i]) * float64(a[i]-b[i])
			den += float64(a[i]-init[i]) * float64(a[i]-init[i])
		}
		return math.Sqrt(num / den)
	}
	h := realrun.Hyper{Training: workload.Training{Model: workload.Dot, Dim: 8, Batch: 400, Negatives: 10}, DegreeFrac: 0.5, LR: 0.1, Workers: 1}
	rules := []string{"each", "sum", "batch"}
	hyper := func(rule string) realrun.Hyper {
		hr := h
		switch rule {
		case "batch":
			hr.Micro.Count = 1
		default:
			hr.Duplicates = realrun.Duplicates(rule)
		}
		return hr
	}
	cpu := map[string][]float32{}
	for _, r := range rules {
		cpu[r] = train(cpuengine.New(hyper(r), st, deg, 1))
	}
	require.Greater(t, dist(cpu["each"], cpu["batch"]), 0.3, "the chunk and the batch step train differently on the CPU")
	require.Greater(t, dist(cpu["each"], cpu["sum"]), 0.1, "the two duplicate-row rules train differently on the CPU")
	for _, mode := range []string{realrun.BufferHost, realrun.BufferGPU} {
		for _, r := range rules {
			e, err := testEngine(realrun.EngineOptions{Engine: "cuda", Buffer: mode, Hyper: hyper(r), Store: st, Degrees: deg, Seed: 1, C: plan.C})
			require.NoError(t, err)
			got := train(e)
			require.NoError(t, e.Close())
			t.Logf("--buffer %s, %s: off the CPU's %s by %.5f of the movement (the CPU's rules: each–sum %.3f, each–batch %.3f)",
				mode, r, r, dist(got, cpu[r]), dist(cpu["each"], cpu["sum"]), dist(cpu["each"], cpu["batch"]))
			assert.Less(t, dist(got, cpu[r]), 1e-3, "--buffer %s, rule %s: the engines train alike", mode, r)
		}
	}
}

// TestModelsStepMatchCPU is TestStepMatchesCPU for the other score
// functions and objectives (rule each, both buffer modes): a named
// distance model, RotatE with its self-adversarial logistic loss, and a
// PBG pair with a d×d operator, the ranking loss and a regulariser, and
// a complex_diagonal pair with the logistic loss and N3. The
// embeddings and the relation rows agree with the CPU engine's to float
// rounding.
func TestModelsStepMatchCPU(t *testing.T) {
	cases := []struct {
		m   workload.Model
		obj workload.Objective
	}{
		{workload.TransEL2, workload.Objective{}},
		{workload.RotatE, workload.Objective{Loss: workload.Logistic, Margin: 2, Adversarial: 1}},
		// A margin above every cos gap keeps each hinge active: near the
		// kink float rounding flips a pair's indicator in one engine and
		// not the other (margin 0.2 ends an epoch 0.004–0.04 of the
		// movement apart, margin 10 2e-6).
		{"linear+cos", workload.Objective{Loss: workload.Ranking, Margin: 10, Regularizer: workload.RegL2, RegCoef: 0.01}},
		// Not TransE-L1: its epoch is chaotic (sign gradients and
		// Adagrad's first step of ±lr whatever the gradient's size): the
		// CPU engine itself ends 0.73 of the movement away when every
		// relation float starts one ulp off (TransE-L2: 6.5e-7).
		{"complex_diagonal+squared_l2", workload.Objective{Loss: workload.Logistic, Regularizer: workload.RegN3, RegCoef: 0.01}},
	}
	for _, c := range cases {
		t.Run(string(c.m)+"/"+string(c.obj.LossKind()), func(t *testing.T) {
			const d = 8
			st, err := workdir.Prepare(workdir.DataSpec{Dataset: "fb15k", Scale: 0.1, Seed: 3, P: 2, Dim: d, Model: string(c.m), Workdir: filepath.Join(t.TempDir(), "work")})
			require.NoError(t, err)
			deg, err := st.Degrees()
			require.NoError(t, err)
			plan, err := orderings.Build("beta", st.M.P, 2, orderings.Belady, 0)
			require.NoError(t, err)
			require.NoError(t, st.InitPartitions(3, 0.1))
			init := fixture.Embeddings(t, st)
			h := realrun.Hyper{Training: workload.Training{Model: c.m, Dim: d, Batch: 400, Negatives: 10, Objective: c.obj},
				DegreeFrac: 0.5, LR: 0.1, Workers: 1, Duplicates: realrun.DuplicatesEach}
			// Both engines start from the same relation rows, small and
			// random (whatever InitRelations gives the model).
			rng := rand.New(rand.NewPCG(5, 6))
			relInit := make([]float32, 2*st.M.Relations*c.m.RelWidth(d))
			for i := range relInit[:len(relInit)/2] {
				relInit[i] = float32(rng.NormFloat64()) * 0.1
			}
			train := func(eng realrun.Engine) ([]float32, []float32) {
				require.NoError(t, eng.(realrun.Stateful).Restore(relInit))
				require.NoError(t, st.InitPartitions(3, 0.1))
				_, err := realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: 1})
				require.NoError(t, err)
				return fixture.Embeddings(t, st), eng.Relations()
			}
			rel := func(a, b []float32) float64 {
				var num, den float64
				for i := range a {
					num += float64(a[i]-b[i]) * float64(a[i]-b[i])
					den += float64(a[i]) * float64(a[i])
				}
				return math.Sqrt(num / max(den, 1e-30))
			}
			// dist is |a−b| over the CPU's movement |b−init|.
			dist := func(a, b []float32) float64 {
				var num, den float64
				for i := range a {
					num += float64(a[i]-b[i]) * float64(a[i]-b[i])
					den += float64(b[i]-init[i]) * float64(b[i]-init[i])
				}
				return math.Sqrt(num / max(den, 1e-30))
			}
			cpuEmb, cpuRel := train(cpuengine.New(h, st, deg, 1))
			require.Greater(t, rel(cpuEmb, init), 1e-3, "training moved the embeddings")
			for _, mode := range []string{realrun.BufferHost, realrun.BufferGPU} {
				e, err := testEngine(realrun.EngineOptions{Engine: "cuda", Buffer: mode, Hyper: h, Store: st, Degrees: deg, Seed: 1, C: plan.C})
				require.NoError(t, err)
				emb, r := train(e)
				require.NoError(t, e.Close())
				t.Logf("--buffer %s: embeddings off the CPU's by %.2g of the movement; relation rows by %.2g of their size",
					mode, dist(emb, cpuEmb), rel(r, cpuRel))
				assert.Less(t, dist(emb, cpuEmb), 1e-3, "--buffer %s: the engines train alike", mode)
				assert.Len(t, r, len(cpuRel))
				assert.Less(t, rel(r, cpuRel), 1e-4, "--buffer %s: the relation rows train alike", mode)
			}
		})
	}
}

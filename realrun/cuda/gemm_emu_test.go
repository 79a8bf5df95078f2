//go:build !cuda

package cuda

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/workload"
)

// The products go to cuBLAS when the GPU has it and to the built-in
// kernel when not, and both train alike: one bucket of each model, from
// the same partitions and seed, through the emulated cuBLAS (column-major,
// so the engine's row-major mapping is checked) and through the kernel.
func TestGEMMCuBLASAndFallbackAgree(t *testing.T) {
	for _, kind := range workload.Models {
		t.Run(string(kind), func(t *testing.T) {
			st, err := workdir.Prepare(workdir.DataSpec{Dataset: "fb15k", Scale: 0.02, Seed: 3, P: 2, Dim: 18, Model: string(kind), Workdir: filepath.Join(t.TempDir(), "work")})
			require.NoError(t, err)
			deg, err := st.Degrees()
			require.NoError(t, err)
			h := realrun.Hyper{Training: workload.Training{Model: kind, Dim: 18, Batch: 300, Negatives: 13, ChunkSize: 37}, DegreeFrac: 0.5, LR: 0.1, Workers: 1}
			plan, err := orderings.Build("beta", 2, 2, orderings.Belady, 0)
			require.NoError(t, err)
			train := func(noBLAS bool) ([]float32, string) {
				require.NoError(t, st.InitPartitions(3, 0.1))
				g := newEmu()
				g.noBLAS = noBLAS
				e, err := newEngine(realrun.EngineOptions{Engine: "cuda", Buffer: realrun.BufferGPU, Hyper: h, Store: st, Degrees: deg, Seed: 1, C: plan.C}, g)
				require.NoError(t, err)
				defer e.Close()
				ep, err := realrun.RunEpoch(st, plan, e, realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: 1})
				require.NoError(t, err)
				require.NotNil(t, ep.GPU)
				assert.Equal(t, e.GEMM(), ep.GPU.GEMM, "the report says which GEMM ran")
				return fixture.Flat(t, st), e.GEMM()
			}
			viaBLAS, what := train(false)
			assert.Equal(t, "emulated cuBLAS (Go, column-major)"+graphsOn, what)
			viaKernel, what := train(true)
			assert.Equal(t, "built-in sgemm_batched kernel (cuBLAS: not found (emulated GPU without cuBLAS))"+graphsOn, what)
			require.Len(t, viaKernel, len(viaBLAS))
			closeTo(t, viaKernel, viaBLAS, 1e-5, "partitions after one epoch")
		})
	}
}

// --tf32 asks cuBLAS for tensor-core math; without cuBLAS the engine says
// that it has no effect.
func TestTF32WithoutCuBLAS(t *testing.T) {
	st, deg := prepare(t)
	h := hyper()
	h.TF32 = true
	g := newEmu()
	g.noBLAS = true
	e, err := newEngine(realrun.EngineOptions{Engine: "cuda", Hyper: h, Store: st, Degrees: deg, Seed: 1, C: 2}, g)
	require.NoError(t, err)
	defer e.Close()
	assert.Contains(t, e.GEMM(), "{TF32} has no effect without cuBLAS")
	e2, err := newEngine(realrun.EngineOptions{Engine: "cuda", Hyper: h, Store: st, Degrees: deg, Seed: 1, C: 2}, newEmu())
	require.NoError(t, err)
	defer e2.Close()
	assert.Contains(t, e2.GEMM(), "TF32")
}

// The engine reports how long host↔GPU copies were in flight and how much
// of that overlapped training: with --buffer gpu the partition copies run
// on the copy stream beside the buckets' training; with --buffer host the
// rows cross between a batch's kernels and hide nothing.
func TestHiddenTransferReported(t *testing.T) {
	st, deg := prepare(t)
	plan, err := orderings.Build("beta", st.M.P, 2, orderings.Belady, 0)
	require.NoError(t, err)
	for _, mode := range []string{realrun.BufferGPU, realrun.BufferHost} {
		t.Run(mode, func(t *testing.T) {
			require.NoError(t, st.InitPartitions(3, 0.1))
			e, err := newEngine(realrun.EngineOptions{Engine: "cuda", Buffer: mode, Hyper: hyper(), Store: st, Degrees: deg, Seed: 1, C: plan.C}, newEmu())
			require.NoError(t, err)
			defer e.Close()
			ep, err := realrun.RunEpoch(st, plan, e, realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: 1})
			require.NoError(t, err)
			assert.Positive(t, ep.TransferSeconds)
			assert.LessOrEqual(t, ep.HiddenTransferSeconds, ep.TransferSeconds)
			assert.LessOrEqual(t, ep.TransferSeconds, ep.EpochSeconds)
			if mode == realrun.BufferHost {
				assert.Zero(t, ep.HiddenTransferSeconds)
			}
			t.Logf("%s: transfers %.4f s, hidden %.4f s, epoch %.4f s", mode, ep.TransferSeconds, ep.HiddenTransferSeconds, ep.EpochSeconds)
		})
	}
}

// noCapture is an emulated GPU that cannot record graphs.
type noCapture struct{ *emuGPU }

func (noCapture) capture() error { return errors.New("capture refused") }

// The chunk step replayed as graphs trains exactly as its launches made
// one by one, and a GPU that cannot record graphs gets the launches, its
// GEMM note saying why.
func TestGraphsFallBack(t *testing.T) {
	st, deg := prepare(t)
	plan, err := orderings.Build("beta", st.M.P, 2, orderings.Belady, 0)
	require.NoError(t, err)
	train := func(g gpu) ([]float32, string) {
		require.NoError(t, st.InitPartitions(3, 0.1))
		e, err := newEngine(realrun.EngineOptions{Engine: "cuda", Buffer: realrun.BufferGPU, Hyper: hyper(), Store: st, Degrees: deg, Seed: 1, C: plan.C}, g)
		require.NoError(t, err)
		defer e.Close()
		_, err = realrun.RunEpoch(st, plan, e, realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: 1})
		require.NoError(t, err)
		return fixture.Flat(t, st), e.GEMM()
	}
	replayed, note := train(newEmu())
	assert.Contains(t, note, graphsOn)
	direct, note := train(noCapture{newEmu()})
	assert.Contains(t, note, "chunk step launched directly (CUDA graphs failed: capture refused)")
	assert.NotContains(t, note, graphsOn)
	assert.Equal(t, direct, replayed)
}

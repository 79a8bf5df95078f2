package validate

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/cuda"
	"github.com/tierflow/tierflow/realrun/job"
)

// --compare-sim --engine cuda runs the CUDA engine (here on the emulated
// GPU) and predicts it with the simulator's model of that engine and
// buffer mode: the same bytes as the Plan, and both sides report the
// host↔GPU copy time and the part of it hidden behind training. A device
// profile without a GPU is refused at once.
func TestCompareSimCUDA(t *testing.T) {
	if !slices.Contains(realrun.EngineNames(), "cuda") {
		cuda.RegisterEmulated()
	}
	dir := t.TempDir()
	prof := devices.Profile{Name: "placeholder",
		Disk: devices.Disk{Read: 1e9, Write: 1e9, FullDuplex: true},
		CPU:  devices.CPU{Workers: 1, Memory: 1 << 30, BatchEdges: 1e6, GatherBW: 1e9},
	}
	noGPU := filepath.Join(dir, "cpu.yaml")
	data, err := prof.YAML()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(noGPU, data, 0o644))
	prof.PCIe = devices.PCIe{H2D: 1e10, D2H: 1e10}
	prof.GPU = devices.GPU{Name: "emulated", Count: 1, Memory: 1 << 30, FLOPS: 1e9, MemoryBW: 1e15, BatchEdges: 1e15}
	withGPU := filepath.Join(dir, "gpu.yaml")
	data, err = prof.YAML()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(withGPU, data, 0o644))

	o := job.Defaults
	o.Dataset, o.Scale, o.Dim, o.Batch, o.Negatives, o.Workers, o.Seed = "twitter", 0.0001, 8, 500, 10, 1, 1
	o.P, o.C, o.Ordering, o.Engine, o.Workdir = 4, 2, "beta", "cuda", filepath.Join(dir, "work")
	_, err = CompareSim(o, noGPU, nil, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no GPU in the profile")

	for _, tc := range []struct{ buffer, system string }{{realrun.BufferGPU, "realrun-cuda"}, {realrun.BufferHost, "realrun-cuda-host"}} {
		t.Run(tc.buffer, func(t *testing.T) {
			o := o
			o.Buffer, o.Overwrite = tc.buffer, true
			var log bytes.Buffer
			out, err := CompareSim(o, withGPU, nil, &log)
			require.NoError(t, err, log.String())
			require.Len(t, out.Results, 1)
			c := out.Results[0]
			assert.True(t, c.CountsMatch, "the engine moves the Plan's bytes")
			assert.Equal(t, tc.system, c.Predicted.System)
			assert.Positive(t, c.Measured.TransferSeconds)
			assert.Positive(t, c.Predicted.TransferSeconds)
			assert.LessOrEqual(t, c.Predicted.HiddenTransferSeconds, c.Predicted.TransferSeconds)
			assert.LessOrEqual(t, c.Measured.HiddenTransferSeconds, c.Measured.TransferSeconds)
			if tc.buffer == realrun.BufferHost {
				assert.Zero(t, c.Predicted.HiddenTransferSeconds)
				assert.Zero(t, c.Measured.HiddenTransferSeconds)
			}
		})
	}
}

// realrun calibrate --engine cuda measures the disk and the GPU alone: a
// profile with the GPU's rates in both buffer modes, at the run's mean
// bucket, and no CPU engine figures (which the CUDA engine's runs do not
// need).
func TestCalibrateForCUDA(t *testing.T) {
	if !slices.Contains(realrun.EngineNames(), "cuda") {
		cuda.RegisterEmulated()
	}
	o := job.Defaults
	o.Dataset, o.Scale, o.Dim, o.Batch, o.Negatives, o.Workers = "twitter", 0.0001, 8, 500, 10, 1
	o.P, o.Engine = 4, "cuda"
	cal, err := Calibrate(o, t.TempDir(), 1<<20, "gpu-only", 0, io.Discard)
	require.NoError(t, err)
	require.NotNil(t, cal.GPU)
	assert.Positive(t, cal.GPU.EdgesPerSecond)
	assert.Positive(t, cal.GPU.HostEdgesPerSecond)
	assert.Positive(t, cal.GPU.BucketEdges)
	assert.Equal(t, 1, cal.Profile.GPU.Count)
	assert.Positive(t, float64(cal.Profile.CPU.BatchEdges), "--buffer host's rate, folded")
	_, ok := cal.Profile.CPU.Train.For("dot")
	assert.False(t, ok, "no CPU engine figures")
	assert.NoError(t, cal.Profile.Validate())
}

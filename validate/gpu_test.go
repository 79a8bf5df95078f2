package validate

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

// A measured --buffer host rate goes into the host side of a batch built
// on the CPU (cpu.batch_edges, gather set free): the simulator's CPU stage
// plus its GPU stage (products and rows over PCIe) give the measured rate
// back; a rate faster than the GPU stage alone leaves the host side free.
func TestGPUCalibrationApplyHost(t *testing.T) {
	h := realrun.Hyper{Training: workload.Training{Model: workload.Dot, Dim: 100, Batch: 50000, Negatives: 1000}}
	for _, host := range []float64{1.5e6, 5e6} {
		cal := calibrate.GPUCalibration{Name: "fake", MemoryBytes: 80 << 30, H2D: 5.5e10, D2H: 5.5e10, EdgesPerSecond: 12e6, HostEdgesPerSecond: host}
		var p devices.Profile
		require.NoError(t, cal.Apply(&p, h))
		c := sim.CPUBatchCost(p, h.Training, h.Batch)
		assert.InDelta(t, float64(h.Batch)/host, c.CPU+c.GPU, 1e-6, "host rate %g: CPU stage %g s + GPU stage %g s", host, c.CPU, c.GPU)
		assert.Greater(t, c.CPU, 0.0)
	}
	cal := calibrate.GPUCalibration{Name: "fake", H2D: 5.5e10, D2H: 5.5e10, EdgesPerSecond: 12e6, HostEdgesPerSecond: 1e12}
	var p devices.Profile
	require.NoError(t, cal.Apply(&p, h))
	assert.Less(t, sim.CPUBatchCost(p, h.Training, h.Batch).CPU, 1e-6)
}

// A GPU calibration folds its measured rate into gpu.flops so that the
// simulator's GPU batch cost gives back the measured edges per second.
func TestGPUCalibrationApply(t *testing.T) {
	h := realrun.Hyper{Training: workload.Training{Model: workload.ComplEx, Dim: 100, Batch: 10000, Negatives: 100}}
	cal := calibrate.GPUCalibration{Name: "fake", MemoryBytes: 80 << 30, H2D: 2.5e10, D2H: 2.4e10, EdgesPerSecond: 2e6}
	var p devices.Profile
	require.NoError(t, cal.Apply(&p, h))
	assert.Equal(t, 1, p.GPU.Count)
	assert.InDelta(t, 2.5e10, float64(p.PCIe.H2D), 0)
	tr := workload.Training{Model: workload.Model(h.Model), Dim: h.Dim, Batch: h.Batch, Negatives: h.Negatives}
	secs := sim.GPUBatchCost(p, tr, h.Batch).GPU
	assert.InDelta(t, float64(h.Batch)/2e6, secs, 1e-4*secs, "one batch at the measured rate (the 1e15 rates add 1e-5)")
	assert.Error(t, calibrate.GPUCalibration{}.Apply(&p, h))
	// Applied to a whole profile, the result validates.
	prof, err := devices.Preset("h100-nvme")
	require.NoError(t, err)
	require.NoError(t, cal.Apply(&prof, h))
	assert.NoError(t, prof.Validate())
	assert.Equal(t, "fake", prof.GPU.Name)
	_, err = calibrate.CalibrateGPU(1<<20, h, 1000, 0)
	if !slices.Contains(realrun.EngineNames(), "cuda") {
		var un *realrun.EngineUnavailable
		assert.True(t, errors.As(err, &un), "%v", err)
	}
}

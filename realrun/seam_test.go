package realrun

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/telemetry"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

func TestCheckEngine(t *testing.T) {
	tests := []struct {
		engine, buffer string
		bad            bool // a BadInput
		unavailable    bool // not in this build
	}{
		{"", "", false, false},
		{"cpu", "", false, false},
		{"cpu", "host", false, false},
		{"cpu", "gpu", true, false},
		{"tpu", "", true, false},
		{"cuda", "disk", true, false},
	}
	for _, tc := range tests {
		err := CheckEngine(tc.engine, tc.buffer)
		var bad *inputerr.Error
		assert.Equal(t, tc.bad, errors.As(err, &bad), "%s/%s: %v", tc.engine, tc.buffer, err)
	}
	// Without -tags cuda nothing registers "cuda": selecting it says how to build it.
	if _, ok := engines["cuda"]; !ok {
		err := CheckEngine("cuda", "gpu")
		var un *EngineUnavailable
		require.True(t, errors.As(err, &un), "%v", err)
		assert.Contains(t, err.Error(), "make build-cuda")
		assert.Equal(t, []string{"cpu"}, EngineNames())
	}
}

// The CPU engine draws its negatives through NegativeSampler: the same
// seed draws the same nodes, half of them from each side.
func TestNegativeSamplerSides(t *testing.T) {
	st := prepare(t, "fb15k", 0.05, 2, 8, "dot")
	deg, err := st.Degrees()
	require.NoError(t, err)
	ns := NewNegativeSampler(st, deg, 0.5)
	draw := func() ([]int32, []bool) {
		rows, side := make([]int32, 10), make([]bool, 10)
		ns.Draw(rand.New(rand.NewPCG(7, 8)), 0, 1, rows, side)
		return rows, side
	}
	r1, s1 := draw()
	r2, s2 := draw()
	assert.Equal(t, r1, r2)
	assert.Equal(t, s1, s2)
	for k, s := range s1 {
		assert.Equal(t, k%2 == 1, s)
		assert.Less(t, r1[k], int32(st.M.Rows))
	}
}

// A GPU run's JSON names the GPU and carries its measured utilisation and
// PCIe bytes (here from a fake NVML source).
func TestApplyGPUJSON(t *testing.T) {
	src := &telemetry.Fake{
		GPU:      telemetry.Info{Name: "NVIDIA H200 (fake)", MemoryBytes: 141 << 30, Driver: "580.65", CUDA: "13.0"},
		Readings: []telemetry.Sample{{Utilization: 0.8, MemoryUsed: 5 << 30, PCIeRXPerSec: 1e10, PCIeTXPerSec: 5e9}},
	}
	s, err := telemetry.NewSampler(src, 0)
	require.NoError(t, err)
	s.Tick(0)
	s.Tick(1)
	rep, err := s.Report()
	require.NoError(t, err)
	rep.H2DBytes, rep.D2HBytes, rep.KernelSeconds = 123, 45, 0.9
	ep := Epoch{Epoch: 1}
	ep.EpochSeconds = 2
	ApplyGPU(&ep, rep)
	data, err := json.Marshal(ep)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(data, &got))
	assert.InDelta(t, 0.8, got["gpu_utilization"], 1e-12)
	gpu := got["gpu"].(map[string]any)
	assert.Equal(t, "NVIDIA H200 (fake)", gpu["name"])
	assert.Equal(t, "580.65", gpu["driver"])
	assert.Equal(t, "13.0", gpu["cuda"])
	assert.InDelta(t, 0.8, gpu["utilization"], 1e-12)
	assert.InDelta(t, 1e10, gpu["pcie_rx_bytes"], 1)
	assert.InDelta(t, 5e9, gpu["pcie_tx_bytes"], 1)
	assert.InDelta(t, 123, gpu["h2d_bytes"], 0)
	res := got["resources"].([]any)
	assert.Equal(t, "gpu", res[0].(map[string]any)["name"])
	// The CPU engine's JSON has no "gpu" object.
	data, err = json.Marshal(Epoch{})
	require.NoError(t, err)
	assert.NotContains(t, string(data), `"gpu":`)
}

// A GPU calibration folds its measured rate into gpu.flops so that the
// simulator's GPU batch cost gives back the measured edges per second.
func TestGPUCalibrationApply(t *testing.T) {
	h := Hyper{Training: workload.Training{Model: workload.ComplEx, Dim: 100, Batch: 10000, Negatives: 100}}
	cal := GPUCalibration{Name: "fake", MemoryBytes: 80 << 30, H2D: 2.5e10, D2H: 2.4e10, EdgesPerSecond: 2e6}
	var p devices.Profile
	require.NoError(t, cal.Apply(&p, h))
	assert.Equal(t, 1, p.GPU.Count)
	assert.InDelta(t, 2.5e10, float64(p.PCIe.H2D), 0)
	tr := workload.Training{Model: workload.Model(h.Model), Dim: h.Dim, Batch: h.Batch, Negatives: h.Negatives}
	secs := sim.GPUBatchCost(p, tr, h.Batch).GPU
	assert.InDelta(t, float64(h.Batch)/2e6, secs, 1e-4*secs, "one batch at the measured rate (the 1e15 rates add 1e-5)")
	assert.Error(t, GPUCalibration{}.Apply(&p, h))
	// Applied to a whole profile, the result validates.
	prof, err := devices.Preset("h100-nvme")
	require.NoError(t, err)
	require.NoError(t, cal.Apply(&prof, h))
	assert.NoError(t, prof.Validate())
	assert.Equal(t, "fake", prof.GPU.Name)
	_, err = CalibrateGPU(1<<20, h, 1000)
	if _, ok := engines["cuda"]; !ok {
		var un *EngineUnavailable
		assert.True(t, errors.As(err, &un), "%v", err)
	}
}

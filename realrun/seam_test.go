package realrun_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	_ "github.com/tierflow/tierflow/realrun/cpu"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/workload"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/telemetry"
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
		err := realrun.CheckEngine(tc.engine, tc.buffer)
		var bad *inputerr.Error
		assert.Equal(t, tc.bad, errors.As(err, &bad), "%s/%s: %v", tc.engine, tc.buffer, err)
	}
	// Without -tags cuda nothing registers "cuda": selecting it says how to build it.
	if !slices.Contains(realrun.EngineNames(), "cuda") {
		err := realrun.CheckEngine("cuda", "gpu")
		var un *realrun.EngineUnavailable
		require.True(t, errors.As(err, &un), "%v", err)
		assert.Contains(t, err.Error(), "make build-cuda")
		assert.Equal(t, []string{"cpu"}, realrun.EngineNames())
	}
	// Every engine opens through the registry: the CPU engine registers
	// itself as "cpu" (realrun/cpu, imported by this test).
	st := fixture.Prepare(t, "fb15k", 0.01, 2, 4, workload.Dot)
	deg, err := st.Degrees()
	require.NoError(t, err)
	eng, err := realrun.NewEngine(realrun.EngineOptions{Hyper: fixture.Hyper(workload.Dot, 4), Store: st, Degrees: deg, Seed: 1, C: 2})
	require.NoError(t, err)
	assert.Equal(t, "cpu", eng.Name())
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
	ep := realrun.Epoch{Epoch: 1}
	ep.EpochSeconds = 2
	realrun.ApplyGPU(&ep, rep)
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
	data, err = json.Marshal(realrun.Epoch{})
	require.NoError(t, err)
	assert.NotContains(t, string(data), `"gpu":`)
}

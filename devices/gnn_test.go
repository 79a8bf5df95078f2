package devices

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGNNSection: a profile's gnn section parses strictly, round-trips,
// and GNNCost fills a GPU engine's rates from the GPU.
func TestGNNSection(t *testing.T) {
	cpu := minimal + "gnn:\n  engine: cpu\n  flops: 50 GFLOP/s\n  aggregation: {mean: 4 GB/s, lstm: 2 GB/s}\n  gather: 5 GB/s\n  sample: 20M edges/s\n  optimizer: 3 GB/s\n"
	p, err := Parse([]byte(cpu), "cpu.yaml")
	require.NoError(t, err)
	assert.Equal(t, GNN{Engine: GNNEngineCPU, FLOPS: 50e9, Aggregation: GNNAggregation{Mean: 4e9, LSTM: 2e9}, Gather: 5e9, Sample: 20e6, Optimizer: 3e9}, p.GNN)
	y, err := p.YAML()
	require.NoError(t, err)
	back, err := Parse(y, "back")
	require.NoError(t, err)
	assert.Equal(t, p, back)
	c, err := p.GNNCost()
	require.NoError(t, err)
	assert.Equal(t, p.GNN, c, "a cpu engine's rates are its own")
	assert.Equal(t, Bandwidth(2e9), c.Aggregation.For("sage-lstm"))
	assert.Zero(t, c.Aggregation.For("mlp"))

	betty, err := Preset("betty-rtx6000")
	require.NoError(t, err)
	c, err = betty.GNNCost()
	require.NoError(t, err)
	assert.Equal(t, GNNEngineGPU, c.Engine)
	assert.Equal(t, betty.GPU.FLOPS, c.FLOPS)
	assert.Equal(t, betty.GPU.MemoryBW, c.Aggregation.For("gat"))
	assert.InDelta(t, 2.11e9, float64(c.Gather), 1, "the fitted figure")

	p3, err := Preset("p3.2xlarge")
	require.NoError(t, err)
	c, err = p3.GNNCost()
	require.NoError(t, err)
	assert.Equal(t, p3.PCIe.H2D, c.Gather, "without a gnn section, the GPU's rates")

	for _, tc := range []struct{ yaml, msg string }{
		{"gnn: {engine: tpu}\n", `gnn.engine: "tpu" is not gpu or cpu`},
		{"gnn: {flops: 1 GFLOP/s}\n", "missing required field gnn.engine"},
		{"gnn: {engine: cpu, gather: 1 GB/s}\n", "missing required field gnn.flops"},
		{"gnn: {engine: cpu, flops: 1 GFLOP/s}\n", "missing required field gnn.gather"},
		{"gnn: {engine: gpu}\n", "gnn.engine: gpu needs a GPU"},
		{"gnn: {engine: cpu, flops: 1 GFLOP/s, gather: 1 GB/s, aggregation: {max: 1 GB/s}}\n", "gnn.aggregation.max: unknown field"},
		{"gnn: {engine: cpu, flops: 1 GFLOP/s, gather: 1 GB/s, step: -1ms}\n", "gnn.step"},
		{"gnn: {engine: cpu, flops: 1 GFLOP/s, gather: 1 GB/s, sample: 5 GB/s}\n", "gnn.sample"},
	} {
		_, err := Parse([]byte(minimal+tc.yaml), "p.yaml")
		require.Error(t, err, tc.yaml)
		assert.Contains(t, err.Error(), tc.msg, tc.yaml)
	}
	_, err = Profile{Name: "x", CPU: CPU{Workers: 1}}.GNNCost()
	assert.ErrorContains(t, err, "no gnn section and no GPU")
}

package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/realrun/gnn"
	"github.com/tierflow/tierflow/realrun/gnn/data"
)

// TestGNN: a calibration at a run's shape is a valid profile of the CPU
// engine, every rate measured, and it says what it measured.
func TestGNN(t *testing.T) {
	g, err := data.Generate("ogbn-arxiv", 0.02, 1)
	require.NoError(t, err)
	o := gnn.Defaults
	o.Model, o.Hidden, o.Batch, o.Fanouts, o.Workers = "gat", 16, 128, []int{5, 5}, 2
	cal, err := GNN(g, o, GNNOptions{Batches: 2, Name: "here"})
	require.NoError(t, err)
	p := cal.Profile
	require.NoError(t, p.Validate())
	assert.Equal(t, "here", p.Name)
	assert.Equal(t, devices.GNNEngineCPU, p.GNN.Engine)
	for name, v := range map[string]float64{"flops": float64(p.GNN.FLOPS), "gather": float64(p.GNN.Gather), "sample": float64(p.GNN.Sample),
		"split": float64(p.GNN.Split), "optimizer": float64(p.GNN.Optimizer)} {
		assert.Positive(t, v, name)
	}
	assert.Equal(t, 2, cal.Batches)
	assert.Equal(t, "5,5", cal.Fanouts)
	require.Len(t, cal.Models, 1)
	assert.Equal(t, "gat", cal.Models[0].Model)
	assert.Positive(t, cal.Models[0].FLOPs)
	assert.Positive(t, cal.Models[0].AggregationBytes)
	assert.Equal(t, 2*StepMicroBatches+StepMicroBatches-1, cal.Step.MicroBatches, "three batches in 8, less the warm-up")
	c, err := p.GNNCost()
	require.NoError(t, err)
	assert.Equal(t, p.GNN, c)
}

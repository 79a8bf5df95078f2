package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/cmd/simulate/internal/gnncmd"
	"github.com/tierflow/tierflow/devices"
)

// TestGNNGolden pins simulate gnn's CSV on a small generated graph:
// Betty's machine, a fixed split at 1, 2 and 4 micro-batches and the
// count a budget forces.
func TestGNNGolden(t *testing.T) {
	out, errOut, code := runCmd("gnn", "--dataset", "cora", "--model", "sage-pool", "--hidden", "64", "--batch", "64", "--micro-split", "range", "--micro-batches", "1,2,4", "--csv")
	require.Equal(t, 0, code, errOut)
	assertGolden(t, filepath.Join("testdata", "gnn_cora.csv"), out)
}

func TestGNNTableAndJSON(t *testing.T) {
	out, errOut, code := runCmd("gnn", "--dataset", "cora", "--micro-split", "range", "--micro-batches", "1,3")
	require.Equal(t, 0, code, errOut)
	for _, s := range []string{"redundant rows", "peak GB", "epoch", "on betty-rtx6000 (gpu engine)", "no overlap"} {
		assert.Contains(t, out, s)
	}
	out, errOut, code = runCmd("gnn", "--dataset", "cora", "--micro-split", "range", "--micro-batch-memory", "20MB", "--json")
	require.Equal(t, 0, code, errOut)
	var got gnncmd.Output
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got.Rows, 1)
	r := got.Rows[0]
	assert.Zero(t, r.K)
	assert.Greater(t, r.MaxMicroBatches, 1, "20 MB forces a split")
	assert.LessOrEqual(t, r.PeakBytes, int64(20e6))
	assert.Equal(t, int64(20e6), got.Budget)
	assert.Equal(t, 140, got.TrainNodes)
}

// TestGNNCalibrate: --calibrate writes a profile that says what it
// measured and that simulate gnn --device reads back.
func TestGNNCalibrate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.yaml")
	_, errOut, code := runCmd("gnn", "--dataset", "cora", "--hidden", "16", "--calibrate", path, "--micro-batches", "1")
	require.Equal(t, 0, code, errOut)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), "# Measured by `simulate gnn --calibrate`")
	p, err := devices.Load(path)
	require.NoError(t, err)
	assert.Equal(t, devices.GNNEngineCPU, p.GNN.Engine)
	assert.Positive(t, float64(p.GNN.FLOPS))
	assert.Positive(t, float64(p.GNN.Gather))
	_, errOut, code = runCmd("gnn", "--dataset", "cora", "--hidden", "16", "--device", path, "--micro-batches", "1")
	require.Equal(t, 0, code, errOut)
	_, errOut, code = runCmd("gnn", "--calibrate", path, "--device", "p3.2xlarge")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--calibrate and --device")
}

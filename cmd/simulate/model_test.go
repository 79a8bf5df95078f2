package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModelFlagEveryName: --model takes every named model, its aliases
// and PBG's operator+comparator pairs (a named pair by its name), and
// each costs something of its own.
func TestModelFlagEveryName(t *testing.T) {
	tests := []struct{ arg, want string }{
		{"dot", "dot"}, {"DistMult", "distmult"}, {"complex", "complex"},
		{"transe-l1", "transe-l1"}, {"TransE_l2", "transe-l2"}, {"transe", "transe-l2"}, {"rotate", "rotate"},
		{"linear+dot", "linear+dot"}, {"affine+cos", "affine+cos"}, {"none+squared_l2", "none+squared_l2"},
		{"translation+l2", "transe-l2"}, {"complex_diagonal+dot", "complex"}, {"diagonal+l1", "diagonal+l1"},
	}
	epochs := map[string]float64{}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			out, errOut, code := runCmd("--system", "in-gpu", "--dataset", "fb15k", "--dim", "100", "--model", tt.arg, "--json")
			require.Equal(t, 0, code, errOut)
			var got struct {
				Training struct{ Model string }
				Results  []struct {
					EpochSeconds float64 `json:"epoch_seconds"`
				}
			}
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			assert.Equal(t, tt.want, got.Training.Model)
			require.NotEmpty(t, got.Results)
			epochs[tt.want] = got.Results[0].EpochSeconds
		})
	}
	// The cost rule: linear's d² operator and relation rows cost more than
	// dot; TransE's pairwise L1 more than its GEMM L2.
	assert.Greater(t, epochs["linear+dot"], epochs["dot"])
	assert.Greater(t, epochs["transe-l1"], epochs["transe-l2"])
}

// TestModelFlagBadInput: an unknown model or operator or comparator, or
// a realrun simulation on a profile without the model's cost, is one line
// and exit 2.
func TestModelFlagBadInput(t *testing.T) {
	prof := cpuProfile(t, `dot: {edges: 500k edges/s}
  train_shape: {model: dot, dim: 100, batch: 10000, negatives: 100, chunk: 100, workers: 2, partition_rows: 3000}`)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown model", []string{"--model", "transh"}, []string{"--model", `unknown model "transh"`}},
		{"unknown operator", []string{"--model", "bilinear+dot"}, []string{"--model", `unknown operator "bilinear"`}},
		{"unknown comparator", []string{"--model", "linear+l3"}, []string{"--model", `unknown comparator "l3"`}},
		{"rotate operator", []string{"--model", "rotate+dot"}, []string{"--model", "RotatE's"}},
		{"no cost for the model", []string{"--system", "realrun", "--device", prof, "--dataset", "fb15k", "--p", "4", "--c", "2", "--model", "rotate"},
			[]string{"--model rotate", "edge rate for dot alone", "realrun calibrate --model rotate"}},
		{"no cost for a pair", []string{"--system", "realrun", "--device", prof, "--dataset", "fb15k", "--p", "4", "--c", "2", "--model", "linear+cos"},
			[]string{"realrun calibrate --model linear+cos"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCmd(tt.args...)
			assert.Equal(t, 2, code, out)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(strings.TrimRight(errOut, "\n"), "\n")+1, errOut)
			for _, w := range tt.want {
				assert.Contains(t, errOut, w)
			}
		})
	}
	// The model it was measured on simulates, its note naming the flag
	// (sim names the field: the command renders it).
	out, errOut, code := runCmd("--system", "realrun", "--device", prof, "--dataset", "fb15k", "--p", "4", "--c", "2", "--model", "dot")
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "note: --device "+prof+": cpu.train was measured at dot, d=100")
	assert.NotRegexp(t, `\{[A-Z]`, out)
}

// A model the profile has no cost of is priced at another model's rates,
// which a note says, naming the flag.
func TestModelPricedNote(t *testing.T) {
	prof := cpuProfile(t, `dot: {edges: 500k edges/s, row_bandwidth: 10 GB/s, flops: 10 GFLOP/s}`)
	out, errOut, code := runCmd("--system", "realrun", "--device", prof, "--dataset", "fb15k", "--p", "4", "--c", "2", "--model", "complex", "--json")
	require.Equal(t, 0, code, errOut)
	var got Output
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.NotEmpty(t, got.Notes)
	assert.Contains(t, got.Notes, "--device "+prof+": cpu.train has no cost for complex: its terms (the cost rule's edges, bytes, FLOPs and pairwise operations) are priced at cpu.train.dot's rates")
}

// cpuProfile writes a device profile of a CPU machine whose cpu.train is
// train (YAML at the indentation of train's models) and returns its path.
func cpuProfile(t *testing.T, train string) string {
	t.Helper()
	prof := filepath.Join(t.TempDir(), "cal.yaml")
	require.NoError(t, os.WriteFile(prof, []byte(`name: cal
disk: {read: 400 MB/s, write: 400 MB/s, latency: 1ms}
pcie: {h2d: 0, d2h: 0}
gpu: {count: 0}
cpu:
  workers: 2
  memory: 8 GB
  batch_edges: 1M edges/s
  gather_bandwidth: 6 GB/s
  train:
    `+train+"\n"), 0o644))
	return prof
}

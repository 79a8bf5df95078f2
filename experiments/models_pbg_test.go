package experiments

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/workload"
)

func TestParseMPModels(t *testing.T) {
	tests := []struct {
		in   string
		want []MPModel
		err  string
	}{
		{in: "complex", want: []MPModel{{Model: "complex", Loss: "softmax"}}},
		{in: "complex,transe-l2:ranking", want: []MPModel{{Model: "complex", Loss: "softmax"}, {Model: "transe-l2", Loss: "ranking", Margin: 0.1}}},
		{in: "transe-l2:ranking:1.5", want: []MPModel{{Model: "transe-l2", Loss: "ranking", Margin: 1.5}}},
		{in: "linear+cos:logistic", want: []MPModel{{Model: "linear+cos", Loss: "logistic"}}},
		{in: "complex:hinge", err: "unknown loss"},
		{in: "complex:ranking:x", err: "margin"},
		{in: ",complex", err: "MODEL[:LOSS[:MARGIN]]"},
		{in: "a:b:c:d", err: "MODEL[:LOSS[:MARGIN]]"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMPModels(tt.in)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestMPConfigFromEnv(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		check func(t *testing.T, c MPConfig)
		err   string
	}{
		{name: "defaults", env: nil, check: func(t *testing.T, c MPConfig) {
			assert.Equal(t, DefaultMPConfig, c)
		}},
		{name: "overrides", env: map[string]string{"PBG_SRC": "/pbg", "TIERFLOW_MP_MODELS": "complex", "TIERFLOW_MP_SEEDS": "4, 5", "TIERFLOW_MP_EPOCHS": "2", "TIERFLOW_MP_PBG_BATCH": "100, 1000", "TIERFLOW_PYTHON": "py", "TIERFLOW_PBG_SCRIPT": "s.py"},
			check: func(t *testing.T, c MPConfig) {
				assert.Equal(t, "/pbg", c.PBGSrc)
				assert.Equal(t, []MPModel{{Model: "complex", Loss: "softmax"}}, c.Models)
				assert.Equal(t, []int64{4, 5}, c.Seeds)
				assert.Equal(t, 2, c.Epochs)
				assert.Equal(t, []int{100, 1000}, c.PBGBatches)
				assert.Equal(t, "py", c.Python)
				assert.Equal(t, "s.py", c.Script)
			}},
		{name: "bad seeds", env: map[string]string{"TIERFLOW_MP_SEEDS": "1,x"}, err: "TIERFLOW_MP_SEEDS"},
		{name: "bad batch", env: map[string]string{"TIERFLOW_MP_PBG_BATCH": "100,0"}, err: "TIERFLOW_MP_PBG_BATCH"},
		{name: "bad epochs", env: map[string]string{"TIERFLOW_MP_EPOCHS": "0"}, err: "TIERFLOW_MP_EPOCHS"},
		{name: "bad models", env: map[string]string{"TIERFLOW_MP_MODELS": "complex:x"}, err: "TIERFLOW_MP_MODELS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := MPConfigFromEnv(func(k string) string { return tt.env[k] })
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			tt.check(t, c)
		})
	}
}

func TestMPRowsMedians(t *testing.T) {
	m := MPModel{Model: "complex", Loss: "softmax"}
	runs := []MPRun{
		{Engine: "tierflow", Model: m, Seed: 1, TrainSeconds: 1, WallSeconds: 2, EdgesPerSecond: 300, MRR: 0.5, Hits1: 0.4, Hits10: 0.9},
		{Engine: "tierflow", Model: m, Seed: 2, TrainSeconds: 3, WallSeconds: 4, EdgesPerSecond: 100, MRR: 0.7, Hits1: 0.6, Hits10: 0.8},
		{Engine: "tierflow", Model: m, Seed: 3, TrainSeconds: 2, WallSeconds: 3, EdgesPerSecond: 200, MRR: 0.6, Hits1: 0.5, Hits10: 0.7},
		{Engine: "pbg", Model: m, Seed: 1, TrainSeconds: 10, WallSeconds: 20, EdgesPerSecond: 30, MRR: 0.3, Hits1: 0.1, Hits10: 0.8},
	}
	rows := MPRows(runs)
	require.Len(t, rows, 5, "4 runs and one median (a single pbg run has none)")
	assert.Equal(t, []string{"complex", "softmax", "pbg", "1", "10.0", "20.0", "30", "0.300", "0.100", "0.800"}, rows[3])
	assert.Equal(t, []string{"complex", "softmax", "tierflow", "median", "2.0 [1.0–3.0]", "3.0 [2.0–4.0]", "200 [100–300]",
		"0.600 [0.500–0.700]", "0.500 [0.400–0.600]", "0.800 [0.700–0.900]"}, rows[4])
}

// TestRunPBGReadsTheScriptsJSON runs a stand-in for Python that prints
// pbg_side.py's JSON, so that no Python is needed.
func TestRunPBGReadsTheScriptsJSON(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "python")
	require.NoError(t, os.WriteFile(fake, []byte(`#!/bin/sh
[ "$PBG_SRC" = /pbg ] || { echo "PBG_SRC=$PBG_SRC" >&2; exit 3; }
[ "$1" = script.py ] || { echo "args: $*" >&2; exit 4; }
echo '{"pbg": {"source": "/pbg", "commit": "6fccd3f"}, "torch": "1.13", "train_seconds": 5.5, "wall_seconds": 8, "edges_per_second": 1000, "test": {"edges": 3, "mrr": 0.25, "hits1": 0.125, "hits10": 0.5, "self_above": 0.75}}'
`), 0o755))
	c := DefaultMPConfig
	c.Python, c.Script, c.PBGSrc = fake, "script.py", "/pbg"
	args := c.PBGArgs("/data", MPModel{Model: "transe-l2", Loss: "ranking", Margin: 0.1}, 1000, 2, "/work")
	assert.Equal(t, []string{"script.py", "--train", "/data/train.tsv", "--valid", "/data/valid.tsv", "--test", "/data/test.tsv",
		"--model", "transe-l2", "--loss", "ranking", "--margin", "0.1", "--dim", "100", "--epochs", "10", "--negatives", "100",
		"--batch", "1000", "--lr", "0.3", "--workers", "2", "--threads", "2", "--seed", "2", "--workdir", "/work"}, args)
	res, err := c.RunPBG(args)
	require.NoError(t, err)
	assert.Equal(t, "6fccd3f", res.PBG.Commit)
	assert.InDelta(t, 5.5, res.TrainSeconds, 0)
	assert.InDelta(t, 0.25, res.Test.MRR, 0)
	assert.InDelta(t, 0.75, res.Test.SelfAbove, 0)

	c.PBGSrc = "/elsewhere"
	_, err = c.RunPBG(args)
	assert.ErrorContains(t, err, "PBG_SRC=/elsewhere", "the script's stderr is kept")
}

func TestTierflowCommandNamesTheLoss(t *testing.T) {
	c := DefaultMPConfig
	assert.Equal(t, "realrun {Edges} train.tsv {Valid} valid.tsv {Test} test.tsv {Model} complex {Dim} 100 {Epochs} 10 {Negatives} 100 {LR} 0.3 {Workers} 2 {Seed} 1 {Eval} end {EvalProtocol} filtered (at p = 1)",
		c.TierflowCommand(MPModel{Model: "complex", Loss: "softmax"}, 1))
	assert.Contains(t, c.TierflowCommand(MPModel{Model: "transe-l2", Loss: "ranking", Margin: 0.1}, 1), "{Loss} ranking {Margin} 0.1 (at p = 1)")
}

func TestMPModelObjective(t *testing.T) {
	tests := []struct {
		m    MPModel
		want workload.Objective
		err  string
	}{
		{m: MPModel{Model: "complex", Loss: "softmax"}, want: workload.Objective{Loss: workload.Softmax, Regularizer: workload.RegNone}},
		{m: MPModel{Model: "complex"}, want: workload.Objective{Loss: workload.Softmax, Regularizer: workload.RegNone}},
		{m: MPModel{Model: "transe-l2", Loss: "ranking", Margin: 0.1}, want: workload.Objective{Loss: workload.Ranking, Margin: 0.1, Regularizer: workload.RegNone}},
		{m: MPModel{Model: "nope"}, err: "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.m.String(), func(t *testing.T) {
			got, err := tt.m.Objective()
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

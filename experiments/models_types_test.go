package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/useritem"
	"github.com/tierflow/tierflow/workload"
)

// TestDefaultMTConfig checks the grid's models and objectives, so that a
// long reproduction does not stop half-way on a typo.
func TestDefaultMTConfig(t *testing.T) {
	for _, r := range DefaultMTConfig.Runs {
		m, err := workload.ParseModel(string(r.Model))
		require.NoError(t, err, r.Model)
		assert.Equal(t, r.Model, m, "canonical spelling")
		require.NoError(t, m.CheckDim(qoOptions("", 1).Dim), r.Model)
		ob := r.Objective
		ob.Loss, ob.Regularizer = ob.LossKind(), ob.Reg()
		require.NoError(t, ob.Validate(m), r.Model)
	}
	for _, m := range DefaultMTConfig.PBG {
		_, err := m.Objective()
		require.NoError(t, err, m.Model)
	}
	require.NoError(t, DefaultMTConfig.Graph.Check())
	assert.Len(t, DefaultMTConfig.Seeds, 3)
}

func TestMTConfigFromEnv(t *testing.T) {
	env := map[string]string{"TIERFLOW_MT_MODELS": "complex, translation+l2", "TIERFLOW_MT_PBG_MODELS": "none",
		"TIERFLOW_MT_SEEDS": "4,5", "TIERFLOW_MT_BUDGET": "1.5", "TIERFLOW_MT_USERS": "900"}
	c, err := MTConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, []MQRun{{Model: workload.ComplEx}, {Model: workload.TransEL2}}, c.Runs)
	assert.Empty(t, c.PBG)
	assert.Equal(t, []int64{4, 5}, c.Seeds)
	assert.Equal(t, 1.5, c.Budget)
	assert.Equal(t, 900, c.Graph.Users)
	for k, v := range map[string]string{"TIERFLOW_MT_MODELS": "nope", "TIERFLOW_MT_BUDGET": "-1", "TIERFLOW_MT_ITEMS": "x", "TIERFLOW_MT_PBG_MODELS": "complex:hinge"} {
		_, err := MTConfigFromEnv(func(k2 string) string {
			if k2 == k {
				return v
			}
			return ""
		})
		assert.Error(t, err, k)
	}
}

// TestRunModelsTypesSmall trains a small user–item graph with two models
// for one short epoch each (no PBG) and checks the table: the typed
// store, training and evaluation, end to end as make reproduce-types does.
func TestRunModelsTypesSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	c := DefaultMTConfig
	c.Graph = useritem.Config{Users: 600, Items: 120, Communities: 6, P: 2, Valid: 100, Test: 100, Seed: 3}
	c.Runs = []MQRun{{Model: workload.ComplEx}, {Model: workload.TransEL2}}
	c.Seeds = []int64{1, 2}
	c.Budget, c.Cap = 0.001, 1
	c.PBG = nil
	r, err := RunModelsTypes(c)
	require.NoError(t, err)
	require.Len(t, r.Rows, 2)
	for _, row := range r.Rows {
		require.Len(t, row, len(r.Header))
		assert.Equal(t, "tierflow", row[2])
		assert.Equal(t, "1", row[3], "epochs")
	}
	assert.Contains(t, r.Notes[0], "600 users (entity type user, 2 partitions)")
	assert.Contains(t, r.Notes[1], "p = 2, c = 2")
}

// TestMTRunPBG runs a stand-in for Python that prints pbg_side.py's JSON:
// the schema is passed, the epochs follow from the one-epoch probe, and
// one row a model has the seeds' medians.
func TestMTRunPBG(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "python")
	require.NoError(t, os.WriteFile(fake, []byte(`#!/bin/sh
case "$*" in *"--schema $DIR/schema.yaml"*) ;; *) echo "no schema: $*" >&2; exit 3;; esac
case "$*" in
*"--epochs 1 "*) echo '{"operator": "translation", "comparator": "l2", "train_seconds": 4, "edges_per_second": 100, "test": {"mrr": 0.1, "hits10": 0.2}}' ;;
*"--epochs 3 "*"--seed 1 "*) echo '{"pbg": {"source": "/pbg", "commit": "abc"}, "operator": "translation", "comparator": "l2", "train_seconds": 12, "edges_per_second": 300, "test": {"mrr": 0.3, "hits10": 0.5}}' ;;
*"--epochs 3 "*) echo '{"pbg": {"source": "/pbg", "commit": "abc"}, "operator": "translation", "comparator": "l2", "train_seconds": 11, "edges_per_second": 310, "test": {"mrr": 0.4, "hits10": 0.6}}' ;;
*) echo "args: $*" >&2; exit 4;;
esac
`), 0o755))
	t.Setenv("DIR", dir)
	c := DefaultMTConfig
	c.Python, c.Script, c.PBGSrc = fake, "script.py", "/pbg"
	c.Budget, c.Seeds = 10, []int64{1, 2}
	c.PBG = []MPModel{{Model: "transe-l2", Loss: "softmax"}}
	var r Result
	notes, err := c.runPBG(&r, dir, 4)
	require.NoError(t, err)
	require.Len(t, r.Rows, 1)
	assert.Equal(t, []string{"transe-l2 (translation+l2)", "softmax", "pbg b=1000", "3", "11.5", "0.3k", "—", "0.350 [0.300–0.400]", "0.550 [0.500–0.600]"}, r.Rows[0])
	assert.Contains(t, notes[0], "trained in 4.0 s, so 3 epochs")
	assert.Contains(t, strings.Join(notes, "\n"), "--schema DIR/schema.yaml")

	c.PBGSrc = ""
	notes, err = c.runPBG(&r, dir, 4)
	require.NoError(t, err)
	assert.Contains(t, notes[0], "NOT RUN")
}

package experiments

import (
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

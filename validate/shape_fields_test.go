package validate

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/workload"
)

// TestPredictConfigTakesEveryField: the bridge passes the run's training
// shape whole to the simulator and every other field of the engine's
// Hyper either reaches the prediction or is listed with the reason it
// cannot change the epoch's schedule; a new field fails here until it
// is one or the other.
func TestPredictConfigTakesEveryField(t *testing.T) {
	st, h, prof := placeholder(t)
	plan, err := orderings.Build("beta", st.M.P, 2, orderings.Belady, 0)
	require.NoError(t, err)
	h.Training = workload.Training{Model: workload.Dot, Dim: 16, Batch: 1000, Negatives: 20, ChunkSize: 50,
		Objective: workload.Objective{Loss: workload.Logistic, Margin: 2, Adversarial: 0.5, RegCoef: 1e-3}}
	h.Workers = 3
	h.Micro = realrun.MicroBatching{Count: 4}
	cfg, err := predictConfig(st, plan, h, Engine{Name: "cuda"}, true, prof, false)
	require.NoError(t, err)
	assert.Equal(t, h.Training, cfg.Training, "the training shape, whole")
	assert.Equal(t, 3, cfg.Profile.CPU.Workers)
	assert.Equal(t, 4, cfg.MicroBatches)
	assert.False(t, cfg.NoMicroBatching)
	h.Micro = realrun.MicroBatching{}
	cfg, err = predictConfig(st, plan, h, Engine{Name: "cuda"}, true, prof, false)
	require.NoError(t, err)
	assert.Zero(t, cfg.MicroBatches)
	assert.True(t, cfg.NoMicroBatching, "an engine asked for no micro-batches trains whole batches")

	where := map[string]string{
		"Training":   "Config.Training, whole",
		"Workers":    "Profile.CPU.Workers",
		"Micro":      "Config.MicroBatches and NoMicroBatching",
		"DegreeFrac": "how negatives are drawn: in the engine's rate, which the calibration measures at the run's Hyper",
		"TF32":       "the GPU's math: in the GPU calibration's rate, measured at the run's Hyper",
		"Duplicates": "the update rule for repeated rows: in the engine's measured rate",
		"LR":         "the step size: no effect on time",
	}
	ht := reflect.TypeFor[realrun.Hyper]()
	for i := range ht.NumField() {
		f := ht.Field(i).Name
		_, ok := where[f]
		assert.True(t, ok, "realrun.Hyper.%s: pass it to the prediction in predictConfig, or say here why it cannot change the epoch", f)
		delete(where, f)
	}
	assert.Empty(t, where, "fields listed that realrun.Hyper no longer has")
}

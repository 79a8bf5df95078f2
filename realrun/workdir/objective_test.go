package workdir

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A directory trained before the objective was recorded was trained with
// the softmax loss: its settings say so (WithObjective) and resume with
// it, and a run with another loss names the difference.
func TestSettingsWithObjective(t *testing.T) {
	for _, tc := range []struct {
		name string
		was  Settings
		now  Settings
		diff []string
	}{
		{"older directory, softmax", Settings{"--model": "complex"}, Settings{"--model": "complex", "--loss": "softmax"}, nil},
		{"older directory, logistic", Settings{"--model": "complex"}, Settings{"--model": "complex", "--loss": "logistic", "--adversarial": "1"},
			[]string{"--adversarial (none) (now 1)", "--loss softmax (now logistic)"}},
		{"recorded loss", Settings{"--loss": "ranking", "--margin": "1"}, Settings{"--loss": "ranking", "--margin": "1"}, nil},
		{"recorded loss, another", Settings{"--loss": "ranking"}, Settings{"--loss": "softmax"}, []string{"--loss ranking (now softmax)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(tc.was)
			assert.Equal(t, tc.diff, tc.was.WithObjective().Diff(tc.now))
			assert.Len(t, tc.was, before, "the recorded settings are not changed")
		})
	}
	assert.Nil(t, Settings(nil).WithObjective())
}

// A setting's key is its field's words after "--": the key every
// training record has used, so that older directories resume.
func TestSettingKey(t *testing.T) {
	for field, key := range map[string]string{
		"P": "--p", "Dim": "--dim", "OrderingSeed": "--ordering-seed", "LR": "--lr", "DegreeFrac": "--degree-frac",
		"MicroBatchMemory": "--micro-batch-memory", "TF32": "--tf32", "Schema": "--schema",
	} {
		assert.Equal(t, key, SettingKey(field), field)
	}
	assert.Equal(t, "--loss", LossSetting)
	assert.Equal(t, "--schema", SchemaKey)
}

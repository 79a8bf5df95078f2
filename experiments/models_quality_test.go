package experiments

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/workload"
)

func TestMQRunLabel(t *testing.T) {
	for _, c := range []struct {
		run  MQRun
		want string
	}{
		{MQRun{Model: workload.ComplEx}, "softmax"},
		{MQRun{Model: workload.RotatE, Objective: workload.Objective{Loss: workload.Logistic, Margin: 6, Adversarial: 1}}, "logistic (γ 6, α 1)"},
		{MQRun{Model: workload.TransEL2, Objective: workload.Objective{Loss: workload.Ranking, Margin: 0.1}}, "ranking (margin 0.1)"},
		{MQRun{Model: workload.DistMult, Objective: workload.Objective{Regularizer: workload.RegN3, RegCoef: 1e-3}}, "softmax (n3 0.001)"},
	} {
		assert.Equal(t, c.want, c.run.Label())
	}
}

// TestDefaultMQConfig checks that every run of the grid names a model and
// an objective the engine takes, so that a long reproduction does not stop
// half-way on a typo.
func TestDefaultMQConfig(t *testing.T) {
	for _, r := range DefaultMQConfig.Runs {
		m, err := workload.ParseModel(string(r.Model))
		require.NoError(t, err, r.Model)
		assert.Equal(t, r.Model, m, "canonical spelling")
		require.NoError(t, m.CheckDim(qoOptions("", 1).Dim), r.Model)
		ob := r.Objective
		ob.Loss, ob.Regularizer = ob.LossKind(), ob.Reg()
		require.NoError(t, ob.Validate(m), r.Model)
	}
	assert.NotEmpty(t, DefaultMQConfig.Seeds)
	assert.Positive(t, DefaultMQConfig.Budget)
}

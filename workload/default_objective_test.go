package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultObjective(t *testing.T) {
	models := append(append([]Model(nil), Models...), "linear+cos", "affine+dot", "complex_diagonal+cos", "translation+squared_l2")
	for _, m := range models {
		o := DefaultObjective(m)
		require.NoError(t, o.Validate(m), m)
		assert.Equal(t, RegNone, o.Reg(), m)
		assert.Equal(t, Objective{Loss: Softmax, Regularizer: RegNone}, o, m)
	}
}

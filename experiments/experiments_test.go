package experiments

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func col(t *testing.T, r Result, name string) int {
	t.Helper()
	i := r.Column(name)
	require.NotEqual(t, -1, i, "no column %q in %v", name, r.Header)
	return i
}

func TestRegistry(t *testing.T) {
	names := Names()
	assert.Subset(t, names, []string{"edge-micro-fig16", "validate"})
	assert.NotContains(t, names, "fig7", "the simulated experiments register from experiments/simulated")
	assert.IsIncreasing(t, names)
	_, err := Lookup("fig99")
	assert.ErrorContains(t, err, "unknown experiment")
}

package experiments

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func col(t *testing.T, r Result, name string) int {
	t.Helper()
	for i, h := range r.Header {
		if h == name {
			return i
		}
	}
	t.Fatalf("no column %q in %v", name, r.Header)
	return -1
}

func TestRegistry(t *testing.T) {
	names := Names()
	assert.Subset(t, names, []string{"edge-micro-fig16", "validate"})
	assert.NotContains(t, names, "fig7", "the simulated experiments register from experiments/simulated")
	assert.IsIncreasing(t, names)
	_, err := Lookup("fig99")
	assert.ErrorContains(t, err, "unknown experiment")
}

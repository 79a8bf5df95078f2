package cuda

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/workload"
)

// TestTypedStoreRefused: the cuda engine refuses a work directory with
// entity types (not supported yet), with a library error that names no
// flag.
func TestTypedStoreRefused(t *testing.T) {
	st := fixture.PrepareTyped(t, 60, 20, 600, 2, 8, workload.DistMult)
	deg, err := st.Degrees()
	require.NoError(t, err)
	_, err = NewEmulated(realrun.EngineOptions{Engine: "cuda", Buffer: realrun.BufferGPU, Hyper: fixture.Hyper(workload.DistMult, 8), Store: st, Degrees: deg, Seed: 1, C: 2})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "entity types")
	assert.NotContains(t, err.Error(), "--")
}

package dist

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/workload"
)

// TestTypedStoreRefused: several trainers refuse a work directory with
// entity types, in Prepare (the launcher's first step) and in a
// trainer's Run, with ErrTyped and no flag name.
func TestTypedStoreRefused(t *testing.T) {
	st := fixture.PrepareTyped(t, 60, 20, 600, 2, 8, workload.DistMult)
	_, err := Prepare(st)
	require.ErrorIs(t, err, ErrTyped)
	assert.NotContains(t, err.Error(), "--")
	_, err = (&Trainer{Store: st}).Run(context.Background())
	require.ErrorIs(t, err, ErrTyped)
	untyped := fixture.Prepare(t, "fb15k", 0.01, 2, 8, workload.DistMult)
	require.NoError(t, CheckUntyped(untyped))
}

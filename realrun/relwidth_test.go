package realrun_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/workload"
)

// A work directory's initial relations are rels rows of RelWidth(d), as
// the engines start them.
func TestCheckpointRelationsWidths(t *testing.T) {
	for _, m := range []workload.Model{workload.Dot, workload.DistMult, workload.RotatE, "linear+cos"} {
		t.Run(string(m), func(t *testing.T) {
			st := fixture.Prepare(t, "fb15k", 0.02, 2, 8, m)
			got, err := realrun.CheckpointRelations(st, m, 5)
			require.NoError(t, err)
			want, _ := sample.InitRelations(m, st.M.Relations, 8, 5)
			assert.Equal(t, want, got)
			assert.Len(t, got, st.M.Relations*m.RelWidth(8))
		})
	}
}

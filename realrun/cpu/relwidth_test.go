package cpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/workload"
)

// The engine holds rels relation rows of Model.RelWidth(d) floats, starts
// them as sample.InitRelations does, sizes each worker's per-edge relation
// rows by the width, and checkpoints and restores them whole.
func TestEngineRelationWidths(t *testing.T) {
	for _, name := range []string{"dot", "distmult", "complex", "transe-l1", "transe-l2", "rotate", "linear+cos", "affine+l2", "complex_diagonal+dot", "none+cos"} {
		t.Run(name, func(t *testing.T) {
			m, err := workload.ParseModel(name)
			require.NoError(t, err)
			st, deg := dupStore()
			h := dupHyper(m, "")
			eng := New(h, st, deg, 1)
			w := m.RelWidth(dupDim)
			want, _ := sample.InitRelations(m, dupRels, dupDim, 1)
			assert.Equal(t, want, eng.Relations())
			assert.Len(t, eng.rel.emb, dupRels*w)
			assert.Len(t, eng.rel.state, dupRels*w)
			ws := newWorkerScratch(h, 1)
			assert.Len(t, ws.R, h.Chunk()*w)
			assert.Len(t, ws.gR, h.Chunk()*w)
			state := eng.State()
			require.Len(t, state, 2*dupRels*w)
			for i := range state {
				state[i] = float32(i)
			}
			require.NoError(t, eng.Restore(state))
			assert.Equal(t, state, eng.State())
			assert.Error(t, eng.Restore(append(state, 0)), "a checkpoint of another width")
		})
	}
}

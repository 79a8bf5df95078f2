package job

import (
	"bytes"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/workload"
)

// TransE-L2 and a PBG pair (linear+cos: two d×d matrices a relation)
// train end to end on the CPU engine on a tiny knowledge graph: the loss
// per edge falls from the first epoch to the last, and the test split is
// evaluated.
func TestTrainNewModels(t *testing.T) {
	kg := fixture.KGFile(t)
	for _, tc := range []struct {
		model string
		edit  func(*Options)
	}{
		{"transe-l2", func(o *Options) {}},
		{"transe-l2", func(o *Options) { o.Loss, o.Margin = "ranking", f64(1) }},
		{"linear+cos", func(o *Options) {}},
	} {
		t.Run(tc.model, func(t *testing.T) {
			o := Defaults
			o.Edges, o.Model, o.Dim, o.P, o.C, o.Epochs = kg, tc.model, 8, 2, 2, 4
			o.Batch, o.Negatives, o.Workers, o.Eval, o.EvalEdges = 100, 10, 1, "end", 50
			o.Workdir = filepath.Join(t.TempDir(), "work")
			tc.edit(&o)
			var log bytes.Buffer
			out, err := Train(o, nil, false, &log)
			require.NoError(t, err, log.String())
			m, err := workload.ParseModel(tc.model)
			require.NoError(t, err)
			assert.Equal(t, string(m), out.Model)
			want, err := ResolveObjective(o, m)
			require.NoError(t, err)
			assert.Equal(t, want, out.Objective)
			require.Len(t, out.Epochs, 4)
			first, last := out.Epochs[0].LossPerEdge, out.Epochs[3].LossPerEdge
			require.False(t, math.IsNaN(first) || math.IsNaN(last), "loss per edge %v … %v", first, last)
			assert.Less(t, last, first, "the loss falls")
			q := out.Epochs[3].Test
			require.NotNil(t, q, "the test split is evaluated")
			assert.Positive(t, q.MRR)
			assert.False(t, math.IsNaN(q.MRR))
		})
	}
}

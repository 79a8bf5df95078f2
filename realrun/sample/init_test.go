package sample_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/workload"
)

// oldInitRelations is InitRelations as it was before relation widths
// depended on the model: DistMult and ComplEx must start bit for bit as
// they did.
func oldInitRelations(m workload.Model, rels, d int, seed int64) []float32 {
	rng := rand.New(rand.NewPCG(uint64(seed), sample.RelationStream))
	emb := make([]float32, rels*d)
	for i := range emb {
		emb[i] = 1 + 0.1*(2*rng.Float32()-1)
	}
	if m == workload.ComplEx {
		for r := 0; r < rels; r++ {
			for k := d / 2; k < d; k++ {
				emb[r*d+k] = 0.1 * (2*rng.Float32() - 1)
			}
		}
	}
	return emb
}

func TestInitRelationsUnchanged(t *testing.T) {
	for _, m := range []workload.Model{workload.DistMult, workload.ComplEx} {
		t.Run(string(m), func(t *testing.T) {
			emb, state := sample.InitRelations(m, 7, 10, 42)
			assert.Equal(t, oldInitRelations(m, 7, 10, 42), emb)
			assert.Equal(t, make([]float32, 70), state)
		})
	}
}

// Every model's relations are rels rows of RelWidth(d), started as the
// model's authors (PBG's operators) start them.
func TestInitRelationsPerModel(t *testing.T) {
	const rels, d = 3, 4
	eye := []float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}
	for _, tc := range []struct {
		model string
		row   []float32 // one relation's row; nil: checked by hand below
	}{
		{"dot", nil},
		{"none+cos", nil},
		{"transe-l1", []float32{0, 0, 0, 0}},
		{"transe-l2", []float32{0, 0, 0, 0}},
		{"diagonal+cos", []float32{1, 1, 1, 1, 1, 1, 1, 1}},
		{"translation+dot", make([]float32, 8)},
		{"linear+cos", append(append([]float32(nil), eye...), eye...)},
		{"affine+l2", append(append(append(append([]float32(nil), eye...), 0, 0, 0, 0), eye...), 0, 0, 0, 0)},
		{"complex_diagonal+cos", []float32{1, 1, 0, 0, 1, 1, 0, 0}},
		{"rotate", nil},
	} {
		t.Run(tc.model, func(t *testing.T) {
			m, err := workload.ParseModel(tc.model)
			require.NoError(t, err)
			emb, state := sample.InitRelations(m, rels, d, 1)
			if !m.UsesRelations() {
				assert.Nil(t, emb)
				assert.Nil(t, state)
				return
			}
			w := m.RelWidth(d)
			require.Len(t, emb, rels*w)
			require.Len(t, state, rels*w)
			if m == workload.RotatE {
				assert.Equal(t, d/2, w)
				for _, v := range emb {
					assert.True(t, v >= -math.Pi && v < math.Pi, "phase %v", v)
				}
				again, _ := sample.InitRelations(m, rels, d, 1)
				assert.Equal(t, emb, again, "seeded")
				return
			}
			for r := 0; r < rels; r++ {
				assert.Equal(t, tc.row, emb[r*w:(r+1)*w], "relation %d", r)
			}
		})
	}
}

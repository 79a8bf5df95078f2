package pbgio_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/pbgio"
	"github.com/tierflow/tierflow/workload"
)

func TestNames(t *testing.T) {
	assert.Equal(t, "embeddings_node_3.v7.h5", pbgio.EmbeddingsFile("node", 3, 7))
	assert.Equal(t, "model.v7.h5", pbgio.ModelFile(7))
	assert.Equal(t, "entity_count_node_0.txt", pbgio.CountFile("node", 0))
	assert.Equal(t, "entity_names_node_0.json", pbgio.NamesFile("node", 0))
}

func TestOperator(t *testing.T) {
	for _, tc := range []struct {
		m    workload.Model
		want string
	}{{workload.Dot, "none"}, {workload.DistMult, "diagonal"}, {workload.ComplEx, "complex_diagonal"}} {
		got, err := pbgio.Operator(tc.m)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, tc.m)
	}
	_, err := pbgio.Operator("transe")
	assert.Error(t, err)
}

// pbgScore is PBG's score of an edge: the relation's rhs operator applied
// to the destination, then the dot comparator.
func pbgScore(m workload.Model, params map[string][]float32, rel string, s, d []float32) float32 {
	op := make([]float32, len(d))
	switch m {
	case workload.DistMult:
		for k := range d {
			op[k] = params[rel+"diagonal"][k] * d[k]
		}
	case workload.ComplEx:
		h := len(d) / 2
		re, im := params[rel+"real"], params[rel+"imag"]
		for k := 0; k < h; k++ {
			op[k] = d[k]*re[k] - d[h+k]*im[k]
			op[h+k] = d[k]*im[k] + d[h+k]*re[k]
		}
	}
	var sum float32
	for k := range s {
		sum += s[k] * op[k]
	}
	return sum
}

func TestRelationParams(t *testing.T) {
	const rels, d = 3, 6
	rel := make([]float32, rels*d)
	for i := range rel {
		rel[i] = float32(i%7) - 2.5
	}
	s := []float32{0.3, -1, 0.5, 2, 0.25, -0.75}
	dst := []float32{1, 0.5, -0.2, 0.1, -1.5, 0.4}
	for _, m := range []workload.Model{workload.DistMult, workload.ComplEx} {
		t.Run(string(m), func(t *testing.T) {
			params, err := pbgio.RelationParams(m, rel, rels, d)
			require.NoError(t, err)
			byName := map[string][]float32{}
			for _, p := range params {
				byName[p.Name] = p.Data
			}
			if m == workload.ComplEx {
				require.Len(t, params, 2*rels)
				assert.Equal(t, "relations/1/operator/rhs/real", params[2].Name)
				assert.Equal(t, "rhs_operators.1.imag", params[3].Key)
			} else {
				require.Len(t, params, rels)
				assert.Equal(t, "relations/2/operator/rhs/diagonal", params[2].Name)
				assert.Equal(t, "rhs_operators.2.diagonal", params[2].Key)
			}
			back, err := pbgio.Relations(m, byName, rels, d)
			require.NoError(t, err)
			assert.Equal(t, rel, back)
			// PBG scores every edge as we do.
			for r := 0; r < rels; r++ {
				want := model.Score(m, s, rel[r*d:(r+1)*d], dst)
				got := pbgScore(m, byName, fmt.Sprintf("relations/%d/operator/rhs/", r), s, dst)
				assert.InDelta(t, want, got, 1e-5, "relation %d", r)
			}
		})
	}
	params, err := pbgio.RelationParams(workload.Dot, nil, rels, d)
	require.NoError(t, err)
	assert.Empty(t, params)
	_, err = pbgio.Relations(workload.ComplEx, map[string][]float32{}, 1, d)
	assert.ErrorContains(t, err, "relations/0/operator/rhs/real")
}

func TestCheckOut(t *testing.T) {
	if !pbgio.HDF5 {
		assert.ErrorIs(t, pbgio.CheckOut(t.TempDir()), pbgio.ErrNoHDF5)
		return
	}
	dir := t.TempDir()
	assert.NoError(t, pbgio.CheckOut(filepath.Join(dir, "new")))
	assert.NoError(t, pbgio.CheckOut(dir)) // empty
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.txt"), nil, 0o644))
	assert.ErrorContains(t, pbgio.CheckOut(dir), "holds no PBG export")
	assert.ErrorContains(t, pbgio.CheckOut(filepath.Join(dir, "other.txt")), "not a directory")
}

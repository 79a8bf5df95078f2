//go:build hdf5

package pbgio_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/pbgio"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/workload"
)

// TestTypedExportRoundTrip: a two-type work directory (users in p
// partitions, items resident) exports in PBG's per-type layout —
// entity_count_/entity_names_/embeddings_ files for user partitions 0…p−1
// and item partition 0, the relation types with their lhs and rhs in
// config.json — and reading it back gives every node its embedding, by
// type and name.
func TestTypedExportRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		p    int
		kind workload.Model
	}{{1, workload.Dot}, {3, workload.DistMult}, {2, workload.ComplEx}} {
		t.Run(string(tc.kind), func(t *testing.T) {
			const d = 6
			st := fixture.Typed(t, filepath.Join(t.TempDir(), "w"), tc.p, d, tc.kind)
			rng := rand.New(rand.NewPCG(1, 1))
			emb := make([]float32, st.M.Nodes*d)
			for i := range emb {
				emb[i] = float32(rng.NormFloat64())
			}
			var rel []float32
			if tc.kind.UsesRelations() {
				rel, _ = sample.InitRelations(tc.kind, st.M.Relations, d, 2)
			}
			fixture.CommitEmbeddings(t, st, emb, rel)
			out := filepath.Join(t.TempDir(), "pbg")
			sum, err := pbgio.Export(out, st)
			require.NoError(t, err)
			assert.Equal(t, []pbgio.EntitySummary{{Name: "user", Partitions: tc.p, Nodes: fixture.TypedUsers}, {Name: "item", Partitions: 1, Nodes: fixture.TypedItems}}, sum.Entities)
			for _, f := range []string{pbgio.CountFile("item", 0), pbgio.NamesFile("item", 0), pbgio.EmbeddingsFile("item", 0, 1),
				pbgio.CountFile("user", tc.p-1), pbgio.EmbeddingsFile("user", tc.p-1, 1)} {
				assert.FileExists(t, filepath.Join(out, f))
			}
			_, err = os.Stat(filepath.Join(out, pbgio.EmbeddingsFile("item", 1, 1)))
			assert.True(t, os.IsNotExist(err), "an unpartitioned type is partition 0 of 1")

			_, err = pbgio.OpenCheckpoint(out)
			assert.ErrorContains(t, err, "2 entity types (item, user)")
			c, err := pbgio.OpenTyped(out)
			require.NoError(t, err)
			assert.Equal(t, []pbgio.EntitySummary{{Name: "item", Partitions: 1}, {Name: "user", Partitions: tc.p}}, c.Entities)
			assert.Equal(t, map[string]pbgio.EntityConfig{"user": {NumPartitions: tc.p}, "item": {NumPartitions: 1}}, c.Config.Entities)
			require.Len(t, c.Config.Relations, 2)
			assert.Equal(t, [3]string{"bought", "user", "item"}, [3]string{c.Config.Relations[0].Name, c.Config.Relations[0].LHS, c.Config.Relations[0].RHS})
			assert.Equal(t, [3]string{"follows", "user", "user"}, [3]string{c.Config.Relations[1].Name, c.Config.Relations[1].LHS, c.Config.Relations[1].RHS})

			names, types := fixture.TypedNames()
			byName := map[string]int{}
			for i, n := range names {
				byName[types[i]+"/"+n] = i
			}
			perm, err := st.Permutation()
			require.NoError(t, err)
			seen := 0
			for _, e := range c.Entities {
				for p := 0; p < e.Partitions; p++ {
					got, rows, err := c.EntityPartition(e.Name, p)
					require.NoError(t, err)
					data, err := os.ReadFile(filepath.Join(out, pbgio.CountFile(e.Name, p)))
					require.NoError(t, err)
					assert.Equal(t, len(got), atoi(t, strings.TrimSpace(string(data))))
					for r, n := range got {
						in, ok := byName[e.Name+"/"+n]
						require.True(t, ok, "%s %q", e.Name, n)
						v := int(perm[in])
						assert.Equal(t, emb[v*d:(v+1)*d], rows[r*d:(r+1)*d], "%s %s", e.Name, n)
						seen++
					}
				}
			}
			assert.Equal(t, int(st.M.Nodes), seen)
			back, err := c.Relations(tc.kind, st.M.Relations)
			require.NoError(t, err)
			assert.Equal(t, rel, back)
		})
	}
}

func atoi(t *testing.T, s string) int {
	var n int
	for _, c := range s {
		require.True(t, c >= '0' && c <= '9', s)
		n = 10*n + int(c-'0')
	}
	return n
}

// TestTypedExportReadBackWithH5py: PBG's loader (testdata/read_pbg.py,
// h5py) reads a two-type export — every entity type's partitions, the
// nodes by type and name — and scores edges of both relations as we do.
func TestTypedExportReadBackWithH5py(t *testing.T) {
	needH5py(t)
	const d = 6
	m := workload.DistMult
	st := fixture.Typed(t, filepath.Join(t.TempDir(), "w"), 3, d, m)
	rng := rand.New(rand.NewPCG(2, 2))
	emb := make([]float32, st.M.Nodes*d)
	for i := range emb {
		emb[i] = float32(rng.NormFloat64())
	}
	rel, _ := sample.InitRelations(m, st.M.Relations, d, 4)
	fixture.CommitEmbeddings(t, st, emb, rel)
	out := filepath.Join(t.TempDir(), "pbg")
	_, err := pbgio.Export(out, st)
	require.NoError(t, err)
	cmd := exec.Command(python, "testdata/read_pbg.py", out, "user/alice", "0", "item/i3", "user/u5", "1", "user/alice")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var got pbgRead
	require.NoError(t, json.Unmarshal(data, &got))
	names, types := fixture.TypedNames()
	perm, err := st.Permutation()
	require.NoError(t, err)
	require.Len(t, got.Entities, int(st.M.Nodes))
	row := map[string][]float32{}
	for in, n := range names {
		v := int(perm[in])
		row[types[in]+"/"+n] = emb[v*d : (v+1)*d]
		assert.Equal(t, row[types[in]+"/"+n], got.Entities[types[in]+"/"+n], "%s %s", types[in], n)
	}
	assert.InDelta(t, model.Score(m, row["user/alice"], rel[:d], row["item/i3"]), got.Scores[0], 1e-4)
	assert.InDelta(t, model.Score(m, row["user/u5"], rel[d:2*d], row["user/alice"]), got.Scores[1], 1e-4)
}

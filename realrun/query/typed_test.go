package query

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/workload"
)

// typedDir is the typed fixture (users in 2 partitions, items resident)
// trained to embeddings where user u5's best partner by dot product is a
// user, u7 (a vector of 5s), ahead of every item, and its best item is
// i3; user and item "alice" share a name.
func typedDir(t *testing.T, kind workload.Model) string {
	const d = 8
	dir := filepath.Join(t.TempDir(), "w")
	st := fixture.Typed(t, dir, 2, d, kind)
	perm, err := st.Permutation()
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 7))
	emb := make([]float32, st.M.Nodes*d)
	for i := range emb {
		emb[i] = float32(rng.NormFloat64()) * 0.1
	}
	set := func(in int, v float32) {
		row := emb[int(perm[in])*d : int(perm[in]+1)*d]
		for k := range row {
			row[k] = v
		}
	}
	set(5, 1)                    // u5
	set(7, 5)                    // u7: the nearest user, and would be the best "item"
	set(fixture.TypedUsers+3, 2) // i3
	var rel []float32
	if kind.UsesRelations() {
		rel = make([]float32, st.M.Relations*kind.RelWidth(d))
		for i := range rel {
			rel[i] = 1
		}
	}
	fixture.CommitEmbeddings(t, st, emb, rel)
	return dir
}

// TestTypedQueries: in a typed work directory (u5, bought, ?) ranks items
// only — the user u7 would win if it were a candidate —, (?, bought, i3)
// ranks users, a triple's rank counts the tails' type, nearest neighbours
// stay within the node's type, names are per type ("alice" is a user and
// an item: ambiguous alone, "user:alice" and a relation's side tell
// them apart), exactly and through the HNSW index.
func TestTypedQueries(t *testing.T) {
	dir := typedDir(t, workload.DistMult)
	for _, index := range []Index{Exact, HNSW} {
		o := Options{Workdir: dir, K: 3, Index: index, Memory: 1 << 30, Seed: 1}
		res, err := Predict(o, []Question{
			{Head: "u5", Relation: "bought", Tail: Unknown},
			{Head: Unknown, Relation: "bought", Tail: "i3"},
			{Head: "u5", Relation: "bought", Tail: "i3"},
			{Head: "u5", Relation: "follows", Tail: Unknown},
			{Head: "alice", Relation: "bought", Tail: Unknown},
		})
		require.NoError(t, err, index)
		a := res.Answers
		assert.Equal(t, "item", a[0].Type)
		require.Len(t, a[0].Hits, 3)
		assert.Equal(t, "i3", a[0].Hits[0].Node, "%s: the best item, the user u7 no candidate", index)
		for _, h := range a[0].Hits {
			assert.Regexp(t, `^(i\d+|alice)$`, h.Node)
		}
		assert.Equal(t, "user", a[1].Type)
		assert.Equal(t, "u7", a[1].Hits[0].Node)
		assert.Equal(t, "item", a[2].Type)
		assert.Equal(t, 1.0, a[2].Rank)
		assert.Equal(t, int64(fixture.TypedItems), a[2].Candidates)
		assert.Equal(t, "u7", a[3].Hits[0].Node, "follows ranks users")
		assert.Equal(t, "user", a[3].Type)
		assert.Equal(t, "item", a[4].Type, "alice the user")

		res, err = Neighbors(o, []string{"u5", "i3", "user:alice", "item:alice"}, Dot, "")
		require.NoError(t, err)
		for i, want := range []string{"user", "item", "user", "item"} {
			assert.Equal(t, want, res.Answers[i].Type)
		}
		assert.Equal(t, "u7", res.Answers[0].Hits[0].Node)
		for _, h := range res.Answers[1].Hits {
			assert.Regexp(t, `^(i\d+|alice)$`, h.Node, "an item's neighbours are items")
		}
		_, err = Neighbors(o, []string{"alice"}, Dot, "")
		assert.ErrorContains(t, err, `node "alice" is of several entity types (item, user): write item:alice`)
		_, err = Predict(o, []Question{{Head: "i3", Relation: "bought", Tail: Unknown}})
		assert.ErrorContains(t, err, `unknown user "i3"`)
	}
}

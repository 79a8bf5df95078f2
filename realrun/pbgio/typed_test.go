package pbgio

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/workload"
)

// TestTypedLayout: a typed work directory is laid out as PBG lays out its
// entity types — the partitioned users in the P partitions (partition p
// holding the users of store partition p, in store order), the resident
// items as partition 0 of 1 — and each entity partition's names come back
// in row order, names per type ("alice" the user and "alice" the item).
func TestTypedLayout(t *testing.T) {
	for _, p := range []int{1, 3} {
		st := fixture.Typed(t, filepath.Join(t.TempDir(), "w"), p, 4, workload.Dot)
		l, err := newLayout(st)
		require.NoError(t, err)
		assert.Equal(t, []EntitySummary{{"user", p, fixture.TypedUsers}, {"item", 1, fixture.TypedItems}}, l.entities())
		want := fmt.Sprintf("entities user (%d partitions, 24 nodes), item (1 partition, 12 nodes)", p)
		if p == 1 {
			want = "entities user (1 partition, 24 nodes), item (1 partition, 12 nodes)"
		}
		assert.Equal(t, want, Summary{Entities: l.entities()}.Layout())
		perm, err := st.Permutation()
		require.NoError(t, err)
		names, err := l.spillNames(t.TempDir(), st, perm)
		require.NoError(t, err)
		in, types := fixture.TypedNames()
		byName := map[[2]string]int{}
		for i, n := range in {
			byName[[2]string{types[i], n}] = i
		}
		seen := 0
		for k, sg := range l.segs {
			got, err := names(k)
			require.NoError(t, err)
			require.Len(t, got, int(sg.count))
			last := int32(-1)
			for r, n := range got {
				orig, ok := byName[[2]string{sg.entity, n}]
				require.True(t, ok, "%s %q", sg.entity, n)
				v := int64(perm[orig])
				gk, row := l.place(v)
				assert.Equal(t, k, gk)
				assert.Equal(t, int64(r), row)
				if sg.entity == "user" {
					assert.Equal(t, int64(sg.part), v/st.M.Rows, "user partition")
				} else {
					assert.True(t, st.M.IsResident(v))
				}
				assert.Greater(t, int32(v), last, "store order within a partition")
				last = int32(v)
				seen++
			}
		}
		assert.Equal(t, int(st.M.Nodes), seen)
		sides, err := RelationSides(st.M)
		require.NoError(t, err)
		assert.Equal(t, [][2]string{{"user", "item"}, {"user", "user"}}, sides)
		st.M.Model = "diagonal+dot"
		assert.ErrorContains(t, CheckDynamic(st.M), "relations 0 (user → item) and 1 (user → user) join different entity types")
	}
}

package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// TestGroupByClass: a typed bucket's edges are grouped by class in the
// order of the classes' (lhs, rhs) types, each class keeping its edges'
// shuffled order (stable), with the end of each class's range.
func TestGroupByClass(t *testing.T) {
	m := &store.Manifest{Types: []store.EntityType{{Name: "a", Partitioned: true}, {Name: "b"}, {Name: "c"}},
		Relations: 4, RelationTypes: [][2]int{{1, 0}, {0, 1}, {0, 0}, {0, 1}}}
	ti := newTypedInfo(m)
	require.Equal(t, [][2]int{{0, 0}, {0, 1}, {1, 0}}, ti.classes)
	require.Equal(t, []int{2, 1, 0, 1}, ti.classOf)
	rng := rand.New(rand.NewPCG(1, 1))
	edges := make([]store.Edge, 500)
	for i := range edges {
		edges[i] = store.Edge{Src: int32(i), Rel: int32(rng.IntN(4)), Dst: int32(rng.IntN(100))}
	}
	orig := append([]store.Edge(nil), edges...)
	ends := ti.groupByClass(edges)
	require.Len(t, ends, 3)
	require.Equal(t, len(edges), ends[2])
	start := 0
	for k, end := range ends {
		var want []store.Edge
		for _, e := range orig {
			if ti.classOf[e.Rel] == k {
				want = append(want, e)
			}
		}
		assert.Equal(t, want, edges[start:end], "class %d in its original order", k)
		start = end
	}
}

// TestTypedChunksStayInTheirClass: every chunk the engine trains on a
// typed bucket holds edges of one class, and its negatives are of the
// class's types in the tables DrawTyped names (checked through the rows
// of the node types: the fixture's users are partitioned, its items
// resident).
func TestTypedChunksStayInTheirClass(t *testing.T) {
	st := fixture.PrepareTyped(t, 200, 50, 6000, 2, 8, workload.DistMult)
	deg, err := st.Degrees()
	require.NoError(t, err)
	types, err := st.NodeTypes()
	require.NoError(t, err)
	h := fixture.Hyper(workload.DistMult, 8)
	h.Batch, h.Negatives, h.Workers = 300, 12, 1
	c, err := Open(h, st, deg, 1)
	require.NoError(t, err)
	for si := 0; si < st.M.P; si++ {
		for di := 0; di < st.M.P; di++ {
			edges, err := st.ReadBucket(si, di)
			require.NoError(t, err)
			if len(edges) == 0 {
				continue
			}
			sample.Shuffle(edges, rand.New(rand.NewPCG(2, 3)))
			ends := c.typed.groupByClass(edges)
			start := 0
			for class, end := range ends {
				a, b := c.typed.classes[class][0], c.typed.classes[class][1]
				for _, e := range edges[start:end] {
					lr := st.M.RelationTypes[e.Rel]
					require.Equal(t, [2]int{a, b}, lr)
					require.Equal(t, uint16(a), types[e.Src])
					require.Equal(t, uint16(b), types[e.Dst])
				}
				n := 12
				dr, sr := make([]int32, n), make([]int32, n)
				dt, stt := make([]sample.Table, n), make([]sample.Table, n)
				c.neg.DrawTyped(rand.New(rand.NewPCG(uint64(class), 4)), si, di, a, b, dr, dt, sr, stt)
				typeAt := func(tab sample.Table, row int32) uint16 {
					switch tab {
					case sample.SrcPart:
						return types[int64(si)*st.M.Rows+int64(row)]
					case sample.DstPart:
						return types[int64(di)*st.M.Rows+int64(row)]
					}
					return types[st.M.PartitionedNodes()+int64(row)]
				}
				for k := 0; k < n; k++ {
					assert.Equal(t, uint16(b), typeAt(dt[k], dr[k]), "destination-side negative")
					if !c.neg.Shared(a, b) {
						assert.Equal(t, uint16(a), typeAt(stt[k], sr[k]), "source-side negative")
					}
				}
				start = end
			}
		}
	}
}

// TestTypedRefusesMicroBatching: micro-batching does not take typed
// stores yet: Open refuses, New panics.
func TestTypedRefusesMicroBatching(t *testing.T) {
	st := fixture.PrepareTyped(t, 60, 20, 600, 2, 8, workload.DistMult)
	deg, err := st.Degrees()
	require.NoError(t, err)
	h := fixture.Hyper(workload.DistMult, 8)
	h.Micro.Count = 2
	_, err = Open(h, st, deg, 1)
	require.ErrorContains(t, err, "entity types")
	assert.Panics(t, func() { New(h, st, deg, 1) })
}

// TestTypedNeedsResidentTable: a typed store with resident types cannot
// train a bucket before the executor hands the engine its resident table.
func TestTypedNeedsResidentTable(t *testing.T) {
	st := fixture.PrepareTyped(t, 60, 20, 600, 2, 8, workload.DistMult)
	deg, err := st.Degrees()
	require.NoError(t, err)
	c, err := Open(fixture.Hyper(workload.DistMult, 8), st, deg, 1)
	require.NoError(t, err)
	buf, err := st.NewBuffer()
	require.NoError(t, err)
	defer buf.Free()
	edges, err := st.ReadBucket(0, 0)
	require.NoError(t, err)
	_, err = c.TrainBucket(edges, 0, buf, 0, buf, rand.New(rand.NewPCG(1, 1)))
	require.ErrorContains(t, err, "resident")
}

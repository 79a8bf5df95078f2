package micro

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/workload"
)

func sampleFB(t testing.TB, edges, chunk, negs int) Batch {
	t.Helper()
	p, err := graph.LookupPreset("freebase86m")
	require.NoError(t, err)
	p, err = p.Scaled(1.0 / 256) // 336k nodes: the rows of one partition pair at p = 512
	require.NoError(t, err)
	b, err := SampleBatch(p, 7, edges, chunk, negs, 0.5)
	require.NoError(t, err)
	return b
}

func TestSplitsArePartitions(t *testing.T) {
	b := sampleFB(t, 3000, 250, 100)
	ix := NewIndex(b, true)
	for _, m := range Methods {
		for _, k := range []int{1, 2, 5, 16} {
			parts, err := Split(b, ix, k, m, 3)
			require.NoError(t, err)
			require.Len(t, parts, k)
			seen := make([]bool, b.Edges())
			for _, es := range parts {
				assert.IsIncreasing(t, es)
				for _, i := range es {
					require.False(t, seen[i], "%s k=%d: edge %d twice", m, k, i)
					seen[i] = true
				}
				assert.LessOrEqual(t, len(es), int(float64((b.Edges()+k-1)/k)*(1+Slack)), "%s k=%d balance", m, k)
			}
			assert.NotContains(t, seen, false, "%s k=%d: an edge is missing", m, k)
		}
	}
	_, err := Split(b, ix, 2, "metis", 0)
	assert.Error(t, err)
	_, err = ParseMethod("metis")
	assert.Error(t, err)
}

// TestREGDuplicatesFewest: on a power-law batch (Freebase86m-shaped,
// 20,000 edges, chunks of 1,000 sharing 1,000 negatives, half by degree)
// REG gathers fewer duplicated rows than range and random at 2, 4, 8 and
// 16 micro-batches.
func TestREGDuplicatesFewest(t *testing.T) {
	if testing.Short() {
		t.Skip("draws a 20,000-edge batch")
	}
	b := sampleFB(t, 20_000, 1_000, 1_000)
	ix := NewIndex(b, true)
	for _, k := range []int{2, 4, 8, 16} {
		dup := map[Method]int64{}
		for _, m := range Methods {
			parts, err := Split(b, ix, k, m, 1)
			require.NoError(t, err)
			st := ix.Measure(b, parts, workload.ComplEx, 100, 1)
			dup[m] = st.DuplicatedRows
		}
		t.Logf("k=%d duplicated rows: %v", k, dup)
		assert.Less(t, dup[REG], dup[Range], "k=%d", k)
		assert.Less(t, dup[REG], dup[Random], "k=%d", k)
	}
}

func TestShapeCountsDistinctRows(t *testing.T) {
	b := Batch{
		Src: []int64{1, 1, 2}, Dst: []int64{2, 3, 4}, Rel: []int32{0, 0, 1}, Chunk: []int32{0, 0, 1},
		Neg: [][]int64{{5, 6}, {1, 7}},
	}
	ix := NewIndex(b, true)
	s := ix.Shape(b, []int32{0, 1, 2}, workload.DistMult, 8, 1)
	assert.Equal(t, workload.BatchShape{Model: workload.DistMult, Dim: 8, Edges: 3, Chunks: 2, ChunkEdges: 2, Negatives: 2, Rows: 7, Relations: 2, Concurrent: 1}, s)
	st := ix.Measure(b, [][]int32{{0}, {1, 2}}, workload.DistMult, 8, 1)
	// {1,2,5,6} and {1,3,5,6,2,4,7}: 11 gathered, 7 distinct.
	assert.Equal(t, int64(11), st.GatheredRows)
	assert.Equal(t, int64(4), st.DuplicatedRows)
}

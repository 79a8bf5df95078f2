package sim_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

// diagonalGraph is a graph of n nodes and 60 training edges, all on the
// diagonal buckets (edge e in bucket (e mod p, e mod p)); it counts its
// calls of Count.
func diagonalGraph(n int64, calls *int) *sim.Graph {
	return &sim.Graph{Name: "diag", Nodes: n, Relations: 3, Model: workload.DistMult, Dim: 8,
		TrainEdges: 60,
		Count: func(ps []int) ([]sim.Histogram, error) {
			*calls++
			out := make([]sim.Histogram, len(ps))
			for k, p := range ps {
				h := sim.Histogram{P: p, Edges: make([][]int64, p)}
				for i := range h.Edges {
					h.Edges[i] = make([]int64, p)
				}
				for e := 0; e < 60; e++ {
					h.Edges[e%p][e%p]++
				}
				out[k] = h
			}
			return out, nil
		}}
}

func TestGraphReplacesDataset(t *testing.T) {
	var calls int
	g := diagonalGraph(1000, &calls)
	for _, p := range []int{2, 3, 4, 6} {
		t.Run(fmt.Sprint("p=", p), func(t *testing.T) {
			out, err := sim.Request{System: "marius", Device: "p3.2xlarge", Dataset: "freebase86m", P: p, C: 2, Orderings: "beta", Graph: g}.Predict()
			require.NoError(t, err)
			assert.Equal(t, "diag", out.Dataset)
			assert.EqualValues(t, 1000, out.Nodes)
			assert.EqualValues(t, 60, out.TrainEdges)
			assert.Equal(t, 8, out.Dim, "the graph's dimension when none is asked")
			assert.Equal(t, workload.DistMult, out.Training.Model, "the graph's model when none is asked")
			assert.Equal(t, (1000+int64(p)-1)/int64(p)*8*4*2, out.PartitionBytes, "ceil(N/p)·d·4 B·2")
			assert.Same(t, g, out.Graph)
			assert.Equal(t, "graph", out.Edges)
		})
	}
	// The scenario's Config takes the bucket counts from the graph.
	sc, _, err := sim.Request{System: "marius", Device: "p3.2xlarge", P: 3, C: 2, Orderings: "beta", Graph: g}.Assemble()
	require.NoError(t, err)
	sc.Ordering = "beta"
	cfg, err := sc.Config()
	require.NoError(t, err)
	assert.Equal(t, []int64{20, 0, 0, 0, 20, 0, 0, 0, 20}, cfg.BucketEdges)
	assert.Equal(t, g.Dataset(), cfg.Dataset)
	assert.Equal(t, 4, calls, "one count per new p, none for a p already counted")
}

func TestGraphPrepareCountsOnce(t *testing.T) {
	var calls int
	g := diagonalGraph(1000, &calls)
	require.NoError(t, g.Prepare([]int{2, 4, 8, 4}))
	require.NoError(t, g.Prepare([]int{8, 2}))
	h, err := g.Histogram(4)
	require.NoError(t, err)
	assert.Equal(t, 4, h.P)
	assert.Equal(t, 1, calls)
	assert.ErrorContains(t, g.Prepare([]int{2000}), "more partitions than the 1000 nodes")
	g.TrainEdges = 61
	assert.ErrorContains(t, g.Prepare([]int{5}), "60 edges in its buckets at p = 5, 61 training edges")
}

func TestGraphRequestErrors(t *testing.T) {
	var calls int
	g := diagonalGraph(1000, &calls)
	for _, tt := range []struct {
		q    sim.Request
		want string
	}{
		{sim.Request{System: "marius", Device: "p3.2xlarge", P: 4, C: 2, Orderings: "beta", Graph: g, Edges: "skewed"}, "{Graph} and {Edges} skewed"},
		{sim.Request{System: "marius", Device: "p3.2xlarge", P: 4, C: 2, Orderings: "beta", Graph: &sim.Graph{Name: "empty"}}, "{Graph}: graph empty: 0 nodes"},
	} {
		_, err := tt.q.Predict()
		assert.ErrorContains(t, err, tt.want)
	}
}

func TestHistogramGraph(t *testing.T) {
	h := sim.Histogram{P: 2, Edges: [][]int64{{1, 2}, {3, 4}}, Nodes: 50, Relations: 2, Source: "x.tsv"}
	g := sim.HistogramGraph(h, "h.json")
	require.NotNil(t, g)
	assert.EqualValues(t, 10, g.TrainEdges)
	assert.Equal(t, 2, g.P)
	_, err := g.Histogram(4)
	var hp *sim.HistogramPError
	require.ErrorAs(t, err, &hp)
	assert.Equal(t, "{Edges} h.json: histogram has p = 2 but {P} is 4: give {P} 2, or {Graph} WORKDIR for any p", err.Error())
	h.Nodes = 0
	assert.Nil(t, sim.HistogramGraph(h, "old.json"), "an old histogram has no sizes")
}

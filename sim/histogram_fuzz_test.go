package sim_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/sim"
)

// FuzzReadHistogram: any input is read or refused without a panic; a
// histogram read has p rows of p counts, and one with the graph's sizes
// describes a graph of its edges, known at its p only.
func FuzzReadHistogram(f *testing.F) {
	f.Add(`{"p": 2, "edges": [[1, 2], [3, 4]]}`)
	f.Add(`{"p": 2, "edges": [[1, 2], [3, 4]], "nodes": 9, "relations": 2, "source": "x.tsv"}`)
	f.Add(`{"p": 3, "edges": [[1, 2], [3, 4]], "nodes": 2}`)
	f.Add(`{"p": 1, "edges": [[-1]]}`)
	f.Fuzz(func(t *testing.T, in string) {
		h, err := sim.ReadHistogram(strings.NewReader(in))
		if err != nil {
			return
		}
		require.Len(t, h.Edges, h.P)
		g := sim.HistogramGraph(h, "h.json")
		if h.Nodes == 0 {
			require.Nil(t, g)
			return
		}
		got, err := g.Histogram(h.P)
		require.NoError(t, err)
		require.Equal(t, h.Edges, got.Edges)
	})
}

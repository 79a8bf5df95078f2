package workload

import (
	"encoding/json"
	"fmt"
	"io"
)

// Histogram is the per-bucket edge count of a real partitioned graph, as
// a work directory records it (histogram.json) and the simulator reads
// it (simulate --edges, --graph): {"p": P, "edges": [[e00, e01, …], …]} with
// edges[src][dst].
type Histogram struct {
	P     int       `json:"p"`
	Edges [][]int64 `json:"edges"`
	// Nodes, Relations and Source are the graph's own sizes and where
	// its edges came from (histograms written before them have none: 0
	// and ""); with them the file describes the graph (sim.HistogramGraph).
	Nodes     int64  `json:"nodes,omitempty"`
	Relations int    `json:"relations,omitempty"`
	Source    string `json:"source,omitempty"`
	// ResidentNodes are a typed graph's nodes of unpartitioned entity
	// types, in Nodes (the store's histogram.json records them).
	ResidentNodes int64 `json:"resident_nodes,omitempty"`
}

// ReadHistogram parses and checks a histogram file.
func ReadHistogram(r io.Reader) (Histogram, error) {
	var h Histogram
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return Histogram{}, fmt.Errorf("histogram: %w", err)
	}
	if h.P < 1 {
		return Histogram{}, fmt.Errorf("histogram: p must be positive, got %d", h.P)
	}
	if h.Nodes < 0 || h.Relations < 0 {
		return Histogram{}, fmt.Errorf("histogram: %d nodes, %d relations: must not be negative", h.Nodes, h.Relations)
	}
	if h.ResidentNodes < 0 || h.ResidentNodes > h.Nodes {
		return Histogram{}, fmt.Errorf("histogram: %d resident nodes of %d", h.ResidentNodes, h.Nodes)
	}
	if h.Nodes > 0 && int64(h.P) > h.Nodes {
		return Histogram{}, fmt.Errorf("histogram: p = %d partitions for %d nodes", h.P, h.Nodes)
	}
	if len(h.Edges) != h.P {
		return Histogram{}, fmt.Errorf("histogram: %d rows, want p = %d", len(h.Edges), h.P)
	}
	for i, row := range h.Edges {
		if len(row) != h.P {
			return Histogram{}, fmt.Errorf("histogram: row %d has %d counts, want p = %d", i, len(row), h.P)
		}
		for j, x := range row {
			if x < 0 {
				return Histogram{}, fmt.Errorf("histogram: bucket (%d,%d) has a negative count %d", i, j, x)
			}
		}
	}
	return h, nil
}

// Flat returns the counts row-major and their total.
func (h Histogram) Flat() ([]int64, int64) {
	out := make([]int64, 0, h.P*h.P)
	var total int64
	for _, row := range h.Edges {
		for _, x := range row {
			out = append(out, x)
			total += x
		}
	}
	return out, total
}

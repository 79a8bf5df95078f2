package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
)

// GB converts bytes to decimal gigabytes (10^9 bytes), the unit tierflow
// prints.
func GB(bytes int64) float64 { return float64(bytes) / 1e9 }

// Distribution names how a dataset's edges spread over the p² buckets.
type Distribution string

// The bucket-size distributions.
const (
	// Uniform: every bucket holds |E|/p² edges, as when nodes are assigned
	// to partitions at random (PBG and Marius partition uniformly).
	Uniform Distribution = "uniform"
	// Skewed: partition i carries weight (i+1)^-α and bucket (i,j) a share
	// proportional to w_i·w_j — nodes numbered by decreasing degree and
	// partitioned into contiguous ranges, with degrees following a power
	// law (α = 0.5 by default).
	Skewed Distribution = "skewed"
)

// DefaultSkew is the exponent α of the skewed distribution.
const DefaultSkew = 0.5

// BucketEdges spreads total edges over the p×p buckets (row-major: index
// src·p+dst) so that they sum exactly to total (largest remainders).
func BucketEdges(total int64, p int, dist Distribution, alpha float64) ([]int64, error) {
	if p < 1 {
		return nil, fmt.Errorf("p must be positive, got %d", p)
	}
	if total < 0 {
		return nil, fmt.Errorf("negative edge count %d", total)
	}
	w := make([]float64, p)
	switch dist {
	case Uniform, "":
		for i := range w {
			w[i] = 1
		}
	case Skewed:
		if alpha < 0 || math.IsNaN(alpha) || math.IsInf(alpha, 0) {
			return nil, fmt.Errorf("skew exponent must be a non-negative number, got %v", alpha)
		}
		for i := range w {
			w[i] = math.Pow(float64(i+1), -alpha)
		}
	default:
		return nil, fmt.Errorf("unknown distribution %q (want uniform or skewed, or a histogram file)", dist)
	}
	var sum float64
	for _, x := range w {
		sum += x
	}
	n := p * p
	out := make([]int64, n)
	rem := make([]float64, n)
	var given int64
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			exact := float64(total) * w[i] * w[j] / (sum * sum)
			out[i*p+j] = int64(math.Floor(exact))
			rem[i*p+j] = exact - math.Floor(exact)
			given += out[i*p+j]
		}
	}
	// Hand the rounding remainder out by largest remainder, ties to the
	// lowest index, so the result is deterministic.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rem[idx[a]] > rem[idx[b]] })
	for k := int64(0); k < total-given; k++ {
		out[idx[k]]++
	}
	return out, nil
}

// Histogram is the per-bucket edge count of a real partitioned graph, as
// the real engine writes it: {"p": P, "edges": [[e00, e01, …], …]} with
// edges[src][dst].
type Histogram struct {
	P     int       `json:"p"`
	Edges [][]int64 `json:"edges"`
	// Nodes, Relations and Source are the graph's own sizes and where
	// its edges came from (histograms written before them have none: 0
	// and ""); with them the file describes the graph (HistogramGraph).
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

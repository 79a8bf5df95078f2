package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// Dataset is the shape of a graph as the papers report it.
type Dataset struct {
	Name      string `json:"name"`
	Nodes     int64  `json:"nodes"`
	Edges     int64  `json:"edges"`
	Relations int    `json:"relations"`
	// TrainFraction is the share of edges in the training split.
	TrainFraction float64 `json:"train_fraction"`
	// Model is the score function the papers train on it.
	Model Model `json:"model"`
	// Source says where the numbers come from.
	Source string `json:"source"`
}

// Datasets are the presets, with the sizes of Marius Table 1 (rounded as
// the paper prints them) and, for full Freebase, PyTorch-BigGraph §5.4.2.
// Splits: FB15k 80/10/10, all others 90/5/5 (Marius §5.1, PBG §5.4.2).
var Datasets = []Dataset{
	{Name: "fb15k", Nodes: 15_000, Edges: 592_000, Relations: 1_300, TrainFraction: 0.8, Model: ComplEx, Source: "Marius Table 1: 592k edges, 15k nodes, 1.3k relations"},
	{Name: "livejournal", Nodes: 4_800_000, Edges: 68_000_000, Relations: 1, TrainFraction: 0.9, Model: Dot, Source: "Marius Table 1: 68M edges, 4.8M nodes"},
	{Name: "twitter", Nodes: 41_600_000, Edges: 1_460_000_000, Relations: 1, TrainFraction: 0.9, Model: Dot, Source: "Marius Table 1: 1.46B edges, 41.6M nodes"},
	{Name: "freebase86m", Nodes: 86_100_000, Edges: 338_000_000, Relations: 14_800, TrainFraction: 0.9, Model: ComplEx, Source: "Marius Table 1: 338M edges, 86.1M nodes, 14.8K relations"},
	{Name: "freebase", Nodes: 121_216_723, Edges: 2_725_070_599, Relations: 25_291, TrainFraction: 0.9, Model: ComplEx, Source: "PyTorch-BigGraph §5.4.2: 121,216,723 nodes, 25,291 relations, 2,725,070,599 edges"},
}

// TrainEdges is the number of edges one epoch trains on.
func (d Dataset) TrainEdges() int64 { return int64(math.Round(float64(d.Edges) * d.TrainFraction)) }

// DatasetNames lists the preset names in display order.
func DatasetNames() []string {
	names := make([]string, len(Datasets))
	for i, d := range Datasets {
		names[i] = d.Name
	}
	return names
}

// LookupDataset returns the preset with the given name.
func LookupDataset(name string) (Dataset, error) {
	for _, d := range Datasets {
		if d.Name == name {
			return d, nil
		}
	}
	return Dataset{}, fmt.Errorf("unknown dataset %q (want one of %s)", name, strings.Join(DatasetNames(), ", "))
}

// BytesPerFloat is the size of one float32 parameter.
const BytesPerFloat = 4

// PartitionBytes is the on-disk size of one of p node partitions of a graph
// with the given number of nodes and embedding dimension d: ceil(nodes/p)
// rows of d float32 parameters plus the same again of Adagrad state, stored
// contiguously as Legend does.
func PartitionBytes(nodes int64, p, d int) int64 {
	if p <= 0 || d <= 0 || nodes <= 0 {
		return 0
	}
	rows := (nodes + int64(p) - 1) / int64(p)
	return rows * int64(d) * BytesPerFloat * 2
}

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

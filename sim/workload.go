// Package sim is tierflow's model of an out-of-core training epoch; so far
// it holds the workload side: dataset presets with the papers' sizes and
// the on-disk size of a node partition.
package sim

import (
	"fmt"
	"strings"
)

// Dataset is the shape of a graph as the papers report it.
type Dataset struct {
	Name      string `json:"name"`
	Nodes     int64  `json:"nodes"`
	Edges     int64  `json:"edges"`
	Relations int    `json:"relations"`
	// Source says where the numbers come from.
	Source string `json:"source"`
}

// Datasets are the presets, with the sizes of Marius Table 1 (rounded as
// the paper prints them).
var Datasets = []Dataset{
	{Name: "fb15k", Nodes: 15_000, Edges: 592_000, Relations: 1_300, Source: "Marius Table 1: 592k edges, 15k nodes, 1.3k relations"},
	{Name: "livejournal", Nodes: 4_800_000, Edges: 68_000_000, Relations: 1, Source: "Marius Table 1: 68M edges, 4.8M nodes"},
	{Name: "twitter", Nodes: 41_600_000, Edges: 1_460_000_000, Relations: 1, Source: "Marius Table 1: 1.46B edges, 41.6M nodes"},
	{Name: "freebase86m", Nodes: 86_100_000, Edges: 338_000_000, Relations: 14_800, Source: "Marius Table 1: 338M edges, 86.1M nodes, 14.8K relations"},
}

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

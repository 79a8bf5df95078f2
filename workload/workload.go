// Package workload is the vocabulary the simulator and every engine share
// for what is trained, each rule written once: the score functions
// (operators and comparators) and the objective, the dataset table, the
// training shape with its chunk rule, each model's cost rule and a chunk's
// and a batch's cost, partition sizes, the CPU engine's work unit, the
// Adagrad ε, the checkpoint interval, a batch's peak device memory
// (EstimateBatch) and the fewest micro-batches that fit.
package workload

import (
	"fmt"
	"math"
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
	// ResidentNodes are the nodes of a typed graph's unpartitioned entity
	// types (Schema): held in memory for the whole run beside the buffer's
	// partitions, read once at the start and written at the end; the
	// partitions hold the other PartitionedNodes.
	ResidentNodes int64 `json:"resident_nodes,omitempty"`
}

// PartitionedNodes are the nodes split into the p partitions: every node
// but the resident types' ones.
func (d Dataset) PartitionedNodes() int64 { return d.Nodes - d.ResidentNodes }

// CheckResident reports whether ResidentNodes fits the dataset: not
// negative, and no more than its Nodes less one row for each of p
// partitions (p = 1 with every node resident is a graph of unpartitioned
// types only: its one partition is empty). The error names the field.
func (d Dataset) CheckResident(p int) error {
	switch {
	case d.ResidentNodes < 0:
		return fmt.Errorf("resident_nodes %d: must not be negative", d.ResidentNodes)
	case d.ResidentNodes > d.Nodes:
		return fmt.Errorf("resident_nodes %d: more than the %d nodes of %s", d.ResidentNodes, d.Nodes, d.Name)
	case d.ResidentNodes > 0 && p > 1 && d.PartitionedNodes() < int64(p):
		return fmt.Errorf("resident_nodes %d: leaves %d partitioned nodes of %s for p = %d partitions", d.ResidentNodes, d.PartitionedNodes(), d.Name, p)
	}
	return nil
}

// Datasets are the presets: the one table of dataset sizes the simulator
// and the real engine's generators share. Sizes are Marius Table 1's
// (rounded as the paper prints them) except FB15k, whose exact counts from
// the standard release are used (Table 1 rounds them to 15k/592k/1.3k),
// and full Freebase, from PyTorch-BigGraph §5.4.2. Splits: FB15k 80/10/10,
// all others 90/5/5 (Marius §5.1, PBG §5.4.2). Models follow the papers'
// evaluations: Dot on the social graphs, ComplEx on the knowledge graphs.
var Datasets = []Dataset{
	{Name: "fb15k", Nodes: 14_951, Edges: 592_213, Relations: 1_345, TrainFraction: 0.8, Model: ComplEx, Source: "the standard FB15k release: 14,951 entities, 592,213 triples, 1,345 relations (Marius Table 1 rounds: 15k, 592k, 1.3k)"},
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

// LookupDataset returns the preset with the given name (case-insensitive).
func LookupDataset(name string) (Dataset, error) {
	for _, d := range Datasets {
		if strings.EqualFold(d.Name, name) {
			return d, nil
		}
	}
	return Dataset{}, fmt.Errorf("unknown dataset %q (want one of %s)", name, strings.Join(DatasetNames(), ", "))
}

package sim

import (
	"fmt"
	"slices"
	"sync"

	"github.com/tierflow/tierflow/workload"
)

// DefaultP is the number of partitions simulated when none is given and
// the graph (or histogram) has no partition count of its own.
const DefaultP = 32

// HistogramPError is a histogram file's buckets, counted at one p, asked
// for at another.
type HistogramPError struct {
	File     string
	HistP, P int
}

func (e *HistogramPError) Error() string {
	return fmt.Sprintf("{Edges} %s: histogram has p = %d but {P} is %d: give {P} %d, or {Graph} WORKDIR for any p", e.File, e.HistP, e.P, e.HistP)
}

// Graph is a user's own graph — a real engine's work directory, or a
// histogram file that carries the graph's sizes: it replaces the dataset
// preset wholesale. Partitions hold ceil(Nodes/p) rows, the edges are
// TrainEdges, the relations Relations, and the training edges per bucket
// at any p come from Count. Use it by pointer: it caches the counts.
type Graph struct {
	// Name says which graph it is (the work directory); Source is where
	// its edges came from (the input file or generated preset).
	Name      string `json:"name"`
	Source    string `json:"source,omitempty"`
	Nodes     int64  `json:"nodes"`
	Relations int    `json:"relations"`
	// ResidentNodes are the nodes of its unpartitioned entity types
	// (workload.Dataset.ResidentNodes), of the types ResidentTypes; the
	// partitions hold the others.
	ResidentNodes int64    `json:"resident_nodes,omitempty"`
	ResidentTypes []string `json:"resident_types,omitempty"`
	TrainEdges    int64    `json:"train_edges"`
	// Model and Dim are what the graph was trained with ("" and 0:
	// unknown); a request's own model and dimension override them.
	Model workload.Model `json:"model,omitempty"`
	Dim   int            `json:"dim,omitempty"`
	// P, when set, is the one partition count its buckets are known at
	// (a histogram file); a request without p simulates at it. 0: any p.
	P int `json:"only_p,omitempty"`
	// Count returns the training edges per bucket at each of ps, in one
	// pass over the edges.
	Count func(ps []int) ([]Histogram, error) `json:"-"`

	mu    sync.Mutex
	cache map[int]Histogram
}

// Dataset is the graph as the simulator's dataset: every field its own,
// all its edges training edges.
func (g *Graph) Dataset() workload.Dataset {
	src := "the graph " + g.Name
	if g.Source != "" {
		src += ", built from " + g.Source
	}
	return workload.Dataset{Name: g.Name, Nodes: g.Nodes, Edges: g.TrainEdges, Relations: max(g.Relations, 1),
		TrainFraction: 1, Model: g.Model, Source: src, ResidentNodes: g.ResidentNodes}
}

// Check reports whether the graph's sizes are usable.
func (g *Graph) Check() error {
	switch {
	case g.Nodes < 1:
		return fmt.Errorf("graph %s: %d nodes", g.Name, g.Nodes)
	case g.ResidentNodes < 0 || g.ResidentNodes > g.Nodes:
		return fmt.Errorf("graph %s: %d resident nodes of %d", g.Name, g.ResidentNodes, g.Nodes)
	case g.TrainEdges < 0:
		return fmt.Errorf("graph %s: %d training edges", g.Name, g.TrainEdges)
	case g.Count == nil:
		return fmt.Errorf("graph %s: no way to count its buckets", g.Name)
	}
	return nil
}

// Prepare counts the buckets at every p of ps not counted yet, in one
// call of Count (one pass over the edges), and keeps them.
func (g *Graph) Prepare(ps []int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var todo []int
	for _, p := range ps {
		if _, ok := g.cache[p]; !ok && !slices.Contains(todo, p) {
			if p < 1 {
				return fmt.Errorf("p = %d: at least 1 partition", p)
			}
			if int64(p) > g.Nodes {
				return fmt.Errorf("p = %d: more partitions than the %d nodes of %s", p, g.Nodes, g.Name)
			}
			if part := g.Nodes - g.ResidentNodes; g.ResidentNodes > 0 && p > 1 && int64(p) > part {
				return fmt.Errorf("p = %d: more partitions than the %d partitioned nodes of %s (%d more are resident)", p, part, g.Name, g.ResidentNodes)
			}
			todo = append(todo, p)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	hs, err := g.Count(todo)
	if err != nil {
		return err
	}
	if len(hs) != len(todo) {
		return fmt.Errorf("graph %s: %d histograms for %d partition counts", g.Name, len(hs), len(todo))
	}
	if g.cache == nil {
		g.cache = map[int]Histogram{}
	}
	for k, h := range hs {
		p := todo[k]
		if h.P != p || len(h.Edges) != p {
			return fmt.Errorf("graph %s: counted at p = %d, asked for p = %d", g.Name, h.P, p)
		}
		if _, total := h.Flat(); total != g.TrainEdges {
			return fmt.Errorf("graph %s: %d edges in its buckets at p = %d, %d training edges", g.Name, total, p, g.TrainEdges)
		}
		g.cache[p] = h
	}
	return nil
}

// Histogram returns the training edges per bucket at p.
func (g *Graph) Histogram(p int) (Histogram, error) {
	if err := g.Prepare([]int{p}); err != nil {
		return Histogram{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cache[p], nil
}

// HistogramGraph is the graph a histogram file describes, when it carries
// the graph's sizes (Histogram.Nodes > 0; nil otherwise): its buckets are
// known at the histogram's p only. name names the file.
func HistogramGraph(h Histogram, name string) *Graph {
	if h.Nodes < 1 {
		return nil
	}
	_, total := h.Flat()
	g := &Graph{Name: name, Source: h.Source, Nodes: h.Nodes, Relations: h.Relations, TrainEdges: total, P: h.P, ResidentNodes: h.ResidentNodes}
	g.Count = func(ps []int) ([]Histogram, error) {
		out := make([]Histogram, len(ps))
		for k, p := range ps {
			if p != h.P {
				return nil, &HistogramPError{File: name, HistP: h.P, P: p}
			}
			out[k] = h
		}
		return out, nil
	}
	return g
}

package main

import (
	"flag"
	"path/filepath"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

// addGraphFlag registers --graph, which simulate and simulate sweep share.
func addGraphFlag(fs *flag.FlagSet, dir *string) {
	fs.StringVar(dir, "graph", "", "simulate your own graph, the realrun work directory `DIR`: its nodes, relations, training edges and bucket sizes at any p (instead of --dataset and --edges; --dim and --model default to the directory's)")
}

// useGraph reads the flags that depend on --graph and an --edges
// histogram into q: with --graph, the work directory's graph replaces the
// dataset preset (a conflict with --dataset, --edges or --skew is a usage
// error), and --dim and --model not given become the graph's own;
// without it, --p not given becomes the histogram's p when --edges names
// one (sim.Request resolves P 0).
func useGraph(q *sim.Request, dir string, set map[string]bool) error {
	if !set["p"] {
		q.P = 0
	}
	if !set["graph"] {
		return nil
	}
	for _, f := range []string{"dataset", "edges", "skew"} {
		if set[f] {
			return cli.Usagef("--graph and --%s: the graph's own sizes and buckets replace the dataset preset's; give one or the other", f)
		}
	}
	if dir == "" {
		return cli.Usagef("--graph: give a realrun work directory")
	}
	g, err := openGraph(dir)
	if err != nil {
		return cli.Usagef("--graph: %w", err)
	}
	q.Graph, q.Dataset, q.Edges = g, "", ""
	if !set["dim"] {
		q.Dim = 0
	}
	return nil
}

// openGraph describes a realrun work directory as a graph for the
// simulator: its sizes from the manifest, its buckets at any p counted
// from the stored edges (store.BucketCounts).
func openGraph(dir string) (*sim.Graph, error) {
	st, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	m := st.M
	g := &sim.Graph{Name: filepath.Clean(dir), Source: m.Source, Nodes: m.Nodes, Relations: m.Relations,
		TrainEdges: m.Train, Dim: m.Dim}
	if model, err := workload.ParseModel(m.Model); err == nil {
		g.Model = model
	}
	g.Count = func(ps []int) ([]sim.Histogram, error) {
		counts, err := st.BucketCounts(ps)
		if err != nil {
			return nil, err
		}
		out := make([]sim.Histogram, len(ps))
		for k, p := range ps {
			out[k] = sim.Histogram{P: p, Edges: counts[k], Nodes: m.Nodes, Relations: m.Relations, Source: m.Source}
		}
		return out, nil
	}
	return g, nil
}

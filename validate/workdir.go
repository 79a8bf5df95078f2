package validate

import (
	"path/filepath"

	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

// Trained is what a work directory's training was started with
// (workdir.Trained): simulate --graph simulates it as it was trained.
type Trained = workdir.Trained

// SettingsFile is the work directory's training record (workdir.SettingsFile).
const SettingsFile = workdir.SettingsFile

// WorkdirGraph describes a realrun work directory as a graph for the
// simulator — its sizes from the manifest, its buckets at any p counted
// from the stored edges (store.BucketCounts) — and says what its
// training was started with (workdir.ReadTrained).
func WorkdirGraph(dir string) (*sim.Graph, Trained, error) {
	st, err := store.Open(dir)
	if err != nil {
		return nil, Trained{}, err
	}
	tr, err := workdir.ReadTrained(st)
	if err != nil {
		return nil, Trained{}, err
	}
	m := st.M
	g := &sim.Graph{Name: filepath.Clean(dir), Source: m.Source, Nodes: m.Nodes, Relations: m.Relations,
		TrainEdges: m.Train, Dim: m.Dim, ResidentNodes: m.Resident}
	for _, t := range m.Types {
		if !t.Partitioned {
			g.ResidentTypes = append(g.ResidentTypes, t.Name)
		}
	}
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
			out[k] = sim.Histogram{P: p, Edges: counts[k], Nodes: m.Nodes, Relations: m.Relations, Source: m.Source, ResidentNodes: m.Resident}
		}
		return out, nil
	}
	return g, tr, nil
}

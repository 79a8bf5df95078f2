package workdir

import (
	"math"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// Layout is the manifest's layout of the graph spec names — nodes, p,
// rows per partition, dimension and partition bytes — without preparing
// the work directory: a preset's sizes at its scale, or, for an edge
// file, the node count of the work directory that already holds it (an
// edge file's nodes are known only once it is read). Train is the work
// directory's for an edge file and a preset's expected training edges
// (its edges less the HeldOut shares); the Buckets are not filled in.
func Layout(spec DataSpec) (store.Manifest, error) {
	var nodes, train int64
	if spec.Edges == "" {
		pr, err := graph.LookupPreset(spec.Dataset)
		if err != nil {
			return store.Manifest{}, &inputerr.Error{Err: err}
		}
		sc, err := pr.Scaled(spec.Scale)
		if err != nil {
			return store.Manifest{}, inputerr.Errorf("{Scale}: %w", err)
		}
		nodes = sc.Nodes
		train = int64(math.Round(float64(sc.Edges) * (1 - 2*HeldOut)))
	} else {
		st, err := store.Open(spec.Workdir)
		if err != nil {
			return store.Manifest{}, inputerr.Errorf("{Edges} %s: the node count is known once the file is read: train on it once (realrun {Edges} %s {Epochs} 1 {Eval} none), or give that run's {Workdir} (%s: %v)", spec.Edges, spec.Edges, spec.Workdir, err)
		}
		nodes, train = st.M.Nodes, st.M.Train
		if st.M.Typed() && st.M.P == spec.P {
			// A typed directory's rows are its partitioned nodes'.
			m := st.M
			return store.Manifest{Nodes: nodes, Train: train, P: m.P, Dim: spec.Dim, Model: spec.Model, Rows: m.Rows, Types: m.Types, Resident: m.Resident, RelationTypes: m.RelationTypes,
				DataBytes: m.Rows * int64(spec.Dim) * workload.BytesPerFloat * 2, PartitionBytes: (m.Rows*int64(spec.Dim)*workload.BytesPerFloat*2 + store.Align - 1) / store.Align * store.Align}, nil
		}
	}
	if int64(spec.P) > nodes {
		return store.Manifest{}, inputerr.Errorf("{P} %d exceeds the graph's %d nodes", spec.P, nodes)
	}
	pb := workload.PartitionBytes(nodes, spec.P, spec.Dim, false)
	return store.Manifest{Nodes: nodes, Train: train, P: spec.P, Dim: spec.Dim, Model: spec.Model, Rows: workload.PartitionRows(nodes, spec.P),
		DataBytes: pb, PartitionBytes: (pb + store.Align - 1) / store.Align * store.Align}, nil
}

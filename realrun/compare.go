package realrun

import (
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/sim"
)

// Comparison is one ordering run for real and simulated on the same Plan.
type Comparison struct {
	Ordering      string            `json:"ordering"`
	Measured      sim.Report        `json:"measured"`
	Predicted     sim.Report        `json:"predicted"`
	RelativeError sim.RelativeError `json:"relative_error"`
	// CountsMatch is true when the measured loads, swaps, writes and bytes
	// equal the prediction's (the Plan's).
	CountsMatch bool `json:"counts_match"`
}

// Predict simulates a measured run's Plan with the realrun system model on
// a calibrated profile, with the work directory's real bucket sizes and
// partition size. It uses nothing of the measurement but its inputs.
func Predict(st *store.Store, plan *orderings.Plan, h Hyper, prefetch bool, prof devices.Profile) (sim.Report, error) {
	sys, err := sim.LookupSystem("realrun")
	if err != nil {
		return sim.Report{}, err
	}
	sys.Prefetch = prefetch
	prof.CPU.Workers = h.Workers
	edges := make([]int64, 0, st.M.P*st.M.P)
	for _, row := range st.M.Buckets {
		edges = append(edges, row...)
	}
	cfg := sim.Config{
		System:  sys,
		Profile: prof,
		Dataset: sim.Dataset{Name: st.M.Source, Nodes: st.M.Nodes, Edges: st.M.Train, Relations: st.M.Relations, TrainFraction: 1, Model: sim.Model(h.Model)},
		Training: sim.Training{Model: sim.Model(h.Model), Dim: h.Dim, Batch: h.Batch, Negatives: h.Negatives,
			ChunkSize: h.ChunkSize},
		Plan:           plan,
		BucketEdges:    edges,
		PartitionBytes: st.M.PartitionBytes,
	}
	return sim.Run(cfg)
}

// Compare pairs a measurement with its prediction and checks the counts:
// the loads, swaps and writes the engine performed must be the Plan's.
func Compare(measured, predicted sim.Report) Comparison {
	c := Comparison{Ordering: measured.Ordering, Measured: measured, Predicted: predicted, RelativeError: predicted.Errors(measured)}
	c.CountsMatch = measured.Counts == predicted.Counts && measured.ReadBytes == predicted.ReadBytes && measured.WriteBytes == predicted.WriteBytes
	return c
}

package realrun

import (
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/sim"
)

// Comparison is one ordering run for real and simulated on the same Plan.
type Comparison struct {
	Ordering      string             `json:"ordering"`
	Measured      sim.Report         `json:"measured"`
	Predicted     sim.Report         `json:"predicted"`
	RelativeError map[string]float64 `json:"relative_error"`
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

// Compare pairs a measurement with its prediction.
func Compare(measured, predicted sim.Report) Comparison {
	c := Comparison{Ordering: measured.Ordering, Measured: measured, Predicted: predicted, RelativeError: map[string]float64{}}
	rel := func(key string, p, m float64) {
		switch {
		case m != 0:
			c.RelativeError[key] = (p - m) / m
		case p == 0:
			c.RelativeError[key] = 0
		} // a prediction of a measured zero has no relative error: omitted
	}
	rel("epoch_seconds", predicted.EpochSeconds, measured.EpochSeconds)
	rel("compute_seconds", predicted.ComputeSeconds, measured.ComputeSeconds)
	rel("read_bytes", float64(predicted.ReadBytes), float64(measured.ReadBytes))
	rel("write_bytes", float64(predicted.WriteBytes), float64(measured.WriteBytes))
	rel("swaps", float64(predicted.Swaps), float64(measured.Swaps))
	// Stall is often near zero: its error is relative to the epoch.
	if measured.EpochSeconds > 0 {
		c.RelativeError["stall_seconds"] = (predicted.StallSeconds - measured.StallSeconds) / measured.EpochSeconds
	}
	return c
}

package validate

import (
	"fmt"
	"runtime"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

// DistributedSetup is a distributed run as the simulator needs it: the
// work directory's manifest (partition and bucket sizes), how many
// trainers, each trainer's link to the shared store in bytes per second
// (payload), the engine's training time per edge, and the epochs.
type DistributedSetup struct {
	Manifest    store.Manifest
	Trainers    int
	LinkBytes   float64
	EdgeSeconds float64
	Epochs      int
	// Latency is paid once per transfer (0: 1 ms, an object store's
	// request over a local link).
	Latency float64
	// StoreBytes, when positive, is the store's own rate, shared by every
	// trainer (one disk); 0: the store is not a limit.
	StoreBytes float64
}

// PredictDistributed predicts a run of tierflow's distributed engine
// (realrun/dist) with the simulator's model of it (sim.EngineModel): the
// same lock server, every partition and edge on one store reached over
// each trainer's link, write-through after every bucket.
func PredictDistributed(d DistributedSetup) (sim.PBGReport, error) {
	m := d.Manifest
	if d.LinkBytes <= 0 || d.Trainers < 1 || d.Epochs < 1 {
		return sim.PBGReport{}, fmt.Errorf("predict distributed: need a link speed, trainers and epochs")
	}
	edges := make([]int64, 0, m.P*m.P)
	var total int64
	for _, row := range m.Buckets {
		for _, n := range row {
			edges = append(edges, n)
			total += n
		}
	}
	store := d.StoreBytes
	if store <= 0 {
		store = 100e9
	}
	lat := d.Latency
	if lat == 0 {
		lat = 1e-3
	}
	prof := devices.Profile{
		Name: "test hosts",
		Disk: devices.Disk{Read: 1e9, Write: 1e9},
		CPU:  devices.CPU{Workers: 1, Memory: 1 << 40, BatchEdges: 1, GatherBW: 1},
		Network: devices.Network{Bandwidth: devices.Bandwidth(d.LinkBytes), Latency: devices.Duration(lat * 1e9),
			// The object store is not behind a shaped link of its own.
			SharedFS: devices.Bandwidth(store)},
	}
	ds := workload.Dataset{Name: m.Source, Nodes: m.Nodes, Edges: total, Relations: int(max(m.Relations, 1)), TrainFraction: 1, Model: workload.Model(m.Model), ResidentNodes: m.Resident}
	tr := workload.Training{Model: ds.Model, Dim: m.Dim, Batch: 1, Negatives: 1}
	if tr.Model == "" {
		tr.Model = workload.Dot
	}
	return sim.SimulatePBG(sim.PBGConfig{Profile: prof, Dataset: ds, Training: tr, P: m.P, Machines: d.Trainers, Epochs: d.Epochs, BucketEdges: edges,
		Engine: &sim.EngineModel{PartitionBytes: m.PartitionBytes, EdgeBytes: 12, EdgeSeconds: d.EdgeSeconds}})
}

// DistributedEpoch is the prediction of one epoch of a distributed run:
// its time, the partitions loaded and saved, the edges' bytes, and the
// trainers' mean train, wait and transfer times (the fields of
// realrun/dist.Predicted, which converts from it).
type DistributedEpoch struct {
	Epoch             int
	Seconds           float64
	Loads             int
	Saves             int
	EdgeBytes         float64
	TrainSeconds      float64
	WaitBucketSeconds float64
	TransferSeconds   float64
}

// PredictDistributedRun is the simulator's prediction of a distributed
// run as realrun/dist calibrated it: the engine's time per edge
// (edgeSeconds, one trainer's workers alone) and the store's rate for a
// partition written and read back (storeBytes). The shared directory's
// disk (or, objects, the object store's client) is the store every
// trainer shares; trainers on more cores than the machine has share
// them, so the time per edge grows by trainers × workers ÷ cores.
func PredictDistributedRun(m store.Manifest, trainers, workers, epochs int, edgeSeconds, storeBytes float64, objects bool) ([]DistributedEpoch, error) {
	edge := edgeSeconds * max(1, float64(trainers*max(workers, 1))/float64(runtime.NumCPU()))
	setup := DistributedSetup{Manifest: m, Trainers: trainers, EdgeSeconds: edge, Epochs: epochs, Latency: 1e-4}
	if objects {
		setup.LinkBytes = storeBytes // each trainer's stream to the object store
	} else {
		setup.LinkBytes, setup.StoreBytes = 1e12, storeBytes // one disk for all
	}
	rep, err := PredictDistributed(setup)
	if err != nil {
		return nil, err
	}
	var out []DistributedEpoch
	for e := 1; e <= epochs; e++ {
		ep := rep.Epochs[min(e, len(rep.Epochs))-1]
		p := DistributedEpoch{Epoch: e, Seconds: ep.Seconds, EdgeBytes: ep.EdgeBytes}
		n := float64(len(ep.Trainers))
		for _, t := range ep.Trainers {
			p.Loads += t.Loads
			p.Saves += t.Saves
			p.TrainSeconds += t.TrainSeconds / n
			p.WaitBucketSeconds += t.WaitBucketSeconds / n
			p.TransferSeconds += t.TransferSeconds / n
		}
		out = append(out, p)
	}
	return out, nil
}

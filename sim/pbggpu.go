package sim

import (
	"fmt"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/workload"
)

// PBGGPUConfig is PyTorch-BigGraph's GPU mode on G GPUs of one machine,
// as its GPU trainer runs it: every partition in CPU memory; buckets one
// after another (inside-out); for each bucket the CPU first permutes the
// rows of the bucket's partitions (embeddings and row-wise Adagrad sums)
// into random sub-partitions and splits the bucket's edges into
// sub-buckets, then the GPUs train the sub-buckets — G sub-partitions a
// side, GPU i training (i, (i+j) mod G) in round j, so no two GPUs share a
// sub-partition (a diagonal bucket is cut into 2G a side and scheduled
// the same way) — copying each sub-partition in over PCIe before it is
// used (the next one prefetched during the current sub-bucket) and back
// after; then the CPU permutes the rows back. The CPU's work does not
// shrink with G.
type PBGGPUConfig struct {
	Profile  devices.Profile
	Dataset  workload.Dataset
	Training workload.Training
	// P is the number of partitions, GPUs the number of GPUs trained on.
	P, GPUs int
	// EdgeSeconds is one GPU's training time per edge (the model's one
	// fitted number); ShuffleBW the rate at which the CPU permutes rows
	// and edges in memory, bytes read plus written per second.
	EdgeSeconds float64
	ShuffleBW   float64
}

// SimulatePBGGPU predicts one epoch of cfg. Every bucket costs
//
//	CPU = 2 × 2·(partition bytes of its partitions) ÷ ShuffleBW + 2·edges·EdgeBytes ÷ ShuffleBW
//	GPU = max over GPUs of: first sub-partitions in + Σ rounds max(train, next copy in and back) + last copy back
//
// (permute and permute back, each reading and writing every row; the
// edges read and written once into their sub-buckets), and the epoch is
// the sum over buckets of CPU + GPU.
func SimulatePBGGPU(cfg PBGGPUConfig) (MultiGPUReport, error) {
	switch {
	case cfg.P < 1 || cfg.GPUs < 1:
		return MultiGPUReport{}, fmt.Errorf("%w: PBG's GPU mode needs p ≥ 1 and at least one GPU, got p = %d, %d GPUs", ErrConfig, cfg.P, cfg.GPUs)
	case cfg.GPUs > cfg.Profile.GPU.Count:
		return MultiGPUReport{}, fmt.Errorf("%w: %d GPUs asked for and device %s has %d", ErrConfig, cfg.GPUs, cfg.Profile.Name, cfg.Profile.GPU.Count)
	case !(cfg.EdgeSeconds >= 0) || !(cfg.ShuffleBW > 0):
		return MultiGPUReport{}, fmt.Errorf("%w: PBG's GPU mode needs a per-edge time ≥ 0 and a shuffle rate > 0", ErrConfig)
	}
	if err := cfg.Training.Validate(); err != nil {
		return MultiGPUReport{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	edges, err := BucketEdges(cfg.Dataset.TrainEdges(), cfg.P, Uniform, 0)
	if err != nil {
		return MultiGPUReport{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	g := cfg.GPUs
	part := float64(workload.PartitionBytes(cfg.Dataset.PartitionedNodes(), cfg.P, cfg.Training.Dim, true))
	eb := float64(EdgeBytes(cfg.Dataset))
	h2d, d2h := float64(cfg.Profile.PCIe.H2D), float64(cfg.Profile.PCIe.D2H)
	rep := MultiGPUReport{System: "pbg-gpu", Device: cfg.Profile.Name, Dataset: cfg.Dataset.Name, GPUs: g, P: cfg.P, PartitionBytes: int64(part)}
	use := make([]GPUUsage, g)
	var cpu, epoch float64
	for i, n := range edges {
		src, dst := i/cfg.P, i%cfg.P
		parts, sub := 2.0, g
		if src == dst {
			parts = 1
			if g > 1 {
				sub = 2 * g // a diagonal bucket: 2G sub-partitions, one side
			}
		}
		c := (2*2*parts*part + 2*float64(n)*eb) / cfg.ShuffleBW
		cpu += c
		// Sub-buckets: sub² of them, sub²/g a GPU in rounds of one.
		rounds := sub * sub / g
		subEdges := float64(n) / float64(sub*sub)
		subBytes := parts * part / float64(2*sub) // one side's sub-partition
		if src == dst {
			subBytes = part / float64(sub)
		}
		train := subEdges * cfg.EdgeSeconds
		sides := 2.0 // both sides' sub-partitions
		if src == dst && sub == 1 {
			sides = 1 // the one partition is both sides
		}
		in, out := sides*subBytes/h2d, sides*subBytes/d2h
		// First copy in, then each round trains while the next round's
		// sub-partitions come in and the last round's go back; then the
		// last copy back.
		step := max(train, in+out)
		t := in + float64(rounds-1)*step + train + out
		if rounds == 1 {
			t = in + train + out
		}
		for k := range use {
			use[k].BusySeconds += float64(rounds) * train
			use[k].StallSeconds += t - float64(rounds)*train
			use[k].H2DBytes += float64(rounds) * sides * subBytes
			use[k].D2HBytes += float64(rounds) * sides * subBytes
			use[k].H2DBusySeconds += float64(rounds) * in
			use[k].D2HBusySeconds += float64(rounds) * out
			use[k].Buckets++
			use[k].Edges += int64(subEdges * float64(rounds))
		}
		epoch += c + t
	}
	for k := range use {
		use[k].GPU = k
		use[k].StallSeconds += cpu // the GPUs wait while the CPU permutes
		use[k].EndSeconds = epoch
		rep.H2DBytes += use[k].H2DBytes
		rep.D2HBytes += use[k].D2HBytes
	}
	rep.PerGPU, rep.EpochSeconds, rep.CPUBusySeconds = use, epoch, cpu
	return rep, nil
}

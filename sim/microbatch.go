package sim

import (
	"fmt"
	"math"

	"github.com/tierflow/tierflow/sim/workload"
)

// MicroPlan is how a configuration's batches meet the GPU's memory: the
// estimated peak of one batch (workload.EstimateBatch, with every chunk of
// a micro-batch computed at once, as a GPU does), the memory left for it,
// and the fewest micro-batches that fit (Betty §4.4).
type MicroPlan struct {
	// Budget is the GPU memory left to a batch: the GPU's memory minus what
	// the system keeps resident there (a GPU partition buffer, or every
	// parameter).
	Budget int64
	// Whole is the unsplit batch's estimated peak; Peak the peak of its
	// largest micro-batch; K the micro-batches (1: the batch fits).
	Whole, Peak int64
	K           int
	// DuplicatedRows is the rows one full batch gathers more than once
	// because K micro-batches each gather their own (expected, rows drawn
	// uniformly from the bucket's partitions).
	DuplicatedRows float64
}

// gpuResident is what the system keeps in GPU memory besides the batch.
func gpuResident(cfg Config, pbytes float64) float64 {
	sys := cfg.System
	switch {
	case !sys.Partitioned && sys.Resident == "gpu":
		return float64(cfg.Dataset.Nodes) * float64(cfg.Training.Dim) * BytesPerFloat * 2
	case sys.Partitioned && (sys.IO == SSDToGPUPath || sys.IO == PCIePath):
		buf := sys.Buffer(cfg.Profile, cfg.Plan.C, int64(pbytes))
		return float64(buf.Bytes)
	}
	return 0
}

// rowPopulation is the rows a batch draws from: the bucket's two
// partitions, or every node.
func rowPopulation(cfg Config) int64 {
	if cfg.System.Partitioned && cfg.Plan != nil && cfg.Plan.P > 1 {
		return 2 * ((cfg.Dataset.Nodes + int64(cfg.Plan.P) - 1) / int64(cfg.Plan.P))
	}
	return cfg.Dataset.Nodes
}

func (cfg Config) microShape(edges int) workload.BatchShape {
	t := cfg.Training
	return workload.UniformShape(t.Model, t.Dim, edges, t.chunk(), t.Negatives, rowPopulation(cfg), int64(cfg.Dataset.Relations), 0)
}

// Fits reports whether the (micro-)batches fit the memory left to them.
func (mp MicroPlan) Fits() bool { return mp.Peak <= mp.Budget }

// partitionBytes is the size of one node partition the simulation moves.
func (cfg Config) partitionBytes() float64 {
	if cfg.PartitionBytes > 0 {
		return float64(cfg.PartitionBytes)
	}
	if !cfg.System.Partitioned || cfg.Plan == nil {
		return 0
	}
	return float64(cfg.System.PartitionBytes(cfg.Dataset.Nodes, cfg.Plan.P, cfg.Training.Dim))
}

// Micro plans the configuration's micro-batches. Systems that train on
// the CPU (realrun) have no GPU budget (Budget = MaxInt64) and always get
// K = 1. With NoMicroBatching a batch that does not fit keeps K = 1 and
// does not Fit. An error says that no split fits; the plan then has K = 1.
func (cfg Config) Micro() (MicroPlan, error) {
	t := cfg.Training
	pbytes := cfg.partitionBytes()
	mp := MicroPlan{K: 1}
	mp.Whole = workload.EstimateBatch(cfg.microShape(t.Batch)).Total
	mp.Peak = mp.Whole
	if cfg.System.Batches == OnCPU {
		mp.Budget = math.MaxInt64
		return mp, nil
	}
	mem := int64(cfg.Profile.GPU.Memory)
	if cfg.GPUMemory > 0 {
		mem = cfg.GPUMemory
	}
	mp.Budget = mem - int64(gpuResident(cfg, pbytes))
	if mp.Whole <= mp.Budget || cfg.NoMicroBatching {
		return mp, nil
	}
	if mp.Budget <= 0 {
		return mp, fmt.Errorf("no GPU memory is left for a batch: the system keeps %.1f GB resident on a %.1f GB GPU", gpuResident(cfg, pbytes)/1e9, float64(mem)/1e9)
	}
	k, peak, err := workload.FewestMicroBatches(mp.Budget, t.Batch, func(k int) int64 {
		return workload.EstimateBatch(cfg.microShape((t.Batch + k - 1) / k)).Total
	})
	if err != nil {
		return mp, err
	}
	mp.K, mp.Peak = k, peak
	whole := cfg.microShape(t.Batch).Rows
	var sum int64
	for i := 0; i < k; i++ {
		sum += cfg.microShape((i+1)*t.Batch/k - i*t.Batch/k).Rows
	}
	mp.DuplicatedRows = math.Max(0, float64(sum-whole))
	return mp, nil
}

// microCost is the cost of a batch of b edges split into k micro-batches:
// the micro-batches' own costs plus moving the rows gathered more than
// once — over PCIe both ways (parameters in, gradients out) when batches
// are built on the CPU, as gather, read and write of GPU memory when they
// are built on the GPU. dup is the duplicated rows of a full batch, scaled
// to b.
func (e *engine) microCost(b int) (Cost, float64) {
	k := e.micro.K
	var c Cost
	for i := 0; i < k; i++ {
		part := (i+1)*b/k - i*b/k
		if part == 0 {
			continue
		}
		pc := e.cost(part)
		c.CPU += pc.CPU
		c.GPU += pc.GPU
		c.H2D += pc.H2D
		c.D2H += pc.D2H
	}
	prof, t := e.cfg.Profile, e.cfg.Training
	dup := e.micro.DuplicatedRows * float64(b) / float64(t.Batch)
	bytes := dup * float64(t.Dim) * BytesPerFloat
	switch e.cfg.System.Batches {
	case OnGPU:
		c.GPU += 3 * bytes / float64(prof.GPU.MemoryBW)
	default:
		c.H2D += bytes
		c.D2H += bytes
		c.GPU += bytes/float64(prof.PCIe.H2D) + bytes/float64(prof.PCIe.D2H)
	}
	return c, 2 * bytes
}

package sim

import (
	"errors"
	"fmt"
	"math"

	"github.com/tierflow/tierflow/workload"
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
		return float64(sys.ResidentMemory(cfg.Profile, cfg.Dataset.Nodes, cfg.Training.Dim).Bytes)
	case sys.Partitioned && (sys.IO == SSDToGPUPath || sys.IO == PCIePath):
		buf := sys.Buffer(cfg.Profile, cfg.Plan.C, int64(pbytes))
		return float64(buf.WithResident(int64(cfg.residentBytes())).Bytes)
	}
	return 0
}

// rowPopulation is the rows a batch draws from: the bucket's two
// partitions, or every node.
func rowPopulation(cfg Config) int64 {
	if cfg.System.Partitioned && cfg.Plan != nil && cfg.Plan.P > 1 {
		return 2*workload.PartitionRows(cfg.Dataset.PartitionedNodes(), cfg.Plan.P) + cfg.Dataset.ResidentNodes
	}
	return cfg.Dataset.Nodes
}

func (cfg Config) uniformShape(edges, pieces int) workload.BatchShape {
	t := cfg.Training
	return workload.UniformShape(t.Model, t.Dim, edges, pieces, t.Chunk(), t.Negatives, rowPopulation(cfg), int64(cfg.Dataset.Relations), 0)
}

// microShape is the largest of k micro-batches of a full batch, split in
// training order: ceil(b/k) edges over as many pieces as such a run can
// touch.
func (cfg Config) microShape(k int) workload.BatchShape {
	b, ch := cfg.Training.Batch, cfg.Training.Chunk()
	if k <= 1 {
		return cfg.uniformShape(b, workload.RangePieces(0, b, ch))
	}
	e := (b + k - 1) / k
	return cfg.uniformShape(e, min((e+ch-1)/ch+1, workload.RangePieces(0, b, ch)))
}

// duplicatedRows is the rows a full batch split into k runs gathers more
// than the whole batch does.
func (cfg Config) duplicatedRows(k int) float64 {
	b, ch := cfg.Training.Batch, cfg.Training.Chunk()
	whole := cfg.uniformShape(b, workload.RangePieces(0, b, ch)).Rows
	var sum int64
	for i := 0; i < k; i++ {
		lo, hi := i*b/k, (i+1)*b/k
		sum += cfg.uniformShape(hi-lo, workload.RangePieces(lo, hi, ch)).Rows
	}
	return math.Max(0, float64(sum-whole))
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
	return float64(cfg.System.DataPartitionBytes(cfg.Dataset, cfg.Plan.P, cfg.Training.Dim))
}

// residentBytes is the size of the resident table the simulation holds
// beside the partitions and moves once each way an epoch (partitioned
// systems with resident entity types; 0 otherwise).
func (cfg Config) residentBytes() float64 {
	if !cfg.System.Partitioned || cfg.Dataset.ResidentNodes <= 0 {
		return 0
	}
	if cfg.ResidentBytes > 0 {
		return float64(cfg.ResidentBytes)
	}
	return float64(cfg.System.ResidentTableBytes(cfg.Dataset, cfg.Training.Dim))
}

// Micro plans the configuration's micro-batches. Systems that train on
// the CPU (realrun) have no GPU budget (Budget = MaxInt64) and always get
// K = 1. With NoMicroBatching a batch that does not fit keeps K = 1 and
// does not Fit. An error says that no split fits; the plan then has K = 1.
func (cfg Config) Micro() (MicroPlan, error) {
	t := cfg.Training
	pbytes := cfg.partitionBytes()
	mp := MicroPlan{K: 1}
	mp.Whole = workload.EstimateBatch(cfg.microShape(1)).Total
	mp.Peak = mp.Whole
	if cfg.System.Batches == OnCPU {
		mp.Budget = math.MaxInt64
		return mp, nil
	}
	mem := int64(cfg.Profile.GPU.Memory)
	mp.Budget = mem - int64(gpuResident(cfg, pbytes))
	peak := func(k int) int64 { return workload.EstimateBatch(cfg.microShape(k)).Total }
	k := cfg.MicroBatches
	switch {
	case k > 0:
		k = min(k, t.Batch)
	case mp.Whole <= mp.Budget || cfg.NoMicroBatching:
		return mp, nil
	case mp.Budget <= 0:
		return mp, fmt.Errorf("no GPU memory is left for a batch: the system keeps %.1f GB resident on a %.1f GB GPU", gpuResident(cfg, pbytes)/1e9, float64(mem)/1e9)
	default:
		var err error
		k, err = workload.FewestMicroBatches(2, t.Batch, func(k int) (bool, error) { return peak(k) <= mp.Budget, nil })
		if errors.Is(err, workload.ErrNoFit) {
			limit := min(t.Batch, workload.MaxMicroBatches)
			return mp, fmt.Errorf("even %d micro-batches need %.3f GB, more than the %.3f GB budget", limit, float64(peak(limit))/1e9, float64(mp.Budget)/1e9)
		}
		if err != nil {
			return mp, err
		}
	}
	mp.K, mp.Peak = k, peak(k)
	mp.DuplicatedRows = cfg.duplicatedRows(k)
	return mp, nil
}

// microCost is the cost of a batch of b edges split into micro-batches:
// the unsplit batch's (the same edges against the same negatives: the same
// arithmetic and rows) plus moving the rows gathered more than once — over
// PCIe both ways (parameters in, gradients out) when batches are built on
// the CPU, as gather, read and write of GPU memory when they are built on
// the GPU. The duplicated rows of a full batch are scaled to b. It returns
// the cost and the extra bytes.
func (e *engine) microCost(b int) (Cost, float64) {
	c := e.cost(b)
	prof, t := e.cfg.Profile, e.cfg.Training
	dup := e.micro.DuplicatedRows * float64(b) / float64(t.Batch)
	bytes := dup * float64(t.Dim) * workload.BytesPerFloat
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

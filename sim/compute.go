package sim

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/workload"
)

// Cost is the time and traffic of one batch.
type Cost struct {
	// CPU is the batch-construction and update time on the CPU (zero when
	// batches are built on the GPU).
	CPU float64
	// GPU is the time of the GPU stage: transfers on the default stream
	// plus the arithmetic, or, with GPU-built batches, gather, arithmetic
	// and update on the GPU.
	GPU float64
	// H2D and D2H are the bytes moved over PCIe for the batch.
	H2D, D2H float64
}

// CPUBatchCost is the cost of a batch built on the CPU and computed on the
// GPU (Marius, DGL-KE, PBG):
//
//	CPU = b ÷ cpu.batch_edges + rows·d·4·f ÷ cpu.gather_bandwidth
//	GPU = rows·d·4 ÷ pcie.h2d + flops ÷ gpu.flops + rows·d·4 ÷ pcie.d2h
//
// with rows = 2b + 2·chunks·N, flops = PaperBatchFLOPs and f = 2 for
// ComplEx, 1 otherwise (paperComplex). The relation parameters of these
// systems live on the GPU and are not gathered on the CPU. The GPU stage
// is serial because Marius issues all GPU work on the default CUDA
// stream (Marius §5.2).
func CPUBatchCost(prof devices.Profile, t workload.Training, b int) Cost {
	rows := t.BatchRows(b)
	bytes := rows * float64(t.Dim) * workload.BytesPerFloat
	c := Cost{
		CPU: float64(b)/float64(prof.CPU.BatchEdges) + bytes*paperComplex(t)/float64(prof.CPU.GatherBW),
		H2D: bytes, D2H: bytes,
	}
	c.GPU = PaperBatchFLOPs(t, b) / float64(prof.GPU.FLOPS)
	if prof.GPU.Count > 0 {
		c.GPU += bytes/float64(prof.PCIe.H2D) + bytes/float64(prof.PCIe.D2H)
	}
	return c
}

// GPUBatchCost is the cost of a batch built and computed on the GPU
// (Legend, GE2, everything in GPU memory):
//
//	GPU = b ÷ gpu.batch_edges + flops ÷ gpu.flops + 3·bytes ÷ gpu.memory_bandwidth
//
// (gather, then read and write of embeddings with their Adagrad state),
// flops = PaperBatchFLOPs and bytes = rows·d·4 + b·RelWidth(d)·4: the
// batch's rows and each edge's relation row (workload.ChunkCost).
func GPUBatchCost(prof devices.Profile, t workload.Training, b int) Cost {
	rows := t.BatchRows(b)
	bytes := rows*float64(t.Dim)*workload.BytesPerFloat + float64(b)*t.Cost().RelBytes
	return Cost{GPU: float64(b)/float64(prof.GPU.BatchEdges) + PaperBatchFLOPs(t, b)/float64(prof.GPU.FLOPS) + 3*bytes/float64(prof.GPU.MemoryBW)}
}

// paperComplex is the factor the paper systems' ComplEx figures were
// matched with (Marius on FB15k and Freebase86m; the goldens and the
// paper experiments): their ComplEx costs twice dot's score products and
// host gather. It is kept for those systems alone. tierflow's engines
// form the complex query first and score it with dot's GEMM, so the cost
// rule (workload.ModelCost) prices ComplEx as dot's products plus the
// complex product of each query.
func paperComplex(t workload.Training) float64 {
	if t.Model == workload.ComplEx {
		return 2
	}
	return 1
}

// PaperBatchFLOPs is a batch's arithmetic on a paper system's GPU: the
// cost rule's (workload.Training.BatchFLOPs), with ComplEx's score
// products counted twice (paperComplex).
func PaperBatchFLOPs(t workload.Training, b int) float64 {
	f := t.BatchFLOPs(b)
	if k := paperComplex(t); k != 1 {
		f += (k - 1) * 2 * float64(b) * float64(t.Negatives) * t.Cost().PairFLOPs
	}
	return f
}

// splitBatches returns the sizes of the batches of a bucket of n edges:
// full batches and one remainder.
func splitBatches(n int64, batch int) (full int64, rest int) {
	return n / int64(batch), int(n % int64(batch))
}

// CPUBucketTime is the time tierflow's CPU engine takes for a bucket of
// edges: work units (workload.WorkUnit: batches of Training.Batch edges, or equal
// whole-chunk shares of a small bucket) handed to cpu.workers goroutines
// as they free up, every chunk of ChunkSize edges (default Negatives)
// costing, at the whole machine's calibrated rates (devices.TrainCost,
// CPUTrainCost), edges ÷ edges/s + bytes ÷ row_bandwidth + FLOPs ÷ flops
// + pairwise ÷ pairwise (workload.ChunkCost; a rate of 0 drops its term,
// and pairwise operations without their own rate run at a third of the
// FLOP rate, devices.TrainCost.PairwiseRate); one worker
// alone takes workers times as long. The bucket ends when its last batch
// does. 0 when the profile has no cost for the model (CPUTrainCost).
func CPUBucketTime(prof devices.Profile, t workload.Training, edges int64) float64 {
	tc, _, err := CPUTrainCost(prof, t.Model)
	if err != nil || edges <= 0 {
		return 0
	}
	w := max(prof.CPU.Workers, 1)
	// A zero rate is no separate term (a rate measured at one shape
	// folds rows and FLOPs into the edge rate).
	over := func(x, rate float64) float64 {
		if rate <= 0 {
			return 0
		}
		return x / rate
	}
	pairRate := tc.PairwiseRate()
	chunkTime := func(n int) float64 {
		c := t.ChunkCost(n)
		return over(c.Edges, float64(tc.Edges)) + over(c.Bytes, float64(tc.RowBW)) + over(c.FLOPs, float64(tc.FLOPS)) + over(c.Pairwise, pairRate)
	}
	batchTime := func(b int) float64 {
		var s float64
		ch := t.Chunk()
		for lo := 0; lo < b; lo += ch {
			s += chunkTime(min(ch, b-lo))
		}
		return s * float64(w)
	}
	unit := workload.WorkUnit(int(min(edges, 1<<40)), t.Batch, t.Chunk(), w)
	full, rest := splitBatches(edges, unit)
	// Workers take units in order as they free up: with equal units the
	// makespan is ceil(units / workers) unit times, plus the remainder
	// unit on the worker that frees up first.
	free := make([]float64, w)
	bt := batchTime(unit)
	assign := func(d float64) {
		best := 0
		for i := range free {
			if free[i] < free[best] {
				best = i
			}
		}
		free[best] += d
	}
	if full > int64(4*w) {
		// Whole rounds first, so long buckets cost O(workers).
		rounds := full/int64(w) - 1
		for i := range free {
			free[i] = float64(rounds) * bt
		}
		full -= rounds * int64(w)
	}
	for i := int64(0); i < full; i++ {
		assign(bt)
	}
	if rest > 0 {
		assign(batchTime(rest))
	}
	var end float64
	for _, f := range free {
		end = max(end, f)
	}
	return end
}

// ErrNoTrainCost is the error of CPUTrainCost when a profile has no cost
// for a model and none it can price it from.
var ErrNoTrainCost = errors.New("no CPU engine cost for the model")

// CPUTrainCost is the CPU engine's cost of model m on prof: the
// profile's own (cpu.train.<m>, or cpu.train.pair for the pair
// cpu.train.pair_model), or — when it has none — the rates of a model it
// has, each of m's terms (workload.ChunkCost) priced at them: rates per
// edge, byte, FLOP and pairwise operation are the machine's whatever the
// model, and the cost rule says how many of each m does (note says which
// model's rates, "" for m's own). A rate measured at one shape (an edge
// rate alone, devices.TrainCost.Folded: what `realrun calibrate`
// writes) folds its model's rows and FLOPs into the edge rate and cannot
// be split into them: such a profile is not scaled to another model, and
// the error (ErrNoTrainCost) says to calibrate m.
func CPUTrainCost(prof devices.Profile, m workload.Model) (tc devices.TrainCost, note string, err error) {
	tr := prof.CPU.Train
	if tc, ok := tr.For(string(m)); ok {
		return tc, "", nil
	}
	measured := tr.Measured()
	for _, r := range measured {
		if c, _ := tr.For(r); !c.Folded() {
			return c, fmt.Sprintf("cpu.train has no cost for %s: its terms (the cost rule's edges, bytes, FLOPs and pairwise operations) are priced at cpu.train.%s's rates", m, r), nil
		}
	}
	if len(measured) == 0 {
		return devices.TrainCost{}, "", fmt.Errorf("%w: cpu.train gives no cost; measure it with realrun calibrate {Model} %s and the run's other training flags", ErrNoTrainCost, m)
	}
	return devices.TrainCost{}, "", fmt.Errorf("%w: cpu.train gives an edge rate for %s alone, measured at one shape with its rows and FLOPs folded in, which does not scale to %s by the cost rule; measure it with realrun calibrate {Model} %s and the run's other training flags",
		ErrNoTrainCost, strings.Join(measured, ", "), m, m)
}

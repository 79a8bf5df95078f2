package sim

import (
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
// with rows = 2b + 2·chunks·N, flops = 12·b·N·d·f and f = 2 for ComplEx, 1
// otherwise. The GPU stage is serial because Marius issues all GPU work on
// the default CUDA stream (Marius §5.2).
func CPUBatchCost(prof devices.Profile, t workload.Training, b int) Cost {
	rows := t.BatchRows(b)
	bytes := rows * float64(t.Dim) * workload.BytesPerFloat
	c := Cost{
		CPU: float64(b)/float64(prof.CPU.BatchEdges) + bytes*t.Model.CostFactor()/float64(prof.CPU.GatherBW),
		H2D: bytes, D2H: bytes,
	}
	c.GPU = t.BatchFLOPs(b) / float64(prof.GPU.FLOPS)
	if prof.GPU.Count > 0 {
		c.GPU += bytes/float64(prof.PCIe.H2D) + bytes/float64(prof.PCIe.D2H)
	}
	return c
}

// GPUBatchCost is the cost of a batch built and computed on the GPU
// (Legend, GE2, everything in GPU memory):
//
//	GPU = b ÷ gpu.batch_edges + flops ÷ gpu.flops + 3·rows·d·4 ÷ gpu.memory_bandwidth
//
// (gather, then read and write of embeddings with their Adagrad state).
func GPUBatchCost(prof devices.Profile, t workload.Training, b int) Cost {
	rows := t.BatchRows(b)
	bytes := rows * float64(t.Dim) * workload.BytesPerFloat
	return Cost{GPU: float64(b)/float64(prof.GPU.BatchEdges) + t.BatchFLOPs(b)/float64(prof.GPU.FLOPS) + 3*bytes/float64(prof.GPU.MemoryBW)}
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
// costing, at the whole machine's calibrated rates (devices.TrainCost),
// n ÷ edges + (2n + m)·d·4 ÷ row_bandwidth + 12·n·m·d ÷ flops
// (workload.ChunkTerms; a rate of 0 drops its term); one
// worker alone takes workers times as long. The bucket ends when its last
// batch does.
func CPUBucketTime(prof devices.Profile, t workload.Training, edges int64) float64 {
	tc, ok := prof.CPU.Train.For(string(t.Model))
	if !ok || edges <= 0 {
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
	chunkTime := func(n int) float64 {
		c := workload.ChunkTerms(float64(n), float64(t.Negatives), float64(t.Dim))
		return over(c[0], float64(tc.Edges)) + over(c[1], float64(tc.RowBW)) + over(c[2], float64(tc.FLOPS))
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

package sim

import (
	"fmt"
	"strings"

	"github.com/tierflow/tierflow/sim/workload"

	"github.com/tierflow/tierflow/devices"
)

// Model is a score function (the one vocabulary: package workload).
type Model = workload.Model

// The score functions.
const (
	Dot      = workload.Dot
	DistMult = workload.DistMult
	ComplEx  = workload.ComplEx
)

// ParseModel returns the named score function, case-insensitively.
func ParseModel(name string) (Model, error) { return workload.ParseModel(name) }

// Training is the shape of the computation of one epoch.
type Training struct {
	Model Model `json:"model"`
	Dim   int   `json:"dim"`
	// Batch is the number of edges per batch, Negatives the number of
	// negative nodes sampled per chunk and shared by its edges (PBG §4.3),
	// and ChunkSize the edges per chunk (0: equal to Negatives).
	Batch     int `json:"batch"`
	Negatives int `json:"negatives"`
	ChunkSize int `json:"chunk_size"`
}

// Validate checks the training shape.
func (t Training) Validate() error {
	switch {
	case t.Dim < 1:
		return fmt.Errorf("dimension must be at least 1, got %d", t.Dim)
	case t.Batch < 1:
		return fmt.Errorf("batch must be at least 1 edge, got %d", t.Batch)
	case t.Negatives < 1:
		return fmt.Errorf("negatives must be at least 1, got %d", t.Negatives)
	case t.ChunkSize < 0:
		return fmt.Errorf("chunk size must not be negative, got %d", t.ChunkSize)
	}
	_, err := ParseModel(string(t.Model))
	return err
}

func (t Training) chunk() int {
	if t.ChunkSize > 0 {
		return t.ChunkSize
	}
	return t.Negatives
}

// rows is the number of embedding rows a batch of b edges touches: the
// source and destination of every edge, and the negatives of every chunk
// for both corrupted sides.
func (t Training) rows(b int) float64 {
	chunks := (b + t.chunk() - 1) / t.chunk()
	return float64(2*b) + 2*float64(chunks)*float64(t.Negatives)
}

// flops is the arithmetic of a batch: every edge scored against the
// chunk's negatives on both sides (2·N·d multiply-adds), two FLOPs per
// multiply-add, and three times the forward pass for forward plus backward.
func (t Training) flops(b int) float64 {
	return 12 * float64(b) * float64(t.Negatives) * float64(t.Dim) * t.Model.CostFactor()
}

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
func CPUBatchCost(prof devices.Profile, t Training, b int) Cost {
	rows := t.rows(b)
	bytes := rows * float64(t.Dim) * BytesPerFloat
	c := Cost{
		CPU: float64(b)/float64(prof.CPU.BatchEdges) + bytes*t.Model.CostFactor()/float64(prof.CPU.GatherBW),
		H2D: bytes, D2H: bytes,
	}
	c.GPU = t.flops(b) / float64(prof.GPU.FLOPS)
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
func GPUBatchCost(prof devices.Profile, t Training, b int) Cost {
	rows := t.rows(b)
	bytes := rows * float64(t.Dim) * BytesPerFloat
	return Cost{GPU: float64(b)/float64(prof.GPU.BatchEdges) + t.flops(b)/float64(prof.GPU.FLOPS) + 3*bytes/float64(prof.GPU.MemoryBW)}
}

// splitBatches returns the sizes of the batches of a bucket of n edges:
// full batches and one remainder.
func splitBatches(n int64, batch int) (full int64, rest int) {
	return n / int64(batch), int(n % int64(batch))
}

// WorkUnit is how many of a bucket's edges one worker of tierflow's CPU
// engine takes at a time: a batch, or — when the bucket holds fewer than
// one batch per worker — an equal share rounded up to whole chunks, so
// that every worker has work on small buckets too. Units are whole chunks,
// so the chunks (the unit of every update) are the same whatever the unit;
// with one worker a bucket is trained exactly as batch by batch. The
// engine and its model (CPUBucketTime) both use this rule.
func WorkUnit(edges, batch, chunk, workers int) int {
	per := (edges + workers - 1) / max(workers, 1)
	if per >= batch {
		return batch
	}
	return max(chunk, (per+chunk-1)/chunk*chunk)
}

// CPUBucketTime is the time tierflow's CPU engine takes for a bucket of
// edges: work units (WorkUnit: batches of Training.Batch edges, or equal
// whole-chunk shares of a small bucket) handed to cpu.workers goroutines
// as they free up, every chunk of ChunkSize edges (default Negatives)
// costing, at the whole machine's calibrated rates (devices.TrainCost),
// n ÷ edges + (2n + m)·d·4 ÷ row_bandwidth + 12·n·m·d ÷ flops; one
// worker alone takes workers times as long. The bucket ends when its last
// batch does.
func CPUBucketTime(prof devices.Profile, t Training, edges int64) float64 {
	tc, ok := prof.CPU.Train.For(string(t.Model))
	if !ok || edges <= 0 {
		return 0
	}
	w := max(prof.CPU.Workers, 1)
	chunkTime := func(n int) float64 {
		m, d := float64(t.Negatives), float64(t.Dim)
		fn := float64(n)
		return fn/float64(tc.Edges) + (2*fn+m)*d*BytesPerFloat/float64(tc.RowBW) + 12*fn*m*d/float64(tc.FLOPS)
	}
	batchTime := func(b int) float64 {
		var s float64
		ch := t.chunk()
		for lo := 0; lo < b; lo += ch {
			s += chunkTime(min(ch, b-lo))
		}
		return s * float64(w)
	}
	unit := WorkUnit(int(min(edges, 1<<40)), t.Batch, t.chunk(), w)
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

// ModelNames lists the score functions for help texts.
func ModelNames() string {
	names := make([]string, len(workload.Models))
	for i, m := range workload.Models {
		names[i] = string(m)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

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
// with rows = 2b + 2·chunks·N, flops = workload.Training.PaperBatchFLOPs and f = 2 for
// ComplEx, 1 otherwise (workload.Training.PaperComplex). The relation parameters of these
// systems live on the GPU and are not gathered on the CPU. The GPU stage
// is serial because Marius issues all GPU work on the default CUDA
// stream (Marius §5.2).
func CPUBatchCost(prof devices.Profile, t workload.Training, b int) Cost {
	rows := t.BatchRows(b)
	bytes := rows * float64(t.Dim) * workload.BytesPerFloat
	c := Cost{
		CPU: float64(b)/float64(prof.CPU.BatchEdges) + bytes*t.PaperComplex()/float64(prof.CPU.GatherBW),
		H2D: bytes, D2H: bytes,
	}
	c.GPU = t.PaperBatchFLOPs(b) / float64(prof.GPU.FLOPS)
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
// flops = workload.Training.PaperBatchFLOPs and bytes = rows·d·4 + b·RelWidth(d)·4: the
// batch's rows and each edge's relation row (workload.ChunkCost).
func GPUBatchCost(prof devices.Profile, t workload.Training, b int) Cost {
	rows := t.BatchRows(b)
	bytes := rows*float64(t.Dim)*workload.BytesPerFloat + float64(b)*t.Cost().RelBytes
	return Cost{GPU: float64(b)/float64(prof.GPU.BatchEdges) + t.PaperBatchFLOPs(b)/float64(prof.GPU.FLOPS) + 3*bytes/float64(prof.GPU.MemoryBW)}
}

package calibrate

import (
	"fmt"
	"sync"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/realrun"
)

// GPUCalibration is what a GPU engine measured for the device profile.
type GPUCalibration struct {
	Name        string  `json:"name"`
	MemoryBytes int64   `json:"memory_bytes"`
	H2D         float64 `json:"h2d_bytes_per_s"` // pinned, partition-sized copies
	D2H         float64 `json:"d2h_bytes_per_s"`
	// EdgesPerSecond is the engine's training rate at the calibrated
	// shape and bucket size with both partitions on the GPU (--buffer
	// gpu), timed on the host clock as an epoch's compute is.
	EdgesPerSecond float64 `json:"edges_per_second"`
	// HostEdgesPerSecond is the same with the partitions in host memory
	// (--buffer host: each batch's rows gathered, shipped and written
	// back by the engine itself); 0 when not measured.
	HostEdgesPerSecond float64 `json:"host_edges_per_second,omitempty"`
	// BucketEdges is the bucket size both rates were measured at: a
	// bucket's fixed costs (its shuffle's first piece, the stream drained
	// at its end) weigh more in small buckets.
	BucketEdges int64  `json:"bucket_edges,omitempty"`
	Shape       string `json:"shape"`
}

var (
	gpuMu         sync.Mutex
	gpuCalibrator GPUCalibrator
)

// GPUCalibrator measures a GPU engine: pinned copies of partitionBytes,
// and its training rates at shape h on partitions of rows rows in buckets
// of bucketEdges edges (0: its own default).
type GPUCalibrator func(partitionBytes int64, h realrun.Hyper, rows, bucketEdges int64) (GPUCalibration, error)

// RegisterGPUCalibrator is called by the CUDA engine's package init.
func RegisterGPUCalibrator(f GPUCalibrator) {
	gpuMu.Lock()
	defer gpuMu.Unlock()
	gpuCalibrator = f
}

// CalibrateGPU measures the GPU (pinned H2D and D2H bandwidth at partition
// size, its memory, the CUDA engine's training rates at shape h on
// partitions of rows rows, in buckets of bucketEdges edges — a run's mean
// bucket, Store.MeanBucket; 0: the engine's default). Without the CUDA
// engine in the build the error is a *realrun.EngineUnavailable.
func CalibrateGPU(partitionBytes int64, h realrun.Hyper, rows, bucketEdges int64) (GPUCalibration, error) {
	gpuMu.Lock()
	f := gpuCalibrator
	gpuMu.Unlock()
	if f == nil {
		return GPUCalibration{}, &realrun.EngineUnavailable{Name: "cuda", Hint: "GPU calibration needs a build with -tags cuda (make build-cuda)"}
	}
	return f(partitionBytes, h, rows, bucketEdges)
}

// Apply writes the measurement into a device profile: PCIe H2D/D2H, the
// GPU's name and memory, and its training rate folded into gpu.flops as the
// simulator's GPU batch cost counts it (batch construction and memory
// traffic set free, so that flops ÷ gpu.flops alone reproduces the measured
// edges per second at this shape; like the CPU's calibration, valid for
// this shape and bucket size). A measured --buffer host rate goes into the
// host side of a batch built on the CPU and trained on the GPU
// (cpu.batch_edges, with cpu.gather_bandwidth set free), so that the
// simulator's CPU stage plus its GPU stage (the products at gpu.flops and
// the batch's rows over PCIe) reproduce it: the --buffer host engine
// predicted from its own measurement, not from the CPU engine's.
func (c GPUCalibration) Apply(p *devices.Profile, h realrun.Hyper) error {
	t := h.Training
	if err := t.Validate(); err != nil {
		return fmt.Errorf("gpu calibration shape: %w", err)
	}
	if !(c.EdgesPerSecond > 0 && c.H2D > 0 && c.D2H > 0) {
		return fmt.Errorf("gpu calibration: non-positive rate (edges/s %g, h2d %g, d2h %g)", c.EdgesPerSecond, c.H2D, c.D2H)
	}
	flops := t.PaperBatchFLOPs(h.Batch) // FLOPs of one batch, as the simulator's GPU stage divides them
	p.PCIe = devices.PCIe{H2D: devices.Bandwidth(c.H2D), D2H: devices.Bandwidth(c.D2H)}
	p.GPU = devices.GPU{Name: c.Name, Count: 1, Memory: devices.Bytes(c.MemoryBytes),
		FLOPS:    devices.FLOPRate(flops / float64(h.Batch) * c.EdgesPerSecond),
		MemoryBW: devices.Bandwidth(1e15), BatchEdges: devices.EdgeRate(1e15)}
	if c.HostEdgesPerSecond > 0 {
		b := float64(h.Batch)
		rowBytes := t.BatchRows(h.Batch) * float64(t.Dim) * 4
		gpuStage := flops/float64(p.GPU.FLOPS) + rowBytes/c.H2D + rowBytes/c.D2H
		host := max(b/c.HostEdgesPerSecond-gpuStage, b/1e15)
		p.CPU.BatchEdges = devices.EdgeRate(b / host)
		p.CPU.GatherBW = devices.Bandwidth(1e15)
	}
	return nil
}

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
	// shape with both partitions on the GPU (kernels only, CUDA events).
	EdgesPerSecond float64 `json:"edges_per_second"`
	Shape          string  `json:"shape"`
}

var (
	gpuMu         sync.Mutex
	gpuCalibrator func(partitionBytes int64, h realrun.Hyper, rows int64) (GPUCalibration, error)
)

// RegisterGPUCalibrator is called by the CUDA engine's package init.
func RegisterGPUCalibrator(f func(partitionBytes int64, h realrun.Hyper, rows int64) (GPUCalibration, error)) {
	gpuMu.Lock()
	defer gpuMu.Unlock()
	gpuCalibrator = f
}

// CalibrateGPU measures the GPU (pinned H2D and D2H bandwidth at partition
// size, its memory, the CUDA engine's training rate at shape h on
// partitions of rows rows). Without the CUDA engine in the build the error
// is a *realrun.EngineUnavailable.
func CalibrateGPU(partitionBytes int64, h realrun.Hyper, rows int64) (GPUCalibration, error) {
	gpuMu.Lock()
	f := gpuCalibrator
	gpuMu.Unlock()
	if f == nil {
		return GPUCalibration{}, &realrun.EngineUnavailable{Name: "cuda", Hint: "GPU calibration needs a build with -tags cuda (make build-cuda)"}
	}
	return f(partitionBytes, h, rows)
}

// Apply writes the measurement into a device profile: PCIe H2D/D2H, the
// GPU's name and memory, and its training rate folded into gpu.flops as the
// simulator's GPU batch cost counts it (batch construction and memory
// traffic set free, so that flops ÷ gpu.flops alone reproduces the measured
// edges per second at this shape; like the CPU's calibration, valid for
// this shape).
func (c GPUCalibration) Apply(p *devices.Profile, h realrun.Hyper) error {
	t := h.Training
	if err := t.Validate(); err != nil {
		return fmt.Errorf("gpu calibration shape: %w", err)
	}
	if !(c.EdgesPerSecond > 0 && c.H2D > 0 && c.D2H > 0) {
		return fmt.Errorf("gpu calibration: non-positive rate (edges/s %g, h2d %g, d2h %g)", c.EdgesPerSecond, c.H2D, c.D2H)
	}
	flops := t.BatchFLOPs(h.Batch) // FLOPs of one batch
	p.PCIe = devices.PCIe{H2D: devices.Bandwidth(c.H2D), D2H: devices.Bandwidth(c.D2H)}
	p.GPU = devices.GPU{Name: c.Name, Count: 1, Memory: devices.Bytes(c.MemoryBytes),
		FLOPS:    devices.FLOPRate(flops / float64(h.Batch) * c.EdgesPerSecond),
		MemoryBW: devices.Bandwidth(1e15), BatchEdges: devices.EdgeRate(1e15)}
	return nil
}

package cuda

import (
	"fmt"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/calibrate"
)

// EmulatedShape is the shape the emulated GPU is calibrated at, whatever
// shape `realrun calibrate` asks for (the run's shape would take the
// emulator hours): Dot, d=16, batches of 400 edges in chunks of 16 sharing
// 16 negatives, on two partitions of EmulatedRows rows, in buckets of at
// most 2,000 edges.
var EmulatedShape = struct {
	Dim, Batch, Negatives, Chunk      int
	Rows, PartitionBytes, BucketEdges int64
}{Dim: 16, Batch: 400, Negatives: 16, Chunk: 16, Rows: 1_000, PartitionBytes: 1 << 20, BucketEdges: 2_000}

// EmulatedMemory is the GPU memory the emulated calibration reports (the
// emulator allocates host memory and has no limit of its own; a device
// profile needs one).
const EmulatedMemory int64 = 16 << 30

// RegisterEmulated registers the engine on the emulated GPU (NewEmulated)
// as --engine cuda, and its calibration as the GPU calibrator. The
// emulator runs every kernel thread by thread in Go, thousands of times
// slower than a GPU: this is for tests and for standing in for a GPU where
// there is none (cmd/realrun with TIERFLOW_EMULATE_GPU=1 in the default
// build), never for measurements. A build with -tags cuda registers the
// real engine in its init (cuda.go); do not call this there.
func RegisterEmulated() {
	realrun.RegisterEngine("cuda", func(o realrun.EngineOptions) (realrun.Engine, error) { return NewEmulated(o) })
	calibrate.RegisterGPUCalibrator(CalibrateEmulated)
}

// CalibrateEmulated is Calibrate on the emulated GPU at EmulatedShape (the
// model of h kept), so that it takes seconds. Its training rate is scaled
// to h by the FLOPs per edge of the two shapes, so that the profile's
// gpu.flops (calibrate.GPUCalibration.Apply at h) is the emulator's
// measured FLOP rate; Shape says what was measured.
func CalibrateEmulated(partitionBytes int64, h realrun.Hyper, rows, bucketEdges int64) (calibrate.GPUCalibration, error) {
	s := EmulatedShape
	small := h
	small.Dim, small.Batch, small.Negatives, small.ChunkSize = s.Dim, s.Batch, s.Negatives, s.Chunk
	bucket := s.BucketEdges
	if bucketEdges > 0 {
		bucket = min(bucketEdges, bucket)
	}
	cal, err := Calibrate(func() (gpu, error) { return newEmu(), nil }, min(partitionBytes, s.PartitionBytes), small, min(rows, s.Rows), bucket)
	if err != nil {
		return cal, err
	}
	if big, tiny := h.BatchFLOPs(h.Batch)/float64(h.Batch), small.BatchFLOPs(small.Batch)/float64(small.Batch); big > 0 && tiny > 0 {
		cal.EdgesPerSecond *= tiny / big
		cal.HostEdgesPerSecond *= tiny / big
	}
	if cal.MemoryBytes == 0 { // the emulator has no memory of its own
		cal.MemoryBytes = EmulatedMemory
		cal.Name += fmt.Sprintf(", memory nominal %d GiB", EmulatedMemory>>30)
	}
	cal.Shape = fmt.Sprintf("emulated %s (rate scaled to d=%d negatives=%d by FLOPs per edge)", cal.Shape, h.Dim, h.Negatives)
	return cal, nil
}

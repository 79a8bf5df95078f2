package validate

import (
	"fmt"
	"strings"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
)

// ShapeFlags are the realrun flags that set the training shape a
// calibration measures the CPU engine at (devices.TrainShape): `realrun
// calibrate` takes them with realrun's defaults.
const ShapeFlags = "--dataset/--scale or --edges, --p, --model, --dim, --batch, --negatives, --chunk, --workers"

// Calibrate is `realrun calibrate`: this machine calibrated at the
// training shape realrun trains with options o (calibrate.Saved): the
// disk holding scratch with transfers of o's partition size (or
// fileBytes, when positive), the CPU engine on synthetic partitions of
// o's rows at o's shape, their interference, and the GPU where the build
// has one — with o.Engine cuda the disk and the GPU alone. The profile
// records the shape (cpu.train_shape), which --compare-sim --device checks
// against the run's (ShapeDifferences).
// Nothing is generated or trained.
func Calibrate(o job.Options, scratch string, fileBytes int64, name string) (calibrate.Calibration, error) {
	o.C = min(o.C, o.P) // calibrate has no --c; any valid plan will do
	cfg, err := job.Configure(o)
	if err != nil {
		return calibrate.Calibration{}, err
	}
	m, err := workdir.Layout(cfg.Spec)
	if err != nil {
		return calibrate.Calibration{}, err
	}
	if fileBytes > 0 {
		m.PartitionBytes = (fileBytes + store.Align - 1) / store.Align * store.Align
	}
	return calibrate.Saved(&store.Store{M: m}, cfg.Hyper, scratch, name, o.Engine == "cuda")
}

// ShapeDifferences says how a run's training shape differs from the one
// a profile's cpu.train was measured at: nil when they agree, one entry
// per differing field otherwise, or one entry saying that the profile
// records no shape.
func ShapeDifferences(prof devices.Profile, run devices.TrainShape) []string {
	if prof.CPU.TrainShape == nil {
		return []string{"no training shape recorded"}
	}
	return prof.CPU.TrainShape.Differences(run)
}

// shapeNote is the one line --compare-sim --device prints when the
// profile's cpu.train was not measured at the run's shape ("" when it
// was).
func shapeNote(devicePath string, prof devices.Profile, run devices.TrainShape) string {
	diffs := ShapeDifferences(prof, run)
	if len(diffs) == 0 {
		return ""
	}
	fix := "measure this shape with realrun calibrate and this run's " + ShapeFlags + ", or leave --device out to calibrate now"
	if prof.CPU.TrainShape == nil {
		return fmt.Sprintf("--device %s: cpu.train records no training shape (a preset, or a calibration before shapes were recorded), so the compute prediction is not for this run's shape (%s); %s", devicePath, run, fix)
	}
	return fmt.Sprintf("--device %s: cpu.train was measured at %s; this run differs: %s; the compute prediction carries that rate over; %s", devicePath, prof.CPU.TrainShape, strings.Join(diffs, ", "), fix)
}

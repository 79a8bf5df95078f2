package validate

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
)

// ShapeFields name the fields of job.Options ({Field}, as a command
// renders them with its flags) that set the training shape a calibration
// measures the CPU engine at (devices.TrainShape): `realrun calibrate`
// takes them with realrun's defaults.
const ShapeFields = "{Dataset}/{Scale} or {Edges}, {P}, {Model}, {Dim}, {Batch}, {Negatives}, {Chunk}, {Workers}"

// Calibrate is `realrun calibrate`: this machine calibrated at the
// training shape realrun trains with options o (calibrate.Saved): the
// disk holding scratch with transfers of o's partition size (or
// fileBytes, when positive), the CPU engine at o's shape on the graph's
// own buckets and partitions, their interference, and the GPU where the
// build has one — with o.Engine cuda the disk and the GPU alone. The
// graph's work directory is the run's: used as it is when it holds o's
// data and layout, built now for a generated dataset when it does not
// exist yet (the run then reuses it), and never trained or changed
// otherwise; with none to use (a directory holding other data) the
// engine trains synthetic buckets of the run's rows, which log says.
// The profile records the shape (cpu.train_shape), which --compare-sim
// --device checks against the run's (ShapeDifferences). With probe > 0
// the calibration is completed by probes of the run's orderings (Probe:
// that share of each Plan's buckets run by the CPU engine on the work
// directory, not committed), which need the graph's work directory.
func Calibrate(o job.Options, scratch string, fileBytes int64, name string, probe float64, log io.Writer) (calibrate.Calibration, error) {
	if probe < 0 || probe > 1 {
		return calibrate.Calibration{}, inputerr.Errorf("a probe's share of the buckets is %g, want (0, 1]", probe)
	}
	if probe > 0 && o.Engine == "cuda" {
		return calibrate.Calibration{}, inputerr.Errorf("probes run the CPU engine: not for a calibration of the CUDA engine")
	}
	o.C = min(o.C, o.P) // calibrate has no --c; any valid plan will do
	cfg, err := job.Configure(o)
	if err != nil {
		return calibrate.Calibration{}, err
	}
	m, err := workdir.Layout(cfg.Spec)
	if err != nil {
		return calibrate.Calibration{}, err
	}
	st := &store.Store{M: m}
	if o.Engine != "cuda" {
		unlock, err := workdir.LockWorkdir(cfg.Spec.Workdir)
		if err != nil {
			return calibrate.Calibration{}, inputerr.Errorf("{Workdir}: %w", err)
		}
		defer unlock()
		built, err := workdir.Built(cfg.Spec)
		switch {
		case err != nil:
			return calibrate.Calibration{}, err
		case built != nil:
			st = built
		case cfg.Spec.Edges == "" && !store.IsWorkdir(cfg.Spec.Workdir):
			fmt.Fprintf(log, "building the run's work directory %s, to measure the engine on the graph's own buckets (the run reuses it)…\n", cfg.Spec.Workdir)
			spec := cfg.Spec
			spec.Copies = 1 // the initial partitions; the run checks its own checkpoints' room
			if st, err = workdir.Prepare(spec); err != nil {
				return calibrate.Calibration{}, err
			}
		default:
			fmt.Fprintf(log, "%s holds other data or another layout: the engine is measured on synthetic buckets of the run's %d rows, whose uniform endpoints miss the caches more than a real graph's\n", cfg.Spec.Workdir, m.Rows)
		}
	}
	if fileBytes > 0 {
		fileBytes = (fileBytes + store.Align - 1) / store.Align * store.Align
	}
	if probe > 0 && (st.Dir == "" || !store.IsWorkdir(st.Dir)) {
		return calibrate.Calibration{}, inputerr.Errorf("probes run the first buckets of the run's Plans on its work directory, and %s is not one with the run's data", cfg.Spec.Workdir)
	}
	cal, err := calibrate.Saved(st, cfg.Hyper, scratch, name, o.Engine == "cuda", fileBytes)
	if err != nil || o.Engine == "cuda" {
		return cal, err
	}
	if err := cal.AddOrderings(st, cfg.Hyper, cfg.Plans, o.Epochs, scratch); err != nil || probe == 0 {
		return cal, err
	}
	fmt.Fprintf(log, "probing: the first %.0f%% of each ordering's buckets, run by the engine on %s (not committed)…\n", 100*probe, st.Dir)
	prof, res, err := Probe(st, cfg.Plans, cfg.Hyper, cal.Profile, ProbeOptions{Fraction: probe, Seed: o.Seed, Prefetch: !o.NoPrefetch})
	if err != nil {
		return cal, err
	}
	cal.Profile, cal.Probe = prof, &res
	cal.Took.Total += res.Seconds
	return cal, nil
}

// OrderingsLine says the engine's rate on each ordering's own bucket
// sequence beside its rate on the bench's two buckets ("" when none was
// measured): "the engine on each ordering's own bucket sequence, against
// 1059k edges/s on the bench's buckets: beta 0.70× (742k edges/s, beside
// the bench's 1060k in its turns), hilbert …".
func OrderingsLine(cal calibrate.Calibration) string {
	if len(cal.Orderings) == 0 || cal.Compute == nil || cal.Compute.Edges <= 0 {
		return ""
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(cal.Orderings)) {
		r := cal.Orderings[name]
		beside := ""
		if r.Reference > 0 {
			beside = fmt.Sprintf(", beside the bench's %.0fk in its turns", r.Reference/1e3)
		}
		if r.Own > 0 {
			beside += fmt.Sprintf("; its own %.2f×, not told apart from the others'", r.Own)
		}
		parts = append(parts, fmt.Sprintf("%s %.2f× (%.0fk edges/s%s)", name, cal.OrderingRatio(name), r.Edges/1e3, beside))
	}
	return fmt.Sprintf("the engine on each ordering's own bucket sequence, against %.0fk edges/s on the bench's buckets: %s; each ordering is predicted at its ratio times the bench's rate", cal.Compute.Edges/1e3, strings.Join(parts, ", "))
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
// was), naming the fields the command renders ({Device}).
func shapeNote(devicePath string, prof devices.Profile, run devices.TrainShape) string {
	diffs := ShapeDifferences(prof, run)
	if len(diffs) == 0 {
		return ""
	}
	fix := "measure this shape with realrun calibrate and this run's " + ShapeFields + ", or leave {Device} out to calibrate now"
	if prof.CPU.TrainShape == nil {
		return fmt.Sprintf("{Device} %s: cpu.train records no training shape (a preset, or a calibration before shapes were recorded), so the compute prediction is not for this run's shape (%s); %s", devicePath, run, fix)
	}
	return fmt.Sprintf("{Device} %s: cpu.train was measured at %s; this run differs: %s; the compute prediction carries that rate over; %s", devicePath, prof.CPU.TrainShape, strings.Join(diffs, ", "), fix)
}

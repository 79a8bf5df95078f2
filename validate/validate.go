// Package validate is the one bridge between the simulator and the real
// engine: it takes Plans, runs them with the engine, predicts them with
// the simulator's model of that engine on a calibrated profile, and
// compares the two field by field (realrun --compare-sim, the validation
// experiments).
package validate

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"time"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/diskcap"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

// Comparison is one ordering run for real and simulated on the same Plan.
type Comparison struct {
	Ordering      string               `json:"ordering"`
	Measured      report.Report        `json:"measured"`
	Predicted     report.Report        `json:"predicted"`
	RelativeError report.RelativeError `json:"relative_error"`
	// CountsMatch is true when the measured loads, swaps, writes and bytes
	// equal the prediction's (the Plan's).
	CountsMatch bool `json:"counts_match"`
	// Disk and Checksum are the disk figures and checksum rate the
	// prediction used: with CompareOptions.DiskScratch, the mean of the
	// measurements just before and just after the run (DiskBefore,
	// DiskAfter), else the profile's.
	Disk     devices.Disk      `json:"disk"`
	Checksum devices.Bandwidth `json:"checksum_bytes_per_s"`
	// DiskBefore and DiskAfter are the disk measured just before and just
	// after the run (CompareOptions.DiskScratch); DiskDrift is how far
	// they differ, the larger relative change of the read and the write
	// rate (0.2: one of them moved by 20%): a prediction cannot be closer
	// than the disk held still.
	DiskBefore *devices.Disk `json:"disk_before,omitempty"`
	DiskAfter  *devices.Disk `json:"disk_after,omitempty"`
	DiskDrift  float64       `json:"disk_drift"`
	// MeasuredTrace and PredictedTrace are the run and its prediction as
	// timelines (CompareOptions.Trace).
	MeasuredTrace, PredictedTrace *report.Trace `json:"-"`
	// Decomposed (CompareOptions.Decompose) splits the prediction's error
	// into the disk's and the model's.
	Decomposed *Decomposition `json:"decomposed,omitempty"`
	// PredictedLow and PredictedHigh are the predicted epoch's range over
	// the profile's measured spread (sim.RunRange on the profile the
	// prediction used, the spread carried over to any rate measured again
	// around the run: devices.Profile.CarrySpread), and InRange whether the
	// measured epoch lies within it. All three are absent when the profile
	// has no spread (InRange is absent, too, when the epoch is outside).
	PredictedLow  float64 `json:"predicted_epoch_seconds_low,omitempty"`
	PredictedHigh float64 `json:"predicted_epoch_seconds_high,omitempty"`
	InRange       bool    `json:"in_range,omitempty"`
}

// PredictedRange is the predicted epoch's range (zero without a spread).
func (c Comparison) PredictedRange() sim.EpochRange {
	return sim.EpochRange{Low: c.PredictedLow, High: c.PredictedHigh}
}

// setRange records the predicted range r and whether the measured epoch
// lies within it.
func (c *Comparison) setRange(r sim.EpochRange) {
	c.PredictedLow, c.PredictedHigh = r.Low, r.High
	c.InRange = r.Has() && r.Contains(c.Measured.EpochSeconds)
}

// Decomposition is one run predicted three ways, to tell how much of the
// error comes from the disk figures and how much from the model's logic:
// with the calibration made before the runs (Calibrated), with the disk
// measured just before and after the run (the Comparison's Predicted),
// and with the disk as it ran (AsRan): the disk's rates scaled, per
// direction, by how much faster the run's own transfers moved than the
// prediction's. A prediction close to the measurement with the disk as it
// ran, and far from it with the disk measured around the run, says the
// disk changed speed between the measurements and the run, not that the
// model's schedule, overlap or sharing is wrong.
type Decomposition struct {
	CalibratedSeconds float64 `json:"calibrated_epoch_seconds"`
	// CalibratedLow and CalibratedHigh are the range of the prediction
	// with the profile as given over its measured spread (zero without
	// one), InCalibratedRange whether the measured epoch lies within it.
	CalibratedLow     float64 `json:"calibrated_epoch_seconds_low,omitempty"`
	CalibratedHigh    float64 `json:"calibrated_epoch_seconds_high,omitempty"`
	InCalibratedRange bool    `json:"in_calibrated_range,omitempty"`
	// ReadRatio and WriteRatio are the run's transfer rates over the
	// prediction's: bytes over the time the engine's loads (less their
	// checksum) and writes were in flight, against bytes over the
	// simulated disk's busy time in that direction.
	ReadRatio    float64      `json:"read_rate_ratio"`
	WriteRatio   float64      `json:"write_rate_ratio"`
	AsRanDisk    devices.Disk `json:"as_ran_disk"`
	AsRanSeconds float64      `json:"as_ran_epoch_seconds"`
	// EngineRatio is the run's compute rate over the prediction's: the
	// predicted compute seconds over the measured (both with the
	// interference of I/O, which the model adds where the two overlap;
	// 1.3: the engine trained 1.3× as fast as the profile says).
	// AsRanEngineSeconds is the run predicted with the engine's rates
	// scaled by it (the disk as the Comparison's prediction had it), and
	// AsRanAllSeconds with both the disk and the engine as they ran: the
	// engine's rates scaled by the measured compute against the compute
	// predicted with the disk as it ran (AsRanSeconds' prediction), whose
	// transfers, and so the interference they add to training, are the
	// run's, not the calibration's.
	EngineRatio        float64 `json:"engine_rate_ratio"`
	AsRanEngineSeconds float64 `json:"as_ran_engine_epoch_seconds"`
	AsRanAllSeconds    float64 `json:"as_ran_all_epoch_seconds"`
}

// scaleCompute is prof with every rate the engine computes at r times as
// fast (devices.Profile.ScaleCompute), or prof itself when r is not a
// positive number.
func scaleCompute(prof devices.Profile, r float64) devices.Profile {
	if r <= 0 || math.IsInf(r, 0) || math.IsNaN(r) {
		return prof
	}
	return prof.ScaleCompute(r)
}

// transferRatios are the measured run's read and write rates over the
// prediction's (Decomposition.ReadRatio, WriteRatio); 0 where a side moved
// nothing.
func transferRatios(measured, predicted report.Report, checksum devices.Bandwidth) (read, write float64) {
	busy := func(r report.Report, name string) float64 {
		for _, u := range r.Resources {
			if u.Name == name {
				return u.BusySeconds
			}
		}
		return 0
	}
	ratio := func(bytes int64, mBusy, pBusy float64) float64 {
		if bytes <= 0 || mBusy <= 0 || pBusy <= 0 {
			return 0
		}
		return pBusy / mBusy // the same bytes: the rate ratio is the busy ratio inverted
	}
	mRead := busy(measured, report.DiskRead)
	if checksum > 0 { // a measured load's span includes the loader's checksum check
		mRead -= float64(measured.ReadBytes) / float64(checksum)
	}
	return ratio(measured.ReadBytes, mRead, busy(predicted, report.DiskRead)),
		ratio(measured.WriteBytes, busy(measured, report.DiskWrite), busy(predicted, report.DiskWrite))
}

// scaleDisk is d with its reads r times and its writes w times as fast,
// the combined rate by the bytes' mix; a zero ratio leaves a side as is.
func scaleDisk(d devices.Disk, r, w float64, readBytes, writeBytes int64) devices.Disk {
	if r <= 0 {
		r = 1
	}
	if w <= 0 {
		w = 1
	}
	d.Read = devices.Bandwidth(float64(d.Read) * r)
	d.Write = devices.Bandwidth(float64(d.Write) * w)
	if tot := readBytes + writeBytes; tot > 0 && d.Combined > 0 {
		c := float64(d.Combined) * (float64(readBytes)*r + float64(writeBytes)*w) / float64(tot)
		// A combined rate lies between the faster side alone and the sum.
		c = min(max(c, float64(max(d.Read, d.Write))), float64(d.Read+d.Write))
		d.Combined = devices.Bandwidth(c)
	}
	return d
}

// diskDrift is the larger relative change of the read and the write rate
// from a to b.
func diskDrift(a, b devices.Disk) float64 {
	rel := func(x, y devices.Bandwidth) float64 {
		if x <= 0 {
			return 0
		}
		return math.Abs(float64(y)/float64(x) - 1)
	}
	return math.Max(rel(a.Read, b.Read), rel(a.Write, b.Write))
}

// Predict simulates a measured run's Plan with the realrun system model on
// a calibrated profile, with the work directory's real bucket sizes and
// partition size. It uses nothing of the measurement but its inputs.
func Predict(st *store.Store, plan *orderings.Plan, h realrun.Hyper, prefetch bool, prof devices.Profile) (report.Report, error) {
	return predict(st, plan, h, Engine{}, prefetch, prof, false)
}

// PredictRange is Predict with the range of the epoch over prof's
// measured spread (lo, hi: zero without one).
func PredictRange(st *store.Store, plan *orderings.Plan, h realrun.Hyper, prefetch bool, prof devices.Profile) (rep report.Report, lo, hi float64, err error) {
	if rep, err = predict(st, plan, h, Engine{}, prefetch, prof, false); err != nil {
		return rep, 0, 0, err
	}
	r, err := predictRange(st, plan, h, Engine{}, prefetch, prof)
	return rep, r.Low, r.High, err
}

// Engine is the engine a comparison runs: Name "" or "cpu", or "cuda"
// with its buffer mode (TF32 math, like the shape, is in the Hyper).
type Engine struct{ Name, Buffer string }

// System is the simulator's model of the engine: realrun (the CPU
// engine), realrun-cuda (--buffer gpu) or realrun-cuda-host.
func (e Engine) System() string {
	switch {
	case e.Name != "cuda":
		return "realrun"
	case e.Buffer == realrun.BufferHost:
		return "realrun-cuda-host"
	}
	return "realrun-cuda"
}

// predict is Predict for engine eng, recording the prediction's timeline
// when trace. It predicts with prof's rates as given: a spread plays no
// part (predictRange gives the range it allows).
func predict(st *store.Store, plan *orderings.Plan, h realrun.Hyper, eng Engine, prefetch bool, prof devices.Profile, trace bool) (report.Report, error) {
	prof.ClearSpread() // rates scaled away from their measurements (decompose) leave it behind
	cfg, err := predictConfig(st, plan, h, eng, prefetch, prof, trace)
	if err != nil {
		return report.Report{}, err
	}
	return sim.Run(cfg)
}

// predictRange is the range of predict's epoch over prof's measured
// spread (sim.RunRange); zero when prof has none.
func predictRange(st *store.Store, plan *orderings.Plan, h realrun.Hyper, eng Engine, prefetch bool, prof devices.Profile) (sim.EpochRange, error) {
	if !prof.HasSpread() {
		return sim.EpochRange{}, nil
	}
	cfg, err := predictConfig(st, plan, h, eng, prefetch, prof, false)
	if err != nil {
		return sim.EpochRange{}, err
	}
	_, r, err := sim.RunRange(cfg)
	return r, err
}

// predictConfig is the simulation predict runs: the engine's system
// model, the work directory's buckets and partition size, the run's shape.
func predictConfig(st *store.Store, plan *orderings.Plan, h realrun.Hyper, eng Engine, prefetch bool, prof devices.Profile, trace bool) (sim.Config, error) {
	sys, err := sim.LookupSystem(eng.System())
	if err != nil {
		return sim.Config{}, err
	}
	sys.Prefetch = prefetch
	prof.CPU.Workers = h.Workers
	edges := make([]int64, 0, st.M.P*st.M.P)
	for _, row := range st.M.Buckets {
		edges = append(edges, row...)
	}
	ds := workload.Dataset{Name: st.M.Source, Nodes: st.M.Nodes, Edges: st.M.Train, Relations: st.M.Relations, TrainFraction: 1, Model: workload.Model(h.Model),
		ResidentNodes: st.M.Resident}
	cfg := sim.Config{
		System:  sys,
		Profile: prof,
		Dataset: ds,
		// The run's training shape whole; TestPredictConfigTakesEveryField
		// says where each of the Hyper's other fields goes.
		Training:       h.Training,
		Plan:           plan,
		BucketEdges:    edges,
		PartitionBytes: st.M.PartitionBytes,
		ResidentBytes:  residentFileBytes(sys, ds, h.Dim),
		Trace:          trace,
	}
	// The engine micro-batches only when asked: a fixed count is
	// predicted as such, a memory budget by the model's own fit, and no
	// micro-batching as whole batches.
	cfg.MicroBatches = h.Micro.Count
	cfg.NoMicroBatching = !h.Micro.On()
	return cfg, nil
}

// residentFileBytes is the size of a typed work directory's resident.bin,
// which the engine reads once an epoch and writes once (and with every
// checkpoint): the simulator's resident table (ResidentTableBytes) padded
// to the store's I/O alignment like a partition file (store.Manifest's
// ResidentBytes); 0 without resident nodes.
func residentFileBytes(sys sim.System, ds workload.Dataset, dim int) int64 {
	n := sys.ResidentTableBytes(ds, dim)
	return (n + store.Align - 1) / store.Align * store.Align
}

// Decompose is a measured run's Decomposition, made again from its
// records: measured is the run's report, pred the prediction prof gave it
// (prefetching as the run did, the CPU engine), so that a saved
// comparison can be read with the engine's and the disk's rates as they
// ran.
func Decompose(st *store.Store, plan *orderings.Plan, h realrun.Hyper, prefetch bool, prof devices.Profile, measured, pred report.Report) (*Decomposition, error) {
	return decompose(st, plan, h, CompareOptions{Prefetch: prefetch}, prof, prof, measured, pred)
}

// decompose predicts the run with the profile as given (given, held to the
// run's limit) and with used's disk scaled to the run's own transfer rates
// (Decomposition).
func decompose(st *store.Store, plan *orderings.Plan, h realrun.Hyper, opt CompareOptions, given, used devices.Profile, measured, pred report.Report) (*Decomposition, error) {
	given.Disk = opt.DiskLimit.Hold(given.Disk)
	cal, err := predict(st, plan, h, opt.Engine, opt.Prefetch, given, false)
	if err != nil {
		return nil, err
	}
	d := &Decomposition{CalibratedSeconds: cal.EpochSeconds}
	r, err := predictRange(st, plan, h, opt.Engine, opt.Prefetch, given)
	if err != nil {
		return nil, err
	}
	d.CalibratedLow, d.CalibratedHigh = r.Low, r.High
	d.InCalibratedRange = r.Has() && r.Contains(measured.EpochSeconds)
	d.ReadRatio, d.WriteRatio = transferRatios(measured, pred, used.CPU.Checksum)
	asRan := used
	asRan.Disk = scaleDisk(used.Disk, d.ReadRatio, d.WriteRatio, measured.ReadBytes, measured.WriteBytes)
	ran, err := predict(st, plan, h, opt.Engine, opt.Prefetch, asRan, false)
	if err != nil {
		return nil, err
	}
	d.AsRanDisk, d.AsRanSeconds = asRan.Disk, ran.EpochSeconds
	if measured.ComputeSeconds > 0 && pred.ComputeSeconds > 0 {
		d.EngineRatio = pred.ComputeSeconds / measured.ComputeSeconds
		eng, err := predict(st, plan, h, opt.Engine, opt.Prefetch, scaleCompute(used, d.EngineRatio), false)
		if err != nil {
			return nil, err
		}
		all, err := predict(st, plan, h, opt.Engine, opt.Prefetch, scaleCompute(asRan, ran.ComputeSeconds/measured.ComputeSeconds), false)
		if err != nil {
			return nil, err
		}
		d.AsRanEngineSeconds, d.AsRanAllSeconds = eng.EpochSeconds, all.EpochSeconds
	}
	return d, nil
}

// Compare pairs a measurement with its prediction and checks the counts:
// the loads, swaps and writes the engine performed must be the Plan's.
func Compare(measured, predicted report.Report) Comparison {
	c := Comparison{Ordering: measured.Ordering, Measured: measured, Predicted: predicted, RelativeError: predicted.Errors(measured)}
	c.CountsMatch = measured.Counts == predicted.Counts && measured.ReadBytes == predicted.ReadBytes && measured.WriteBytes == predicted.WriteBytes
	return c
}

// CompareOptions say how to measure a Plan for a comparison: epochs per
// run, runs (the median epoch is kept: the machine is shared and noisy),
// prefetch, the seed, and where progress goes.
type CompareOptions struct {
	Epochs, Repeats int
	Prefetch        bool
	Seed            int64
	Progress        realrun.Progress
	// DiskScratch, when set, is where the disk (and the checksum rate) is
	// measured again just before and just after each run, which is then
	// predicted with the mean of the two: a shared machine's virtual disk
	// drifts by tens of percent within a minute. The rest of the profile
	// is kept.
	DiskScratch string
	// Trace records the kept run and its prediction as timelines.
	Trace bool
	// Engine is the engine that trains (zero: the CPU engine).
	Engine Engine
	// DiskLimit is the kernel limit the run's disk I/O is held to
	// (job.Options.DiskLimit): the measurement records it and the
	// prediction's disk read and write are min(profile, limit). Disk
	// measurements (DiskScratch) run inside the same limit.
	DiskLimit diskcap.Limits
	// Decompose predicts the kept run twice more (Comparison.Decomposed):
	// with the profile as given and with the disk as it ran.
	Decompose bool
}

// RunAndCompare trains plan for real from freshly initialised partitions
// (opt.Repeats times, opt.Epochs epochs each), keeps the run whose last
// epoch is the median, simulates the same Plan on prof (its disk and
// checksum rate, when opt.DiskScratch is set, the mean of measurements
// just before and just after that run: calibrate.MeanDisk) with the realrun system
// model and compares the two. It returns
// the kept epoch too.
func RunAndCompare(st *store.Store, plan *orderings.Plan, h realrun.Hyper, prof devices.Profile, opt CompareOptions) (Comparison, realrun.Epoch, error) {
	degrees, err := st.Degrees()
	if err != nil {
		return Comparison{}, realrun.Epoch{}, err
	}
	type run struct {
		ep            realrun.Epoch
		prof          devices.Profile
		before, after *devices.Disk
	}
	measure := func(when string) (calibrate.Calibration, error) {
		cal, err := calibrate.Disk(st, h, opt.DiskScratch)
		if err != nil {
			return cal, fmt.Errorf("%s: disk calibration %s the run: %w", plan.Ordering, when, err)
		}
		return cal, nil
	}
	var runs []run
	for rep := 0; rep < max(opt.Repeats, 1); rep++ {
		if err := st.InitPartitions(opt.Seed, workdir.InitScale); err != nil {
			return Comparison{}, realrun.Epoch{}, err
		}
		var before calibrate.Calibration
		if opt.DiskScratch != "" {
			if before, err = measure("before"); err != nil {
				return Comparison{}, realrun.Epoch{}, err
			}
		}
		// Under a kernel limit the initialisation's writes have just
		// spent the group's allowance; the model starts every run in a
		// fresh slice (devices.Throttle), which the kernel begins once a
		// slice has passed idle: wait two.
		time.Sleep(2 * opt.DiskLimit.Window)
		eng, err := realrun.NewEngine(realrun.EngineOptions{Engine: opt.Engine.Name, Buffer: opt.Engine.Buffer,
			Hyper: h, Store: st, Degrees: degrees, Seed: opt.Seed, C: plan.C})
		if err != nil {
			return Comparison{}, realrun.Epoch{}, err
		}
		var last realrun.Epoch
		for e := 1; e <= max(opt.Epochs, 1); e++ {
			if last, err = realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Prefetch: opt.Prefetch, Seed: opt.Seed, Epoch: e, Progress: opt.Progress}); err != nil {
				return Comparison{}, realrun.Epoch{}, fmt.Errorf("%s: %w", plan.Ordering, err)
			}
		}
		r := run{ep: last, prof: prof}
		if opt.DiskScratch != "" {
			after, err := measure("after")
			if err != nil {
				return Comparison{}, realrun.Epoch{}, err
			}
			mean := calibrate.MeanDisk(before, after)
			b, a := before.Disk(), after.Disk()
			r.before, r.after = &b, &a
			r.prof.Disk, r.prof.CPU.Checksum = mean.Disk(), devices.Bandwidth(mean.ChecksumBW)
		}
		r.prof.Disk = opt.DiskLimit.Hold(r.prof.Disk)
		r.ep.DiskReadLimit, r.ep.DiskWriteLimit = float64(opt.DiskLimit.Read), float64(opt.DiskLimit.Write)
		runs = append(runs, r)
	}
	sort.Slice(runs, func(a, b int) bool { return runs[a].ep.EpochSeconds < runs[b].ep.EpochSeconds })
	kept := runs[len(runs)/2]
	pred, err := predict(st, plan, h, opt.Engine, opt.Prefetch, kept.prof, opt.Trace)
	if err != nil {
		return Comparison{}, realrun.Epoch{}, err
	}
	cmp := Compare(kept.ep.Report, pred)
	rng, err := predictRange(st, plan, h, opt.Engine, opt.Prefetch, kept.prof.CarrySpread(prof))
	if err != nil {
		return Comparison{}, realrun.Epoch{}, err
	}
	cmp.setRange(rng)
	if opt.Trace {
		measured := kept.ep.Trace(plan)
		cmp.MeasuredTrace, cmp.PredictedTrace = &measured, pred.Trace
	}
	cmp.Disk, cmp.Checksum = kept.prof.Disk, kept.prof.CPU.Checksum
	if opt.Decompose {
		if cmp.Decomposed, err = decompose(st, plan, h, opt, prof, kept.prof, kept.ep.Report, pred); err != nil {
			return Comparison{}, realrun.Epoch{}, err
		}
	}
	if kept.before != nil {
		cmp.DiskBefore, cmp.DiskAfter, cmp.DiskDrift = kept.before, kept.after, diskDrift(*kept.before, *kept.after)
	}
	return cmp, kept.ep, nil
}

// DriftNotice is the disk drift (Comparison.DiskDrift) above which
// CompareOrderings says so beside the comparison.
const DriftNotice = 0.10

// CompareOutput is the answer of CompareOrderings (what realrun
// --compare-sim prints with --json).
type CompareOutput struct {
	Device  string       `json:"device"`
	Results []Comparison `json:"results"`
	// Skipped are the orderings not defined for (p, c), with the reason.
	Skipped []orderings.Skipped `json:"skipped"`
	// ShapeDifferences (with --device, the CPU engine) say how the run's
	// training shape differs from the one the profile's cpu.train was
	// measured at (ShapeDifferences); absent when they agree.
	ShapeDifferences []string `json:"device_shape_differences,omitempty"`
}

// CompareSim is realrun --compare-sim: it trains each Plan job.Configure
// gives for o (the list o.Repeats times, interleaved) — the saved Plan (--plan), --ordering's, or each of
// o.Orderings defined at (p, c) — for real on one work directory, its
// partitions re-initialised before each, simulates the same Plan with the
// realrun system model on the device profile at devicePath (or, when that
// is "", on a calibration of this machine at the run's own shape) and
// compares the two. Orderings not defined for (p, c) are listed as
// skipped with the reason, as simulate lists them. Notices go to log,
// naming the fields they are about ({Device}) as errors do: the command
// renders them with its flags.
func CompareSim(o job.Options, devicePath string, progress realrun.Progress, log io.Writer) (out CompareOutput, err error) {
	out = CompareOutput{Skipped: []orderings.Skipped{}}
	if err := realrun.CheckEngine(o.Engine, o.Buffer); err != nil {
		return out, &inputerr.Error{Err: err}
	}
	eng := Engine{Name: o.Engine, Buffer: o.Buffer}
	cfg, err := job.Configure(o)
	if err != nil {
		return out, err
	}
	if cfg.Skipped != nil {
		out.Skipped = cfg.Skipped
	}
	spec, h := cfg.Spec, cfg.Hyper
	var prof devices.Profile
	if devicePath != "" { // before any work: a bad device file costs nothing
		if prof, err = devices.Load(devicePath); err != nil {
			return out, inputerr.Errorf("{Device}: %w", err)
		}
		if _, ok := prof.CPU.Train.For(string(h.Model)); eng.Name != "cuda" && !ok {
			return out, inputerr.Errorf("{Device} %s: no cpu.train.%s cost to predict this run's compute with; measure it with realrun calibrate and this run's training flags (%s), or leave {Device} out to calibrate now", devicePath, h.Model, ShapeFields)
		}
		if eng.Name == "cuda" && prof.GPU.Count < 1 {
			return out, inputerr.Errorf("{Device} %s: no GPU in the profile; calibrate it with the cuda engine linked (realrun calibrate from a make build-cuda binary on the GPU machine) or leave {Device} out to calibrate now", devicePath)
		}
	}
	unlock, err := workdir.LockWorkdir(spec.Workdir)
	if err != nil {
		return out, inputerr.Errorf("{Workdir}: %w", err)
	}
	defer unlock()
	// Every run starts from freshly initialised partitions: a checkpoint
	// in the work directory is refused, not overwritten, unless asked.
	st, _, err := workdir.Start(spec, workdir.Use{Overwrite: o.Overwrite, Settings: cfg.Settings, Keep: cfg.Keep}, log)
	if err != nil {
		return out, err
	}
	// The runs are measurements, not training to keep: the directory is
	// left with its initial partitions, so that it holds no checkpoint a
	// later run would have to refuse.
	defer func() {
		if rerr := st.InitPartitions(spec.Seed, workdir.InitScale); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if devicePath == "" {
		if prof, err = calibrated(st, h, cfg.Plans, o.Epochs, eng, log); err != nil {
			return out, err
		}
	} else if eng.Name != "cuda" {
		run := calibrate.ShapeOf(h, st.M.Rows)
		out.ShapeDifferences = ShapeDifferences(prof, run)
		if note := shapeNote(devicePath, prof, run); note != "" {
			fmt.Fprintln(log, note)
		}
	}
	out.Device = prof.Name
	opt := CompareOptions{Epochs: o.Epochs, Repeats: 1, Prefetch: !o.NoPrefetch, Seed: spec.Seed, Progress: progress, Trace: o.Trace, Engine: eng, DiskLimit: o.DiskLimit, Decompose: true}
	if devicePath == "" {
		opt.DiskScratch = filepath.Dir(st.Dir)
	}
	err = Interleaved(st, cfg.Plans, h, prof, opt, max(o.Repeats, 1), nil, func(_, _ int, cmp Comparison, _ realrun.Epoch) error {
		if cmp.DiskDrift > DriftNotice {
			b, a := cmp.DiskBefore, cmp.DiskAfter
			fmt.Fprintf(log, "%s: the disk drifted by %.0f%% during the run (read %.0f → %.0f MB/s, write %.0f → %.0f MB/s, before → after); it is predicted with the mean, and where the run is data-bound the prediction cannot be closer than the disk held still\n",
				cmp.Ordering, 100*cmp.DiskDrift, float64(b.Read)/1e6, float64(a.Read)/1e6, float64(b.Write)/1e6, float64(a.Write)/1e6)
		}
		if note := engineNote(cmp, prof, h); note != "" {
			fmt.Fprintln(log, note)
		}
		if note := asRanNote(cmp); note != "" {
			fmt.Fprintln(log, note)
		}
		out.Results = append(out.Results, cmp)
		return nil
	})
	return out, err
}

// Interleaved is the one way the bridge repeats comparisons (realrun
// --compare-sim --repeats, the validation experiments): every Plan is run
// and compared (RunAndCompare) repeats times, interleaved — each Plan
// once, then each again, … — so that drift of the machine hits every
// Plan alike. Before each round, round (when set) gives the profile that
// round's runs are predicted with (a disk measured again); each sees
// every run as it ends, by round and Plan index.
func Interleaved(st *store.Store, plans []*orderings.Plan, h realrun.Hyper, prof devices.Profile, opt CompareOptions, repeats int,
	round func(rep int) (devices.Profile, error), each func(rep, i int, cmp Comparison, ep realrun.Epoch) error) error {
	for rep := 0; rep < repeats; rep++ {
		rp := prof
		if round != nil {
			var err error
			if rp, err = round(rep); err != nil {
				return err
			}
		}
		for i, pl := range plans {
			cmp, ep, err := RunAndCompare(st, pl, h, rp, opt)
			if err != nil {
				return err
			}
			if err := each(rep, i, cmp, ep); err != nil {
				return err
			}
		}
	}
	return nil
}

// engineNote says which engine rate predicted the run and how far the
// run's own moved from it (Decomposition.EngineRatio): "beta: predicted
// with the profile's engine rate, 419k edges/s; the run trained at 1.05×
// that". "" without a decomposition or an edge rate (the CUDA engine's
// are the GPU's).
func engineNote(cmp Comparison, prof devices.Profile, h realrun.Hyper) string {
	d := cmp.Decomposed
	own, scaled := prof.ForOrdering(cmp.Ordering, string(h.Model))
	tc, ok := own.CPU.Train.For(string(h.Model))
	if d == nil || d.EngineRatio <= 0 || !ok || tc.Edges <= 0 {
		return ""
	}
	which := "the profile's engine rate"
	if scaled {
		which = "the engine's rate on its own bucket sequence"
	}
	return fmt.Sprintf("%s: predicted with "+which+", %.0fk edges/s; the run's compute took %.1f s against %.1f s predicted: it trained at %.2f× that rate",
		cmp.Ordering, float64(tc.Edges)/1e3, cmp.Measured.ComputeSeconds, cmp.Predicted.ComputeSeconds, d.EngineRatio)
}

// asRanNote says, for a prediction off by more than DriftNotice, what
// explains it (Decomposition): the disk's speed during the run, the
// engine's, both, or neither (the model's logic); "" when the prediction
// is close or was not decomposed.
func asRanNote(cmp Comparison) string {
	d, m := cmp.Decomposed, cmp.Measured.EpochSeconds
	e := cmp.RelativeError.EpochSeconds
	if d == nil || m <= 0 || math.Abs(e) <= DriftNotice {
		return ""
	}
	explains := func(sec float64) bool { return sec > 0 && math.Abs(sec/m-1) <= math.Abs(e)/2 }
	disk, eng, all := explains(d.AsRanSeconds), explains(d.AsRanEngineSeconds), explains(d.AsRanAllSeconds)
	verdict := "neither the disk's nor the engine's speed during the run explains the miss: the model's logic does"
	switch {
	case disk && !eng:
		verdict = "the disk's speed during the run explains the miss, not the model"
	case eng && !disk:
		verdict = "the engine's speed during the run explains the miss, not the model"
	case disk && eng:
		verdict = "the disk's or the engine's speed during the run explains the miss, not the model"
	case all:
		verdict = "the disk's and the engine's speed during the run together explain the miss, not the model"
	}
	pct := func(sec float64) float64 { return 100 * (sec/m - 1) }
	note := fmt.Sprintf("%s: predicted %+.1f%%; the run's own transfers moved %.2f× (reads) and %.2f× (writes) the predicted rate, and with the disk as it ran the model predicts %.2f s (%+.1f%%)",
		cmp.Ordering, 100*e, d.ReadRatio, d.WriteRatio, d.AsRanSeconds, pct(d.AsRanSeconds))
	if d.EngineRatio > 0 {
		note += fmt.Sprintf("; the engine trained at %.2f× the profile's rate, and with the engine as it ran %.2f s (%+.1f%%), with both %.2f s (%+.1f%%)",
			d.EngineRatio, d.AsRanEngineSeconds, pct(d.AsRanEngineSeconds), d.AsRanAllSeconds, pct(d.AsRanAllSeconds))
	}
	return note + ": " + verdict
}

// calibrated is this machine calibrated at the run's shape
// (calibrate.ShapeProfile; for the CUDA engine its GPU too, at the run's
// partition size and shape), said on log.
func calibrated(st *store.Store, h realrun.Hyper, plans []*orderings.Plan, epochs int, eng Engine, log io.Writer) (devices.Profile, error) {
	fmt.Fprintln(log, "calibrating this machine (no {Device} given)…")
	cal, err := calibrate.ShapeProfile(st, h, filepath.Dir(st.Dir))
	if err != nil {
		return devices.Profile{}, err
	}
	if eng.Name != "cuda" {
		if err := cal.AddOrderings(st, h, plans, epochs, filepath.Dir(st.Dir)); err != nil {
			return devices.Profile{}, err
		}
	}
	prof := cal.Profile
	defer func() {
		if line := OrderingsLine(cal); line != "" {
			fmt.Fprintln(log, line)
		}
	}()
	if eng.Name == "cuda" {
		g, err := calibrate.CalibrateGPU(st.M.PartitionBytes, h, st.M.Rows, st.M.MeanBucket())
		if err != nil {
			return prof, fmt.Errorf("GPU calibration: %w", err)
		}
		if err := g.Apply(&prof, h); err != nil {
			return prof, err
		}
		fmt.Fprintf(log, "calibrated %s: H2D %.1f GB/s, D2H %.1f GB/s, %.2fM edges/s ({Buffer} gpu) and %.2fM ({Buffer} host) at the run's shape, buckets of %d edges\n", g.Name, g.H2D/1e9, g.D2H/1e9, g.EdgesPerSecond/1e6, g.HostEdgesPerSecond/1e6, g.BucketEdges)
	}
	itf := prof.CPU.Interference
	itfOn := ""
	if cal.InterferenceOn != "" {
		itfOn = " (training " + cal.InterferenceOn + ")"
	}
	inTurn := ""
	if cal.Passes != nil {
		inTurn = " in turn as the engine swaps"
	}
	fmt.Fprintf(log, "calibrated: disk read %.0f MB/s, write %.0f MB/s%s, two streams at once %s%s, checksums %.1f GB/s; %s at d=%d, %d negatives, %d workers: %.0f edges/s (%s); training %.0f%% slower while I/O runs%s, I/O %.0f%% slower while training runs; the disk is measured again before and after each run\n",
		float64(prof.Disk.Read)/1e6, float64(prof.Disk.Write)/1e6, inTurn, cal.BothAtOnce(), heldNote(prof.Disk), cal.ChecksumBW/1e9, h.Model, h.Dim, h.Negatives, h.Workers, float64(prof.CPU.Train.Dot.Edges), FLOPSNote(cal), 100*itf.Compute, itfOn, 100*itf.IO)
	return prof, nil
}

// FLOPSNote is the engine's effective score arithmetic at the calibrated
// shape read against this machine's FMA ceiling: "58.6 GFLOP/s of score
// arithmetic, 23% of the 2 cores' FMA peak 256 GFLOP/s", or without a
// measured peak the rate alone.
func FLOPSNote(cal calibrate.Calibration) string {
	f := cal.EffectiveFLOPS()
	if f <= 0 {
		return "FLOP/s not measured"
	}
	if cal.FMAPeak <= 0 {
		return fmt.Sprintf("%.1f GFLOP/s of score arithmetic (FMA peak not measured)", f/1e9)
	}
	return fmt.Sprintf("%.1f GFLOP/s of score arithmetic, %.0f%% of the FMA peak %.0f GFLOP/s of %d cores", f/1e9, 100*f/cal.FMAPeak, cal.FMAPeak/1e9, cal.FMACores)
}

// HeldBy is the kernel limit a disk is held to ("" without one): "read
// 300 MB/s, write 300 MB/s, 100 ms of allowance".
func HeldBy(d devices.Disk) string {
	t := d.Throttle
	if t.Read == 0 && t.Write == 0 {
		return ""
	}
	return fmt.Sprintf("%s, %.0f ms of allowance", diskcap.Limits{Read: t.Read, Write: t.Write}, float64(t.Window)/1e6)
}

// heldNote follows a calibrated disk's own rates: where the process runs
// under a limit, they were measured outside it.
func heldNote(d devices.Disk) string {
	if h := HeldBy(d); h != "" {
		return " (the disk's own, measured outside the limit; held by the kernel to " + h + ")"
	}
	return ""
}

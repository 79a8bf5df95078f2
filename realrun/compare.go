package realrun

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"time"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/realrun/store"
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
func Predict(st *store.Store, plan *orderings.Plan, h Hyper, prefetch bool, prof devices.Profile) (report.Report, error) {
	sys, err := sim.LookupSystem("realrun")
	if err != nil {
		return report.Report{}, err
	}
	sys.Prefetch = prefetch
	prof.CPU.Workers = h.Workers
	edges := make([]int64, 0, st.M.P*st.M.P)
	for _, row := range st.M.Buckets {
		edges = append(edges, row...)
	}
	cfg := sim.Config{
		System:  sys,
		Profile: prof,
		Dataset: workload.Dataset{Name: st.M.Source, Nodes: st.M.Nodes, Edges: st.M.Train, Relations: st.M.Relations, TrainFraction: 1, Model: workload.Model(h.Model)},
		Training: workload.Training{Model: workload.Model(h.Model), Dim: h.Dim, Batch: h.Batch, Negatives: h.Negatives,
			ChunkSize: h.ChunkSize},
		Plan:           plan,
		BucketEdges:    edges,
		PartitionBytes: st.M.PartitionBytes,
	}
	return sim.Run(cfg)
}

// Compare pairs a measurement with its prediction and checks the counts:
// the loads, swaps and writes the engine performed must be the Plan's.
func Compare(measured, predicted report.Report) Comparison {
	c := Comparison{Ordering: measured.Ordering, Measured: measured, Predicted: predicted, RelativeError: predicted.Errors(measured)}
	c.CountsMatch = measured.Counts == predicted.Counts && measured.ReadBytes == predicted.ReadBytes && measured.WriteBytes == predicted.WriteBytes
	return c
}

// ShapeProfile calibrates this machine for one run without looking at any
// training run: the disk holding scratchDir with O_DIRECT transfers of the
// work directory's partition size, and the engine at exactly the run's
// training shape and partition size (synthetic buckets).
// The profile is cal.Profile; cal keeps the disk measurements beside it.
//
// The disk is measured over at least shapeDiskBytes per pass (short
// bursts of a few files overstate this virtual disk's sustained rate), and
// how the engine and the I/O slow each other (MeasureInterference) goes
// into cpu.interference.
func ShapeProfile(st *store.Store, h Hyper, scratchDir string) (Calibration, error) {
	cal, pass, err := calibrateDiskFor(st, h, scratchDir, shapeDiskBytes)
	if err != nil {
		return cal, err
	}
	tc, err := CalibrateShape(h, st.M.Rows)
	if err != nil {
		return cal, err
	}
	t := &cal.Profile.CPU.Train
	t.Dot, t.DistMult, t.ComplEx = tc, tc, tc
	window := time.Duration(float64(pass) / 256e6 * float64(time.Second)) // ~2 s for 512 MB
	if cal.Profile.CPU.Interference, err = MeasureInterference(scratchDir, st.M.PartitionBytes, h, st.M.Rows, tc, min(max(window, 300*time.Millisecond), 2*time.Second)); err != nil {
		return cal, err
	}
	return cal, cal.Profile.Validate()
}

// calibrateDiskFor measures the disk holding scratchDir with transfers of
// st's partition size, pass bytes per measurement (at most a few epochs'
// worth of st's partitions), and the checksum rate. It returns the bytes
// of one pass.
func calibrateDiskFor(st *store.Store, h Hyper, scratchDir string, pass int64) (Calibration, int64, error) {
	pass = min(pass, 4*int64(st.M.P)*st.M.PartitionBytes)
	files := int(max(8, (pass+st.M.PartitionBytes-1)/max(st.M.PartitionBytes, 1)))
	cal, err := Calibrate(CalibrateOptions{Dir: scratchDir, FileBytes: st.M.PartitionBytes, Files: files, Name: "this-machine", Workers: h.Workers, DiskOnly: true})
	return cal, pass, err
}

// shapeDiskBytes is the least a disk calibration pass moves, before each
// run (CompareOptions.DiskScratch) as for the profile: passes of a few
// hundred megabytes overstate this virtual disk's sustained rate.
const shapeDiskBytes = 512 << 20

// CompareOptions say how to measure a Plan for a comparison: epochs per
// run, runs (the median epoch is kept: the machine is shared and noisy),
// prefetch, the seed, and where progress goes.
type CompareOptions struct {
	Epochs, Repeats int
	Prefetch        bool
	Seed            int64
	Progress        Progress
	// DiskScratch, when set, is where the disk (and the checksum rate) is
	// measured again just before and just after each run, which is then
	// predicted with the mean of the two: a shared machine's virtual disk
	// drifts by tens of percent within a minute. The rest of the profile
	// is kept.
	DiskScratch string
}

// RunAndCompare trains plan for real from freshly initialised partitions
// (opt.Repeats times, opt.Epochs epochs each), keeps the run whose last
// epoch is the median, simulates the same Plan on prof (its disk and
// checksum rate, when opt.DiskScratch is set, the mean of measurements
// just before and just after that run: meanDisk) with the realrun system
// model and compares the two. It returns
// the kept epoch too.
func RunAndCompare(st *store.Store, plan *orderings.Plan, h Hyper, prof devices.Profile, opt CompareOptions) (Comparison, Epoch, error) {
	degrees, err := st.Degrees()
	if err != nil {
		return Comparison{}, Epoch{}, err
	}
	type run struct {
		ep            Epoch
		prof          devices.Profile
		before, after *devices.Disk
	}
	measure := func(when string) (Calibration, error) {
		cal, _, err := calibrateDiskFor(st, h, opt.DiskScratch, shapeDiskBytes)
		if err != nil {
			return cal, fmt.Errorf("%s: disk calibration %s the run: %w", plan.Ordering, when, err)
		}
		return cal, nil
	}
	var runs []run
	for rep := 0; rep < max(opt.Repeats, 1); rep++ {
		if err := st.InitPartitions(opt.Seed, initScale); err != nil {
			return Comparison{}, Epoch{}, err
		}
		var before Calibration
		if opt.DiskScratch != "" {
			if before, err = measure("before"); err != nil {
				return Comparison{}, Epoch{}, err
			}
		}
		eng := NewCPU(h, st, degrees, opt.Seed)
		var last Epoch
		for e := 1; e <= max(opt.Epochs, 1); e++ {
			if last, err = RunEpoch(st, plan, eng, EpochOptions{Prefetch: opt.Prefetch, Seed: opt.Seed, Epoch: e, Progress: opt.Progress}); err != nil {
				return Comparison{}, Epoch{}, fmt.Errorf("%s: %w", plan.Ordering, err)
			}
		}
		r := run{ep: last, prof: prof}
		if opt.DiskScratch != "" {
			after, err := measure("after")
			if err != nil {
				return Comparison{}, Epoch{}, err
			}
			mean := meanDisk(before, after)
			b, a := before.Disk(), after.Disk()
			r.before, r.after = &b, &a
			r.prof.Disk, r.prof.CPU.Checksum = mean.Disk(), devices.Bandwidth(mean.ChecksumBW)
		}
		runs = append(runs, r)
	}
	sort.Slice(runs, func(a, b int) bool { return runs[a].ep.EpochSeconds < runs[b].ep.EpochSeconds })
	kept := runs[len(runs)/2]
	pred, err := Predict(st, plan, h, opt.Prefetch, kept.prof)
	if err != nil {
		return Comparison{}, Epoch{}, err
	}
	cmp := Compare(kept.ep.Report, pred)
	cmp.Disk, cmp.Checksum = kept.prof.Disk, kept.prof.CPU.Checksum
	if kept.before != nil {
		cmp.DiskBefore, cmp.DiskAfter, cmp.DiskDrift = kept.before, kept.after, diskDrift(*kept.before, *kept.after)
	}
	return cmp, kept.ep, nil
}

// ComparisonColumns are `realrun --compare-sim`'s table and CSV columns.
var ComparisonColumns = plots.Columns{
	{Field: "Ordering", Head: "ordering"},
	{Field: "Measured.EpochSeconds", Head: "epoch s measured", Prec: 2, CSVPrec: 2},
	{Field: "Predicted.EpochSeconds", Head: "epoch s predicted", Prec: 2, CSVPrec: 2},
	{Field: "RelativeError.EpochSeconds", Key: "epoch_relative_error", Head: "epoch error %", Scale: 100, Prec: 1, CSVPrec: 4},
	{Field: "Measured.StallSeconds", Head: "stall s measured", Prec: 2, CSVPrec: 2},
	{Field: "Predicted.StallSeconds", Head: "stall s predicted", Prec: 2, CSVPrec: 2},
	{Field: "Measured.ComputeSeconds", Head: "compute s measured", Prec: 2, CSVPrec: 2},
	{Field: "Predicted.ComputeSeconds", Head: "compute s predicted", Prec: 2, CSVPrec: 2},
	{Field: "Measured.ReadBytes", Head: "read bytes measured"},
	{Field: "Predicted.ReadBytes", Head: "read bytes predicted"},
	{Field: "Measured.WriteBytes", Head: "write bytes measured"},
	{Field: "Predicted.WriteBytes", Head: "write bytes predicted"},
	{Field: "Measured.Swaps", Key: "swaps", Head: "swaps"},
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
}

// CompareOrderings is realrun --compare-sim: it trains each of the named
// orderings (a comma-separated list; "" for o's own) for real on one work
// directory, its partitions re-initialised before each, simulates the same
// Plan with the realrun system model on the device profile at devicePath
// (or, when that is "", on a calibration of this machine at the run's own
// shape) and compares the two. Orderings not defined for (p, c) are listed
// as skipped with the reason, as simulate lists them. Notices go to log.
func CompareOrderings(o Options, orderingList, devicePath string, progress Progress, log io.Writer) (CompareOutput, error) {
	out := CompareOutput{Skipped: []orderings.Skipped{}}
	spec, h, first, err := Configure(o)
	if err != nil {
		return out, err
	}
	if o.Engine != "" && o.Engine != "cpu" {
		return out, inputerr.Errorf("--compare-sim predicts the cpu engine only; it cannot check --engine %s yet", o.Engine)
	}
	names := []string{first.Ordering}
	if orderingList != "" {
		if names, err = orderings.ParseList(orderingList); err != nil {
			return out, inputerr.Errorf("--orderings: %w", err)
		}
	}
	var plans []*orderings.Plan
	for _, n := range names {
		pl, err := orderings.Build(n, first.P, first.C, orderings.Policy(first.Policy), o.Seed)
		var na *orderings.NotApplicableError
		switch {
		case errors.As(err, &na):
			out.Skipped = append(out.Skipped, orderings.Skipped{Ordering: n, Reason: na.Reason})
			continue
		case err != nil:
			return out, inputerr.Errorf("--orderings: %w", err)
		}
		plans = append(plans, pl)
	}
	unlock, err := LockWorkdir(spec.Workdir)
	if err != nil {
		return out, inputerr.Errorf("--workdir: %w", err)
	}
	defer unlock()
	st, _, err := OpenOrPrepare(spec)
	if err != nil {
		return out, err
	}
	var prof devices.Profile
	if devicePath != "" {
		if prof, err = devices.Load(devicePath); err != nil {
			return out, inputerr.Errorf("--device: %w", err)
		}
	} else {
		fmt.Fprintln(log, "calibrating this machine (no --device given)…")
		cal, err := ShapeProfile(st, h, filepath.Dir(st.Dir))
		if err != nil {
			return out, err
		}
		prof = cal.Profile
		itf := prof.CPU.Interference
		fmt.Fprintf(log, "calibrated: disk read %.0f MB/s, write %.0f MB/s, both at once %s, checksums %.1f GB/s; %s at d=%d, %d negatives, %d workers: %.0f edges/s; training %.0f%% slower while I/O runs, I/O %.0f%% slower while training runs; the disk is measured again before and after each run\n",
			float64(prof.Disk.Read)/1e6, float64(prof.Disk.Write)/1e6, cal.BothAtOnce(), cal.ChecksumBW/1e9, h.Model, h.Dim, h.Negatives, h.Workers, float64(prof.CPU.Train.Dot.Edges), 100*itf.Compute, 100*itf.IO)
	}
	out.Device = prof.Name
	opt := CompareOptions{Epochs: o.Epochs, Repeats: 1, Prefetch: !o.NoPrefetch, Seed: spec.Seed, Progress: progress}
	if devicePath == "" {
		opt.DiskScratch = filepath.Dir(st.Dir)
	}
	for _, pl := range plans {
		cmp, _, err := RunAndCompare(st, pl, h, prof, opt)
		if err != nil {
			return out, err
		}
		if cmp.DiskDrift > DriftNotice {
			b, a := cmp.DiskBefore, cmp.DiskAfter
			fmt.Fprintf(log, "%s: the disk drifted by %.0f%% during the run (read %.0f → %.0f MB/s, write %.0f → %.0f MB/s, before → after); it is predicted with the mean, and where the run is data-bound the prediction cannot be closer than the disk held still\n",
				pl.Ordering, 100*cmp.DiskDrift, float64(b.Read)/1e6, float64(a.Read)/1e6, float64(b.Write)/1e6, float64(a.Write)/1e6)
		}
		out.Results = append(out.Results, cmp)
	}
	return out, nil
}

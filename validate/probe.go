package validate

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/stats"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/store"
)

// DefaultProbeFraction is the share of each Plan's buckets a probe runs
// when ProbeOptions.Fraction is zero.
const DefaultProbeFraction = 0.2

// ProbeOptions say how Probe runs: the share of each Plan's buckets
// (Fraction, 0: DefaultProbeFraction), the seed and prefetch of the runs.
type ProbeOptions struct {
	Fraction float64
	Seed     int64
	Prefetch bool
}

// ProbeRun and ProbeResult are calibrate's (a calibration records its
// probes).
type (
	ProbeRun    = calibrate.ProbeRun
	ProbeResult = calibrate.ProbeResult
)

// Probe measures the devices as the engine drives them: it runs the first
// buckets of each of plans (Plan.Prefix, a share opt.Fraction of each) with
// the CPU engine on st's work directory, without committing them (the work
// directory keeps its checkpoint), predicts the same prefix on prof, and
// returns prof with the disk's read and write rates scaled by the median
// of the probes' transfer-rate ratios (run over predicted), and every
// compute rate (each ordering's own, cpu.train.<model>.orderings,
// included) by the median of their compute ratios. The median, not each
// ordering's own probe: a calibration measures each ordering's rate on
// its own bucket sequence already, and what a probe adds is how far the
// machine has moved since; one ordering's probe of seconds says that
// less surely than all of them together (ProbeResult.EngineRatio). The
// spread of the disk's rates and of the engine's is widened to hold every
// probe's rate, so that a prediction's range says how far the orderings'
// probes disagreed. A profile whose disk a kernel limit holds is not for
// probing: the limit, not the device, sets the rate.
func Probe(st *store.Store, plans []*orderings.Plan, h realrun.Hyper, prof devices.Profile, opt ProbeOptions) (devices.Profile, ProbeResult, error) {
	var res ProbeResult
	if len(plans) == 0 {
		return prof, res, nil
	}
	frac := opt.Fraction
	if frac == 0 {
		frac = DefaultProbeFraction
	}
	if !(frac > 0 && frac <= 1) {
		return prof, res, fmt.Errorf("probe: the share of a Plan's buckets is %g, want (0, 1]", frac)
	}
	deg, err := st.Degrees()
	if err != nil {
		return prof, res, fmt.Errorf("probe: %w", err)
	}
	// An epoch tidies the work directory, pruning committed checkpoints
	// beyond Keep: a probe keeps every one there is.
	ckpts, err := st.Checkpoints()
	if err != nil {
		return prof, res, fmt.Errorf("probe: %w", err)
	}
	defer func(keep int) { st.Keep = keep }(st.Keep)
	st.Keep = max(st.Keep, len(ckpts))
	t0 := time.Now()
	var readBytes, writeBytes int64
	for _, pl := range plans {
		pre := pl.Prefix(int(math.Ceil(frac * float64(len(pl.Buckets)))))
		eng, err := realrun.NewEngine(realrun.EngineOptions{Hyper: h, Store: st, Degrees: deg, Seed: opt.Seed, C: pl.C})
		if err != nil {
			return prof, res, fmt.Errorf("probe %s: %w", pl.Ordering, err)
		}
		ep, err := realrun.RunEpoch(st, pre, eng, realrun.EpochOptions{Prefetch: opt.Prefetch, Seed: opt.Seed, Epoch: st.Current + 1, Uncommitted: true})
		if err != nil {
			return prof, res, fmt.Errorf("probe %s: %w", pl.Ordering, err)
		}
		pred, err := predict(st, pre, h, Engine{}, opt.Prefetch, prof, false)
		if err != nil {
			return prof, res, fmt.Errorf("probe %s: %w", pl.Ordering, err)
		}
		m := ep.Report
		run := ProbeRun{Ordering: pl.Ordering, Buckets: len(pre.Buckets), Of: len(pl.Buckets), Seconds: m.EpochSeconds, PredictedSeconds: pred.EpochSeconds}
		run.ReadRatio, run.WriteRatio = transferRatios(m, pred, prof.CPU.Checksum)
		if m.ComputeSeconds > 0 && pred.ComputeSeconds > 0 {
			run.AllEngineRatio = pred.ComputeSeconds / m.ComputeSeconds
		}
		run.EngineRatio = run.AllEngineRatio
		if r, n, share := quietEngineRatio(ep, pl.Ordering, h, prof); r > 0 {
			run.EngineRatio, run.QuietBuckets, run.QuietShare = r, n, share
		}
		readBytes += m.ReadBytes
		writeBytes += m.WriteBytes
		res.Runs = append(res.Runs, run)
	}
	res.Seconds = time.Since(t0).Seconds()
	reads := ratiosOf(res.Runs, func(r ProbeRun) float64 { return r.ReadRatio })
	writes := ratiosOf(res.Runs, func(r ProbeRun) float64 { return r.WriteRatio })
	engine := ratiosOf(res.Runs, func(r ProbeRun) float64 { return r.EngineRatio })
	res.ReadRatio, res.WriteRatio = stats.Median(reads), stats.Median(writes)
	if len(engine) > 0 {
		res.EngineRatio = stats.Median(engine)
	}
	out := prof
	out.Disk = scaleDisk(prof.Disk, res.ReadRatio, res.WriteRatio, readBytes, writeBytes)
	out = scaleCompute(out, res.EngineRatio)
	out = out.CarrySpread(prof)
	widen := func(key string, base float64, ratios []float64) error {
		if base <= 0 || len(ratios) == 0 {
			return nil
		}
		lo, hi := base*slices.Min(ratios), base*slices.Max(ratios)
		if r, ok := out.Spread.Of(key); ok {
			lo, hi = min(lo, r.Low), max(hi, r.High)
		}
		return out.SetSpread(key, lo, hi)
	}
	if err := widen("disk.read", float64(prof.Disk.Read), reads); err != nil {
		return prof, res, fmt.Errorf("probe: %w", err)
	}
	if err := widen("disk.write", float64(prof.Disk.Write), writes); err != nil {
		return prof, res, fmt.Errorf("probe: %w", err)
	}
	if tc, ok := prof.CPU.Train.For(string(h.Model)); ok {
		if err := widen(prof.CPU.Train.SpreadKey(string(h.Model)), float64(tc.Edges), engine); err != nil {
			return prof, res, fmt.Errorf("probe: %w", err)
		}
	}
	if err := out.Validate(); err != nil {
		return prof, res, fmt.Errorf("probe: the profile as probed: %w", err)
	}
	return out, res, nil
}

// MinQuietShare is the least share of a probe's compute that its quiet
// buckets (realrun.QuietBuckets) must hold, two buckets at least, for the
// engine's rate to be read from them alone; below it the probe's whole
// compute is used, interference and all.
const MinQuietShare = 0.1

// quietEngineRatio is how much faster the engine trained a probe's quiet
// buckets (no partition I/O beside them) than prof's rate for the
// ordering predicts them, with how many buckets and what share of the
// probe's compute they were; 0 when they are too few (MinQuietShare).
// Only they say the engine's own rate: over the whole probe the ratio
// also holds how far the calibrated interference missed, and a probe's
// first buckets, beside the initial loads, are where I/O and training
// share the cores most — at partitions of 1.5 GB that part moved the
// whole probe's ratio to 0.86× while the runs trained at 1.14–1.24× it.
func quietEngineRatio(ep realrun.Epoch, ordering string, h realrun.Hyper, prof devices.Profile) (ratio float64, buckets int, share float64) {
	quiet, sec := realrun.QuietBuckets(ep)
	if len(quiet) < 2 || sec <= 0 || ep.ComputeSeconds <= 0 || sec < MinQuietShare*ep.ComputeSeconds {
		return 0, len(quiet), 0
	}
	pp, _ := prof.ForOrdering(ordering, string(h.Model))
	pp.CPU.Workers = h.Workers
	var pred float64
	for _, b := range quiet {
		pred += devices.CPUBucketTime(pp, h.Training, int64(b.Edges))
	}
	if pred <= 0 {
		return 0, len(quiet), 0
	}
	return pred / sec, len(quiet), sec / ep.ComputeSeconds
}

// ratiosOf are the positive values of f over runs.
func ratiosOf(runs []ProbeRun, f func(ProbeRun) float64) []float64 {
	var out []float64
	for _, r := range runs {
		if v := f(r); v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

package experiments

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/workdir"
)

func init() {
	register(Experiment{Name: "engine-drift", Description: "Time the CPU engine's calibration bench round after round for EngineDriftSeconds (15 min) at validate's first configuration, and score samples of 2–120 s against the median of the 150 s after them: how long a calibration must time the engine on this machine (takes ~16 min)", Run: EngineDrift, Slow: true})
}

// Parameters of engine-drift.
var (
	// EngineDriftSeconds is how long the bench is timed.
	EngineDriftSeconds = 900
	// EngineDriftSamples are the lengths of the samples scored, in
	// seconds.
	EngineDriftSamples = []float64{2, 5, 10, 20, 30, 60, 90, 120}
)

// The runs a sample is scored against: the median round of the
// driftRun seconds starting driftGap seconds after the sample ends (a
// calibration, then the runs it predicts), at a start every driftStep
// seconds.
const (
	driftRun  = 150.0
	driftGap  = 20.0
	driftStep = 5.0
	driftBin  = 10.0 // the chart's bins, in seconds
)

// driftScore is how well samples of one length predicted the runs after
// them: at how many starts, how many within ValidateTolerance, the
// error's sd and extent (the run's median over the sample's, minus 1:
// the error of the epoch a calibration of the sample would predict), and
// at how many starts the extent of the sample's stretches
// (calibrate.ComputeRate.Stretches) held the run's median, with their
// mean width over the sample's median.
type driftScore struct {
	sample                   float64
	starts, within, held     int
	sd, lo, hi, widthOfRange float64
}

// scoreDrift scores samples of sample seconds of rounds against the
// runs after them (driftRun, driftGap, driftStep).
func scoreDrift(rounds []calibrate.TimedRound, sample float64) driftScore {
	s := driftScore{sample: sample, lo: math.Inf(1), hi: math.Inf(-1)}
	if len(rounds) == 0 {
		return s
	}
	end := rounds[len(rounds)-1].At.Seconds()
	var errs []float64
	for t := 0.0; t+sample+driftGap+driftRun <= end; t += driftStep {
		cal := roundsIn(rounds, t, t+sample)
		run := roundsIn(rounds, t+sample+driftGap, t+sample+driftGap+driftRun)
		if len(cal.Rates) == 0 || len(run.Rates) == 0 {
			continue
		}
		cal.Rounds = len(cal.Rates)
		med, runMed := medianOf(cal.Rates), medianOf(run.Rates)
		e := runMed/med - 1
		errs = append(errs, e)
		s.lo, s.hi = math.Min(s.lo, e), math.Max(s.hi, e)
		if math.Abs(e) <= ValidateTolerance {
			s.within++
		}
		st := cal.Stretches()
		lo, hi := slices.Min(st), slices.Max(st)
		if lo*(1-1e-9) <= runMed && runMed <= hi*(1+1e-9) { // a stretch's rate is a sum of inverses: allow its rounding
			s.held++
		}
		s.widthOfRange += (hi - lo) / med
	}
	s.starts = len(errs)
	if s.starts == 0 {
		return s
	}
	s.widthOfRange /= float64(s.starts)
	var mean float64
	for _, e := range errs {
		mean += e / float64(len(errs))
	}
	for _, e := range errs {
		s.sd += (e - mean) * (e - mean) / float64(len(errs))
	}
	s.sd = math.Sqrt(s.sd)
	return s
}

// roundsIn gathers the rounds that ended in [from, to) seconds as one
// rate's rounds.
func roundsIn(rounds []calibrate.TimedRound, from, to float64) calibrate.ComputeRate {
	var r calibrate.ComputeRate
	for _, x := range rounds {
		if at := x.At.Seconds(); at >= from && at < to {
			r.Rates = append(r.Rates, x.Rate)
			r.Seconds += x.Seconds
		}
	}
	return r
}

// medianOf is the upper median of xs (as calibrate's rates), 0 for none.
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// EngineDrift times the engine's bench at validate's first configuration
// (ValidateConfigs[0], on its own buckets) for EngineDriftSeconds and
// scores samples of each of EngineDriftSamples' lengths against the runs
// after them (scoreDrift).
func EngineDrift() (Result, error) {
	vc := ValidateConfigs[0]
	r := Result{
		Name:  "engine-drift",
		Title: fmt.Sprintf("The CPU engine's bench timed for %d s at %s@%g d=%d: a sample of the rate against the median of the %.0f s starting %.0f s after it", EngineDriftSeconds, vc.Dataset, vc.Scale, vc.Dim, driftRun, driftGap),
		Header: []string{"sample s", "starts", "within 10%", "within share", "error sd %", "error min %", "error max %",
			"stretches' range holds the run", "stretches' range width %"},
	}
	base, err := os.MkdirTemp("", "tierflow-engine-drift-*")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(base)
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: vc.Dataset, Scale: vc.Scale, Seed: 1, P: vc.P, Dim: vc.Dim, Model: string(vc.Model), Workdir: filepath.Join(base, "wd")})
	if err != nil {
		return r, fmt.Errorf("engine-drift: %w", err)
	}
	rounds, err := calibrate.TraceEngine(st, validateHyper(vc), time.Duration(EngineDriftSeconds)*time.Second)
	if err != nil {
		return r, fmt.Errorf("engine-drift: %w", err)
	}
	if len(rounds) == 0 {
		return r, fmt.Errorf("engine-drift: no round ended in %d s", EngineDriftSeconds)
	}
	for _, sample := range EngineDriftSamples {
		s := scoreDrift(rounds, sample)
		if s.starts == 0 {
			continue
		}
		r.Rows = append(r.Rows, []string{f0(sample), strconv.Itoa(s.starts), strconv.Itoa(s.within), f2(float64(s.within) / float64(s.starts)),
			f1(100 * s.sd), pct1(s.lo), pct1(s.hi), fmt.Sprintf("%d of %d", s.held, s.starts), f1(100 * s.widthOfRange)})
	}
	all := make([]float64, len(rounds))
	var secs []float64
	for i, x := range rounds {
		all[i] = x.Rate
		secs = append(secs, x.Seconds)
	}
	med := medianOf(all)
	bins := Series{Name: "10-s median over the whole trace's"}
	end := rounds[len(rounds)-1].At.Seconds()
	for t := 0.0; t+driftBin <= end; t += driftBin {
		if b := roundsIn(rounds, t, t+driftBin); len(b.Rates) > 0 {
			bins.X, bins.Y = append(bins.X, t), append(bins.Y, medianOf(b.Rates)/med)
		}
	}
	r.Charts = []Chart{{File: "engine-drift", Title: fmt.Sprintf("The engine's bench at %s@%g d=%d, %.0f-s medians over the whole trace's", vc.Dataset, vc.Scale, vc.Dim, driftBin), XLabel: "time (s)", YLabel: "rate ÷ median", Series: []Series{bins}}}
	r.Notes = []string{
		fmt.Sprintf("%d rounds of %.2f s (median) in %.0f s, median %.0fk edges/s; single rounds %.2f–%.2f× the median, %.0f-s medians %.2f–%.2f×.",
			len(rounds), medianOf(secs), end, med/1e3, slices.Min(all)/med, slices.Max(all)/med, driftBin, slices.Min(bins.Y), slices.Max(bins.Y)),
		fmt.Sprintf("Method: the bench a calibration times (calibrate.TraceEngine: the graph's own buckets, the configuration's training shape, %d workers) round after round; at every %.0f s a sample of the rounds that ended in the next S s (the median round's rate, as a calibration takes it) is scored against the median round of the %.0f s starting %.0f s after it, the runs it would predict; its error is the epoch it would predict over the one they took, minus 1. The stretches are the sample's rounds grouped into runs of %.0f s or more (calibrate.ComputeRate.Stretches), whose extent is a profile's spread. The starts overlap: they are not independent samples. Run again, it gives other numbers: the machine is shared.",
			validateHyper(vc).Workers, driftStep, driftRun, driftGap, calibrate.StretchSeconds),
	}
	return r, nil
}

// pct1 is x as a signed percentage with one decimal.
func pct1(x float64) string { return fmt.Sprintf("%+.1f", 100*x) }

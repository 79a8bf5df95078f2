package experiments

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/validate"
	"github.com/tierflow/tierflow/workload"
)

func init() {
	register(Experiment{Name: "prediction-variants", Description: "Prepare the freebase86m@0.005 d=256 p=32 c=3 work directory (the data-bound validate configuration), calibrate, run BETA, Legend, BETA with the disk measured around each run, and re-predict each run with one part of the model switched off at a time: which part a prediction depends on (takes ~3–4 min)", Run: PredictionVariants, Slow: true})
}

// PredictionVariantsConfig is the configuration prediction-variants
// prepares (under a temporary directory, removed afterwards) and trains:
// the d=256 data-bound configuration of ValidateConfigs, on whose work
// directory the measurement was first taken.
var PredictionVariantsConfig = ValidateConfig{"freebase86m", 0.005, workload.Dot, 256, 4, 1000, 32, 3, "as the d=256 data-bound validate configuration"}

// PredictionVariantsOrderings are run one after another, one epoch each,
// in this order (BETA twice: how far two runs of one Plan a minute apart
// differ).
var PredictionVariantsOrderings = []string{"beta", "legend", "beta"}

// predictionVariant is a re-prediction of a run with the profile edited;
// label is its short name on the chart. edit changes p, the profile of
// the run's prediction (its disk and checksum rate measured around the
// run); cal is the configuration's calibrated profile.
type predictionVariant struct {
	name, label string
	edit        func(p *devices.Profile, cal devices.Profile)
}

// predictionVariants are the re-predictions of each run: as predicted,
// then one part of the model switched off at a time, then the
// configuration's disk calibration in place of the measurements around
// the run.
var predictionVariants = []predictionVariant{
	{"as predicted", "predicted", func(*devices.Profile, devices.Profile) {}},
	{"no I/O interference", "no I/O itf.", func(p *devices.Profile, _ devices.Profile) { p.CPU.Interference.IO = 0 }},
	{"no compute interference", "no compute itf.", func(p *devices.Profile, _ devices.Profile) { p.CPU.Interference.Compute = 0 }},
	{"no checksums", "no checksums", func(p *devices.Profile, _ devices.Profile) { p.CPU.Checksum = 0 }},
	{"configuration's disk", "config. disk", func(p *devices.Profile, cal devices.Profile) { p.Disk = cal.Disk }},
}

// PredictionVariants prepares PredictionVariantsConfig's work directory,
// calibrates it (calibrate.ShapeProfile), runs each of
// PredictionVariantsOrderings for one epoch with the disk measured just
// before and just after (validate.RunAndCompare) and re-predicts each run
// with every predictionVariants edit of its profile (validate.Predict).
func PredictionVariants() (Result, error) {
	return predictionVariantsFor(PredictionVariantsConfig, PredictionVariantsOrderings)
}

func predictionVariantsFor(vc ValidateConfig, names []string) (Result, error) {
	label := fmt.Sprintf("%s@%g d=%d m=%d p=%d c=%d", vc.Dataset, vc.Scale, vc.Dim, vc.Negatives, vc.P, vc.C)
	r := Result{
		Name:  "prediction-variants",
		Title: fmt.Sprintf("Each run re-predicted with one part of the model switched off, %s on this machine", label),
		Header: []string{"run", "ordering", "variant", "measured s", "measured stall s", "measured compute s",
			"predicted s", "predicted stall s", "predicted compute s", "error %"},
	}
	start := time.Now()
	base, err := os.MkdirTemp("", "tierflow-variants-*")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(base)
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: vc.Dataset, Scale: vc.Scale, Seed: 1, P: vc.P, Dim: vc.Dim, Model: string(vc.Model), Workdir: filepath.Join(base, "work")})
	if err != nil {
		return r, fmt.Errorf("prediction-variants %s: %w", label, err)
	}
	h := realrun.Hyper{Training: workload.Training{Model: vc.Model, Dim: vc.Dim, Batch: vc.Batch, Negatives: vc.Negatives}, DegreeFrac: 0.5, LR: 0.1, Workers: 2}
	cal, err := calibrate.ShapeProfile(st, h, base)
	if err != nil {
		return r, fmt.Errorf("prediction-variants %s: calibrate: %w", label, err)
	}
	itf := cal.Profile.CPU.Interference
	r.Notes = append(r.Notes, fmt.Sprintf("%s, calibrated at this shape: interference compute %.2f, I/O %.2f (training %.0f%% slower while I/O runs, I/O %.0f%% slower while training runs); checksums %.1f GB/s; disk read %.0f, write %.0f, combined %.0f MB/s (the configuration's disk).",
		label, itf.Compute, itf.IO, 100*itf.Compute, 100*itf.IO, cal.ChecksumBW/1e9, float64(cal.Profile.Disk.Read)/1e6, float64(cal.Profile.Disk.Write)/1e6, float64(cal.Profile.Disk.Combined)/1e6))
	chart := Chart{File: "prediction-variants", Title: "Measured epoch and its re-predictions (itf.: interference)", YLabel: "epoch (s)", Bars: true,
		Categories: []string{"measured"}}
	for _, v := range predictionVariants {
		chart.Categories = append(chart.Categories, v.label)
	}
	for k, name := range names {
		run := strconv.Itoa(k + 1)
		plan, err := orderings.Build(name, vc.P, vc.C, orderings.Belady, 0)
		if err != nil {
			return r, fmt.Errorf("prediction-variants %s %s: %w", label, name, err)
		}
		cmp, _, err := validate.RunAndCompare(st, plan, h, cal.Profile, validate.CompareOptions{Epochs: 1, Repeats: 1, Prefetch: true, Seed: 1, DiskScratch: base})
		if err != nil {
			return r, fmt.Errorf("prediction-variants %s %s: %w", label, name, err)
		}
		m := cmp.Measured
		s := Series{Name: run + " " + name, Y: []float64{m.EpochSeconds}}
		// The run's own prediction: the profile with the disk and
		// checksum rate measured around the run, as RunAndCompare used.
		own := cal.Profile
		own.Disk, own.CPU.Checksum = cmp.Disk, cmp.Checksum
		for _, v := range predictionVariants {
			p := own
			v.edit(&p, cal.Profile)
			pr, err := validate.Predict(st, plan, h, true, p)
			if err != nil {
				return r, fmt.Errorf("prediction-variants %s %s, %s: %w", label, name, v.name, err)
			}
			r.Rows = append(r.Rows, []string{run, name, v.name, f2(m.EpochSeconds), f2(m.StallSeconds), f2(m.ComputeSeconds),
				f2(pr.EpochSeconds), f2(pr.StallSeconds), f2(pr.ComputeSeconds), fmt.Sprintf("%+.1f", 100*(pr.EpochSeconds/m.EpochSeconds-1))})
			s.Y = append(s.Y, pr.EpochSeconds)
		}
		chart.Series = append(chart.Series, s)
		d := cmp.Disk
		r.Notes = append(r.Notes, fmt.Sprintf("Run %s (%s): measured epoch %.2f s (stall %.2f, compute %.2f), %.1f GB read and %.1f GB written; disk around the run (mean of before and after) read %.0f, write %.0f, combined %.0f MB/s, drift between the two %.0f%%; checksums %.1f GB/s; loads, swaps, writes and bytes as the Plan's: %s.",
			run, name, m.EpochSeconds, m.StallSeconds, m.ComputeSeconds, float64(m.ReadBytes)/1e9, float64(m.WriteBytes)/1e9,
			float64(d.Read)/1e6, float64(d.Write)/1e6, float64(d.Combined)/1e6, 100*cmp.DiskDrift, float64(cmp.Checksum)/1e9, yesNo(cmp.CountsMatch)))
	}
	r.Charts = []Chart{chart}
	r.Notes = append(r.Notes,
		"Method: the work directory is prepared and calibrated once (calibrate.ShapeProfile); each run is one epoch from freshly initialised partitions (2 training workers, prefetch), its prediction the realrun system model on the calibrated profile with the disk and checksum rate measured just before and just after the run (validate.RunAndCompare). Each variant re-predicts the run with that profile edited: no I/O interference (cpu.interference.io = 0), no compute interference (cpu.interference.compute = 0), no checksums (cpu.checksum = 0), or the configuration's disk calibration in place of the measurements around the run. Error is the prediction over the measured epoch, minus one.",
		fmt.Sprintf("Run time of the whole experiment (preparation included): %.1f min.", time.Since(start).Minutes()))
	return r, nil
}

func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

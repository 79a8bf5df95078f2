package experiments

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/sim"
)

func init() {
	register(Experiment{Name: "validate", Description: "Validate the simulator against real runs on this machine: two datasets × two dimensions × four orderings, half compute-bound, half data-bound (takes minutes)", Run: Validate, Slow: true})
}

// ValidateConfig is one dataset/dimension configuration of the validation.
type ValidateConfig struct {
	Dataset   string
	Scale     float64
	Model     model.Kind
	Dim       int
	Negatives int
	Batch     int
	P, C      int
	// Why says why it should land in its regime on a 2-core machine.
	Why string
}

// ValidateConfigs: Twitter-shaped graphs are dense (35 edges a node) and
// trained with 100 negatives, so every partition byte moved buys a lot of
// arithmetic; Freebase86m-shaped graphs are sparse (3.9 edges a node) and
// trained with 4 negatives at p = 32, so each partition is read many times
// for little arithmetic. The Twitter scales were raised 5× (0.002 → 0.01,
// 0.001 → 0.005) once the SIMD kernels made the engine ~9× faster, so that
// their epochs stay near ten seconds and compute-bound.
var ValidateConfigs = []ValidateConfig{
	{"twitter", 0.01, model.Dot, 64, 100, 10000, 8, 3, "dense graph, 100 negatives: ~77k FLOPs per edge against ~27 MB partitions read 5–11 times"},
	{"twitter", 0.005, model.Dot, 128, 100, 10000, 8, 3, "dense graph, 100 negatives: ~154k FLOPs per edge"},
	{"freebase86m", 0.005, model.Dot, 128, 4, 1000, 32, 3, "sparse graph, 4 negatives, p=32: ~6k FLOPs per edge, partitions read 8–19 times"},
	{"freebase86m", 0.005, model.Dot, 256, 4, 1000, 32, 3, "as above with partitions twice as large"},
}

// ValidateRepeats is how many times each ordering runs (the median counts).
const ValidateRepeats = 3

// ValidateOrderings are compared in every configuration.
var ValidateOrderings = []string{"beta", "hilbert", "hilbert-symmetric", "legend"}

// Validate runs every configuration and ordering for real, one epoch
// each, and simulates the same Plan on a profile calibrated beforehand:
// the disk from O_DIRECT scratch transfers, the CPU engine from synthetic
// in-memory buckets at each configuration's training shape. Nothing of
// the runs feeds the predictions.
func Validate() (Result, error) {
	start := time.Now()
	r := Result{
		Name:  "validate",
		Title: "Predicted (realrun system model, calibrated profile) vs measured epoch, one epoch per run on this machine",
		Header: []string{"config", "regime", "ordering", "measured s", "predicted s", "error %", "within 15%",
			"stall measured s", "stall predicted s", "compute measured s", "compute predicted s", "disk busy measured s", "read bytes equal", "write bytes equal", "swaps"},
	}
	base, err := os.MkdirTemp("", "tierflow-validate-*")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(base)
	scatter := Chart{File: "validate", Title: "Validation: predicted vs measured epoch time", XLabel: "measured (s)", YLabel: "predicted (s)", Scatter: true}
	var hi float64
	misses, rankMisses := 0, 0
	var notes []string
	for ci, vc := range ValidateConfigs {
		label := fmt.Sprintf("%s@%g d=%d m=%d p=%d c=%d", vc.Dataset, vc.Scale, vc.Dim, vc.Negatives, vc.P, vc.C)
		st, err := realrun.Prepare(realrun.DataSpec{Dataset: vc.Dataset, Scale: vc.Scale, Seed: 1, P: vc.P, Dim: vc.Dim, Model: string(vc.Model), Workdir: filepath.Join(base, strconv.Itoa(ci))})
		if err != nil {
			return r, fmt.Errorf("validate %s: %w", label, err)
		}
		h := realrun.Hyper{Training: sim.Training{Model: vc.Model, Dim: vc.Dim, Batch: vc.Batch, Negatives: vc.Negatives}, DegreeFrac: 0.5, LR: 0.1, Workers: 2}
		// Calibrate the disk with transfers of this configuration's
		// partition size, and the engine at its training shape.
		cal, err := realrun.ShapeProfile(st, h, base)
		if err != nil {
			return r, fmt.Errorf("validate: calibrate: %w", err)
		}
		type run struct {
			name     string
			cmp      realrun.Comparison
			diskBusy float64
		}
		var runs []run
		for _, name := range ValidateOrderings {
			pl, err := orderings.Build(name, vc.P, vc.C, orderings.Belady, 0)
			if err != nil {
				return r, err
			}
			// The median of three runs: the machine is shared and noisy.
			cmp, ep, err := realrun.RunAndCompare(st, pl, h, cal.Profile, realrun.CompareOptions{Epochs: 1, Repeats: ValidateRepeats, Prefetch: true, Seed: 1})
			if err != nil {
				return r, fmt.Errorf("validate %s %s: %w", label, name, err)
			}
			var busy float64
			for _, e := range ep.IO {
				busy += e.End - e.Start
			}
			runs = append(runs, run{name, cmp, busy})
		}
		// The regime comes from the measurement: data-bound when the disk
		// was busier than the compute in most runs of the configuration.
		dataRuns := 0
		for _, rn := range runs {
			if rn.diskBusy > rn.cmp.Measured.ComputeSeconds {
				dataRuns++
			}
		}
		regime := "compute-bound"
		if 2*dataRuns >= len(runs) {
			regime = "data-bound"
		}
		s := Series{Name: label}
		for _, rn := range runs {
			m, p := rn.cmp.Measured, rn.cmp.Predicted
			e := rn.cmp.RelativeError.EpochSeconds
			ok := math.Abs(e) <= 0.15
			if !ok {
				misses++
			}
			r.Rows = append(r.Rows, []string{label, regime, rn.name, f1(m.EpochSeconds), f1(p.EpochSeconds), fmt.Sprintf("%+.1f", 100*e), yesNo(ok),
				f1(m.StallSeconds), f1(p.StallSeconds), f1(m.ComputeSeconds), f1(p.ComputeSeconds), f1(rn.diskBusy),
				yesNo(m.ReadBytes == p.ReadBytes), yesNo(m.WriteBytes == p.WriteBytes), strconv.Itoa(m.Swaps)})
			s.X, s.Y = append(s.X, m.EpochSeconds), append(s.Y, p.EpochSeconds)
			hi = math.Max(hi, math.Max(m.EpochSeconds, p.EpochSeconds))
		}
		scatter.Series = append(scatter.Series, s)
		// Ranking: wherever two measured times differ by more than 5%,
		// the prediction must order them the same way.
		sort.SliceStable(runs, func(a, b int) bool { return runs[a].cmp.Measured.EpochSeconds < runs[b].cmp.Measured.EpochSeconds })
		for a := 0; a < len(runs); a++ {
			for b := a + 1; b < len(runs); b++ {
				ma, mb := runs[a].cmp.Measured.EpochSeconds, runs[b].cmp.Measured.EpochSeconds
				if mb > 1.05*ma && runs[b].cmp.Predicted.EpochSeconds <= runs[a].cmp.Predicted.EpochSeconds {
					rankMisses++
					notes = append(notes, fmt.Sprintf("%s: measured %s (%.1f s) < %s (%.1f s) but predicted the other way", label, runs[a].name, ma, runs[b].name, mb))
				}
			}
		}
		d := cal.Profile.Disk
		notes = append(notes, fmt.Sprintf("%s — %s: %s. Calibrated at this shape: engine %.0f edges/s; disk with %.1f MB transfers read %.0f MB/s, write %.0f MB/s, both at once %.0f MB/s, latency %.0f µs.",
			label, regime, vc.Why, float64(cal.Profile.CPU.Train.Dot.Edges), float64(st.M.PartitionBytes)/1e6, float64(d.Read)/1e6, float64(d.Write)/1e6, cal.BothBW/1e6, float64(d.Latency)/1e3))
	}
	scatter.Series = append(scatter.Series, Series{Name: "y = x", X: []float64{0, 1.1 * hi}, Y: []float64{0, 1.1 * hi}})
	r.Charts = []Chart{scatter}
	r.Notes = append([]string{
		fmt.Sprintf("Each measured figure is the median of %d runs of one epoch (2 training workers); each prediction is one simulation of the same Plan.", ValidateRepeats),
		fmt.Sprintf("%d of %d epochs predicted within 15%%; %d ranking disagreements where measured times differ by more than 5%%; bytes equal in every run.", len(r.Rows)-misses, len(r.Rows), rankMisses),
		fmt.Sprintf("Run time of the whole experiment: %.1f min.", time.Since(start).Minutes()),
	}, notes...)
	for _, row := range r.Rows {
		if row[12] != "yes" || row[13] != "yes" {
			return r, fmt.Errorf("validate: %s %s: measured and predicted bytes differ", row[0], row[2])
		}
	}
	return r, nil
}

func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

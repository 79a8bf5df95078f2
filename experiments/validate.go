package experiments

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/diskcap"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/validate"
	"github.com/tierflow/tierflow/workload"
)

func init() {
	register(Experiment{Name: "validate", Description: "Validate the simulator against real runs on this machine: two datasets × two dimensions × four orderings, half compute-bound, half data-bound (takes minutes)", Run: Validate, Slow: true})
}

// ValidateConfig is one dataset/dimension configuration of the validation.
type ValidateConfig struct {
	Dataset   string
	Scale     float64
	Model     workload.Model
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
	{"twitter", 0.01, workload.Dot, 64, 100, 10000, 8, 3, "dense graph, 100 negatives: ~77k FLOPs per edge against ~27 MB partitions read 5–11 times"},
	{"twitter", 0.005, workload.Dot, 128, 100, 10000, 8, 3, "dense graph, 100 negatives: ~154k FLOPs per edge"},
	{"freebase86m", 0.005, workload.Dot, 128, 4, 1000, 32, 3, "sparse graph, 4 negatives, p=32: ~6k FLOPs per edge, partitions read 8–19 times"},
	{"freebase86m", 0.005, workload.Dot, 256, 4, 1000, 32, 3, "as above with partitions twice as large"},
}

// ValidateExtra is a configuration the model was not tuned on, picked
// without measuring it: a LiveJournal-shaped social graph (14 edges a
// node) at a scale whose epoch should take roughly 10–30 s with the SIMD
// engine (~18M training edges at about a million edges a second at
// d = 100), trained like the Twitter ones with 100 negatives, at p = 16
// and c = 4. Legend is defined for c = 3 only, so its column is skipped
// with the reason; the other orderings run. `make reproduce-validate-extra`
// runs it through the same code as the validation.
var ValidateExtra = ValidateConfig{"livejournal", 0.3, workload.Dot, 100, 100, 10000, 16, 4,
	"social graph (14 edges a node), 100 negatives, d=100: ~120k FLOPs per edge; not tuned on, picked before it was measured"}

// ValidateRepeats is how many times each ordering runs (the median counts).
const ValidateRepeats = 3

// ValidateTolerance is how close a prediction must be to the measured
// epoch to count as right (a fraction of the measured time).
const ValidateTolerance = 0.10

// validateOldTolerance is the criterion of the earlier runs, still
// counted in a note so the two can be compared.
const validateOldTolerance = 0.15

// ValidateOrderings are compared in every configuration.
var ValidateOrderings = []string{"beta", "hilbert", "hilbert-symmetric", "legend"}

func init() {
	register(Experiment{Name: "validate-extra", Description: "Validate the simulator against real runs on one configuration it was not tuned on (ValidateExtra: LiveJournal-shaped, d=100, p=16, c=4), same method as validate (takes minutes)", Run: ValidateUntuned, Slow: true})
}

// Validate runs every configuration and ordering for real, one epoch
// a run, and simulates the same Plan on a profile calibrated beforehand:
// the disk from O_DIRECT scratch transfers, the CPU engine from synthetic
// in-memory buckets at each configuration's training shape. Nothing of
// the runs feeds the predictions.
func Validate() (Result, error) {
	return runValidation("validate", "Predicted (realrun system model, calibrated profile) vs measured epoch, median of interleaved repeats on this machine", ValidateConfigs, defaultValidateOptions())
}

// ValidateUntuned is Validate on ValidateExtra alone.
func ValidateUntuned() (Result, error) {
	return runValidation("validate-extra", "Predicted vs measured epoch on a configuration the model was not tuned on, median of interleaved repeats on this machine", []ValidateConfig{ValidateExtra}, defaultValidateOptions())
}

// validateOptions say how runValidation runs its configurations.
type validateOptions struct {
	// orderings are compared in every configuration (those not defined
	// at its (p, c) are skipped with the reason).
	orderings []string
	// tolerance is the criterion of the "within" column and count;
	// looser is counted beside it in a note, which names it looserWhat.
	tolerance, looser float64
	looserWhat        string
	// limits: every configuration runs once under each, the process
	// moved into a cgroup holding the disk to it (diskcap.Apply) for
	// the preparation, the calibration and the runs; a zero Limits runs
	// on the disk as it is.
	limits []diskcap.Limits
	// extra, when set, adds notes on a configuration's runs.
	extra func(label string, runs []orderingRuns) []string
	// remeasure measures the disk again just before and just after
	// every run (validate.CompareOptions.DiskScratch) and predicts with
	// the mean of the two.
	remeasure bool
	// decompose predicts every kept run twice more: with the
	// configuration's calibration and with the disk as it ran
	// (validate.Decomposition).
	decompose bool
	// roundDisk measures the disk (outside any limit) once before every
	// round of repeats (every ordering once) and predicts that round's
	// runs with it: the disk beneath a limit as it was minutes, not a
	// quarter of an hour, before the run, at about a tenth of remeasure's
	// cost.
	roundDisk bool
	// probe scores beside the configuration's calibration the same
	// calibration completed with probes of its orderings
	// (validate.Probe: the first buckets of each Plan run by the
	// engine), where no limit holds the disk.
	probe bool
	// history widens each configuration's spread by the drift of every
	// rate measured before its runs (calibrate.History): the earlier
	// configurations' calibrations, the disk measured around their runs
	// and the engine's rate as their runs trained.
	history bool
}

// defaultValidateOptions are the validate and validate-extra experiments':
// ValidateOrderings, ValidateTolerance, the disk as it is, re-measured
// around every run.
func defaultValidateOptions() validateOptions {
	return validateOptions{orderings: ValidateOrderings, tolerance: ValidateTolerance, looser: validateOldTolerance,
		looserWhat: "the criterion of earlier runs, for comparison", limits: []diskcap.Limits{{}}, remeasure: true, decompose: true, probe: true, history: true}
}

// limitLabel begins the label of a configuration run under l ("" for no
// limit): "150MB/s " when reads and writes are held to the same rate.
func limitLabel(l diskcap.Limits) string {
	if l.Zero() {
		return ""
	}
	if l.Read == l.Write {
		return fmt.Sprintf("%.0fMB/s ", float64(l.Read)/1e6)
	}
	return fmt.Sprintf("read %.0fMB/s write %.0fMB/s ", float64(l.Read)/1e6, float64(l.Write)/1e6)
}

// validateTally counts a validation's outcomes over its configurations.
type validateTally struct {
	epochs, within, withinOld, rankOld, rankNonOverlap int
	// over counts the epochs predicted slower than measured.
	over int
	// drifted counts the epochs whose disk, measured before and after
	// the run, moved by more than ValidateTolerance; missDrifted those of
	// them that missed it.
	drifted, missDrifted int
	// decomposed counts the epochs predicted three ways
	// (validateOptions.decompose); withinCal and withinAsRan those within
	// the tolerance with the configuration's calibration and with the
	// disk as it ran.
	decomposed, withinCal, withinAsRan int
	// ranged counts the epochs whose calibration carried a spread,
	// inRange those of them inside the calibration's range;
	// withinAsRanAll those within the tolerance with the disk and the
	// engine as they ran.
	ranged, inRange, withinAsRanAll int
	// probed counts the epochs also predicted with the calibration
	// completed by probes (validateOptions.probe); withinProbed and
	// inRangeProbed as withinCal and inRange.
	probed, withinProbed, inRangeProbed int
	// hist is every rate measured so far (validateOptions.history).
	hist calibrate.History
	// histEntries is how many measurements the last configuration's
	// drift was over.
	histEntries int
	hi          float64
}

func runValidation(name, title string, configs []ValidateConfig, o validateOptions) (Result, error) {
	start := time.Now()
	within := fmt.Sprintf("within %.0f%%", 100*o.tolerance)
	r := Result{
		Name:  name,
		Title: title,
		Header: []string{"config", "regime", "ordering", "measured s", "measured min s", "measured max s", "predicted s", "error %", within,
			"stall measured s", "stall predicted s", "compute measured s", "compute measured min s", "compute measured max s", "compute predicted s",
			"disk busy measured s", "disk drift %", "read bytes equal", "write bytes equal", "swaps",
			"predicted with the configuration's calibration s", "its error %", "run ÷ predicted read rate", "run ÷ predicted write rate",
			"predicted with the disk as it ran s", "its error %",
			"calibration's range s", "in range", "run ÷ predicted engine rate", "predicted with the disk and engine as they ran s", "its error %",
			"predicted with the calibration and its probes s", "its error %", "its range s", "in its range"},
	}
	base, err := os.MkdirTemp("", "tierflow-validate-*")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(base)
	scatter := Chart{File: name, Title: "Validation: predicted vs measured epoch time", XLabel: "measured (s)", YLabel: "predicted (s)", Scatter: true}
	var t validateTally
	var notes, limitNotes []string
	var window time.Duration // the kernel's throttle slice where a limit held
	for li, lim := range o.limits {
		before := t
		err := func() (err error) {
			if !lim.Zero() {
				g, err := diskcap.Apply(base, lim)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				lim, window = g.Limits, g.Limits.Window // with the device's throttle slice
				defer func() { err = errors.Join(err, g.Release()) }()
			}
			for ci, vc := range configs {
				dir := filepath.Join(base, strconv.Itoa(ci))
				if len(o.limits) > 1 {
					dir = filepath.Join(base, fmt.Sprintf("%d-%d", li, ci))
				}
				if err := validateConfig(vc, dir, base, lim, o, &r, &scatter, &t, &notes); err != nil {
					return err
				}
				// The next configuration (or limit) prepares its own.
				if len(o.limits) > 1 {
					if err := os.RemoveAll(dir); err != nil {
						return err
					}
				}
			}
			return nil
		}()
		if err != nil {
			return r, err
		}
		if !lim.Zero() {
			n := t.epochs - before.epochs
			limitNotes = append(limitNotes, fmt.Sprintf("Disk held to %s: %d of %d epochs within %.0f%%, %d within %.0f%%; %d predicted slower than measured, %d faster; %d ranking disagreements with non-overlapping ranges.",
				lim, t.within-before.within, n, 100*o.tolerance, t.withinOld-before.withinOld, 100*o.looser, t.over-before.over, n-(t.over-before.over), t.rankNonOverlap-before.rankNonOverlap))
		}
	}
	scatter.Series = append(scatter.Series, Series{Name: "y = x", X: []float64{0, 1.1 * t.hi}, Y: []float64{0, 1.1 * t.hi}})
	r.Charts = []Chart{scatter}
	method := fmt.Sprintf("Each measured figure is the median of %d runs of one epoch (2 training workers), the repeats interleaved across orderings (every ordering once, then every ordering again, …) so that drift of the machine hits every ordering alike; the min and max of the %d runs stand beside the median. Each prediction is one simulation of the same Plan with the disk and checksum rate measured just before and just after the median run (the mean of the two; the engine and interference are calibrated once per configuration); disk drift is how far those two measurements differ (the larger change of the read and the write rate).", ValidateRepeats, ValidateRepeats)
	if !o.remeasure {
		method = fmt.Sprintf("Each measured figure is the median of %d runs of one epoch (2 training workers), the repeats interleaved across orderings (every ordering once, then every ordering again, …) so that drift of the machine hits every ordering alike; the min and max of the %d runs stand beside the median. Each prediction is one simulation of the same Plan on the profile calibrated once per configuration and disk limit (engine at the training shape, and interference, inside the limited cgroup; the disk's own rates with transfers of the partition size, and the checksum rate, with the process stepped out of the group), the disk held to the limit as the kernel holds it (blk-throttle: per direction, the limit's allowance granted one %d ms slice at a time, at the disk's own rates until it is spent, then nothing until the next slice); the disk is not measured again around each run, so the disk drift column is 0.", ValidateRepeats, ValidateRepeats, window.Milliseconds())
	}
	head := []string{method}
	if o.remeasure {
		head = append(head, fmt.Sprintf("The disk drifted by more than %.0f%% between the measurements before and after the run in %d of %d epochs, %d of them among the %d misses.", 100*o.tolerance, t.drifted, t.epochs, t.missDrifted, t.epochs-t.within))
	}
	if t.decomposed > 0 {
		head = append(head, fmt.Sprintf("The same runs predicted three ways, within %.0f%%: %d of %d with the configuration's calibration (made before its runs), %d with the disk measured just before and after each run (the prediction above), %d with the disk as it ran (its rates scaled, per direction, by how much faster the run's own transfers moved than the prediction's: the run ÷ predicted columns). Close with the disk as it ran and far with the disk measured around the run says the disk moved at another speed during the run than in the measurements beside it; far in both says the model's logic.",
			100*o.tolerance, t.withinCal, t.decomposed, t.within, t.withinAsRan))
		head = append(head, fmt.Sprintf("With the configuration's calibration (made before its runs, the figure a user has): %d of %d epochs within %.0f%%. Its range over the calibration's measured spread (the disk's pairs and passes, the engine's rounds before and after the disk: the calibration's minutes) contains the measured epoch in %d of %d epochs. With the disk and the engine as they ran (the engine's rate scaled by the run's predicted over measured compute): %d of %d.",
			t.withinCal, t.decomposed, 100*o.tolerance, t.inRange, t.ranged, t.withinAsRanAll, t.decomposed))
	}
	if o.history {
		head = append(head, fmt.Sprintf("Each configuration's range is the calibration's spread widened by the drift of the rates measured before its runs (calibrate.History: every earlier calibration, the disk measured around the earlier runs, the engine's rate as they trained; the first configuration has its calibration's own spread alone); the last configuration's drift was over %d measurements.", t.histEntries))
	}
	if t.probed > 0 {
		head = append(head, fmt.Sprintf("The same calibration completed by probes (validate.Probe: the first %.0f%% of each ordering's buckets run by the engine before the repeats, the disk's rates scaled by the probes' median transfer rates over the predicted, every engine rate by the probes' median compute rate over the predicted, the disk's and the engine's spread widened to hold every probe): %d of %d epochs within %.0f%%, %d of %d in its range.",
			100*validate.DefaultProbeFraction, t.withinProbed, t.probed, 100*o.tolerance, t.inRangeProbed, t.probed))
	}
	head = append(head,
		fmt.Sprintf("%d of %d epochs predicted within %.0f%%; %d of %d within %.0f%% (%s).", t.within, t.epochs, 100*o.tolerance, t.withinOld, t.epochs, 100*o.looser, o.looserWhat),
		fmt.Sprintf("Ranking disagreements: %d where the measured ranges (min–max of the repeats) of two orderings do not overlap and the prediction orders them the other way; %d by the old criterion (measured medians differ by more than 5%% and the prediction orders them the other way).", t.rankNonOverlap, t.rankOld),
		"Read and write bytes equal the prediction in every run (every repeat is checked).",
		fmt.Sprintf("Run time of the whole experiment: %.1f min.", time.Since(start).Minutes()))
	head = append(head, limitNotes...)
	r.Notes = append(head, notes...)
	return r, nil
}

// orderingRuns are one ordering's interleaved repeats.
type orderingRuns struct {
	name string
	cmps []validate.Comparison
	busy []float64 // disk busy seconds of each repeat
	// between is the seconds of each repeat spent between buckets (the
	// bucket's edges read, bookkeeping), which the model leaves out.
	between []float64
	// probed is the prediction with the configuration's calibration
	// completed by its probes, and its range (nil: not probed).
	probed *validate.Decomposition
}

// median is the index of the repeat whose epoch is the median (the upper
// one for an even count, as validate.RunAndCompare keeps).
func (o orderingRuns) median() int {
	idx := make([]int, len(o.cmps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		return o.cmps[idx[a]].Measured.EpochSeconds < o.cmps[idx[b]].Measured.EpochSeconds
	})
	return idx[len(idx)/2]
}

// span returns the min and max of f over the repeats.
func (o orderingRuns) span(f func(validate.Comparison) float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, c := range o.cmps {
		lo, hi = math.Min(lo, f(c)), math.Max(hi, f(c))
	}
	return lo, hi
}

func epochOf(c validate.Comparison) float64   { return c.Measured.EpochSeconds }
func computeOf(c validate.Comparison) float64 { return c.Measured.ComputeSeconds }

// rankPoint is one ordering as the ranking checks see it: its measured
// median and range and its prediction.
type rankPoint struct {
	name                        string
	measured, lo, hi, predicted float64
}

// rankPair is a ranking disagreement: the measurement puts fast before
// slow, the prediction does not.
type rankPair struct{ fast, slow rankPoint }

// rankDisagreements returns the pairs the prediction orders against the
// measurement, by the old criterion (medians more than 5% apart) and by
// the non-overlap one (the min–max ranges of the repeats are disjoint).
// A tie in the prediction counts as ordering them the other way.
func rankDisagreements(pts []rankPoint) (old, nonOverlap []rankPair) {
	for a := range pts {
		for b := range pts {
			pa, pb := pts[a], pts[b]
			if a == b || pb.predicted > pa.predicted {
				continue
			}
			// pa is measured faster, pb predicted no slower.
			if pb.measured > 1.05*pa.measured {
				old = append(old, rankPair{pa, pb})
			}
			if pa.hi < pb.lo {
				nonOverlap = append(nonOverlap, rankPair{pa, pb})
			}
		}
	}
	return old, nonOverlap
}

// computeSpread compares how much orderings differ in measured compute
// with how much the repeats of one ordering differ: between is the range
// of the orderings' median computes as a fraction of their mean; within
// is the mean over orderings of the range of their repeats as a fraction
// of their median; disjoint counts the pairs of orderings whose compute
// ranges do not overlap.
func computeSpread(medians, lo, hi []float64) (between, within float64, disjoint int) {
	if len(medians) == 0 {
		return 0, 0, 0
	}
	mn, mx, sum := math.Inf(1), math.Inf(-1), 0.0
	for i, m := range medians {
		mn, mx, sum = math.Min(mn, m), math.Max(mx, m), sum+m
		if m > 0 {
			within += (hi[i] - lo[i]) / m
		}
		for j := i + 1; j < len(medians); j++ {
			if hi[i] < lo[j] || hi[j] < lo[i] {
				disjoint++
			}
		}
	}
	if sum > 0 {
		between = (mx - mn) / (sum / float64(len(medians)))
	}
	return between, within / float64(len(medians)), disjoint
}

// validateConfig prepares, calibrates and runs one configuration: every
// ordering defined for (p, c) ValidateRepeats times, interleaved, and
// adds its rows, chart series, counts and notes.
func validateConfig(vc ValidateConfig, dir, scratch string, lim diskcap.Limits, o validateOptions, r *Result, scatter *Chart, t *validateTally, notes *[]string) error {
	label := fmt.Sprintf("%s%s@%g d=%d m=%d p=%d c=%d", limitLabel(lim), vc.Dataset, vc.Scale, vc.Dim, vc.Negatives, vc.P, vc.C)
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: vc.Dataset, Scale: vc.Scale, Seed: 1, P: vc.P, Dim: vc.Dim, Model: string(vc.Model), Workdir: dir})
	if err != nil {
		return fmt.Errorf("validate %s: %w", label, err)
	}
	h := validateHyper(vc)
	// Calibrate the disk with transfers of this configuration's
	// partition size, and the engine at its training shape.
	cal, err := calibrate.ShapeProfile(st, h, scratch)
	if err != nil {
		return fmt.Errorf("validate %s: calibrate: %w", label, err)
	}
	plans, skipped, err := orderings.Select(o.orderings, vc.P, vc.C, orderings.Belady, 0)
	if err != nil {
		return fmt.Errorf("validate %s: %w", label, err)
	}
	for _, sk := range skipped {
		*notes = append(*notes, fmt.Sprintf("%s: %s skipped: %s.", label, sk.Ordering, sk.Reason))
	}
	// The engine on each ordering's own bucket sequence, as its runs
	// will train it (calibrate.AddOrderings).
	if err := cal.AddOrderings(st, h, plans, ValidateRepeats, scratch); err != nil {
		return fmt.Errorf("validate %s: calibrate: %w", label, err)
	}
	prof := cal.Profile
	widen := func(p *devices.Profile) error { return nil }
	if o.history {
		t.hist.Add(time.Now(), st.M.PartitionBytes, cal.Profile)
		_, t.histEntries = t.hist.Drift()
		widen = func(p *devices.Profile) error {
			_, err := t.hist.Widen(p)
			return err
		}
	}
	var probe *validate.ProbeResult
	var probed devices.Profile
	if o.probe && lim.Zero() {
		p, res, err := validate.Probe(st, plans, h, cal.Profile, validate.ProbeOptions{Seed: 1, Prefetch: true})
		if err != nil {
			return fmt.Errorf("validate %s: calibrate: %w", label, err)
		}
		probed, probe = p, &res
		if err := widen(&probed); err != nil {
			return fmt.Errorf("validate %s: %w", label, err)
		}
	}
	if err := widen(&prof); err != nil {
		return fmt.Errorf("validate %s: %w", label, err)
	}
	cmpOpt := validate.CompareOptions{Epochs: 1, Repeats: 1, Prefetch: true, Seed: 1, DiskLimit: lim}
	if o.remeasure {
		cmpOpt.DiskScratch = scratch
	}
	cmpOpt.Decompose = o.decompose
	var round func() (calibrate.Calibration, error)
	if o.roundDisk {
		round = func() (calibrate.Calibration, error) { return calibrate.Disk(st, h, scratch) }
	}
	runs, rounds, err := runInterleaved(st, plans, h, prof, cmpOpt, label, round)
	if err != nil {
		return err
	}
	if probe != nil {
		// The calibration completed by its probes, scored beside it.
		for i, pl := range plans {
			rep, lo, hi, err := validate.PredictRange(st, pl, h, cmpOpt.Prefetch, probed)
			if err != nil {
				return fmt.Errorf("validate %s %s: %w", label, pl.Ordering, err)
			}
			runs[i].probed = &validate.Decomposition{CalibratedSeconds: rep.EpochSeconds, CalibratedLow: lo, CalibratedHigh: hi}
		}
	}
	if o.history {
		addRunsToHistory(&t.hist, st.M.PartitionBytes, cal.Profile, h, runs)
	}
	regime := regimeOf(runs)
	cMed, cLo, cHi := addRows(label, regime, runs, o, r, scatter, t, notes)
	if regime == "compute-bound" {
		*notes = append(*notes, computeSpreadNote(label, cMed, cLo, cHi))
	}
	*notes = append(*notes, configNote(label, regime, vc, st, cal, runs, rounds, lim))
	if probe != nil {
		*notes = append(*notes, probeNote(label, *probe))
	}
	if o.extra != nil {
		*notes = append(*notes, o.extra(label, runs)...)
	}
	return nil
}

// validateHyper is the training a validation configuration runs: its
// shape, on 2 workers.
func validateHyper(vc ValidateConfig) realrun.Hyper {
	return realrun.Hyper{Training: workload.Training{Model: vc.Model, Dim: vc.Dim, Batch: vc.Batch, Negatives: vc.Negatives}, DegreeFrac: 0.5, LR: 0.1, Workers: 2}
}

// runInterleaved runs every Plan ValidateRepeats times, interleaved
// (validate.Interleaved: repeat 1 of every ordering, then repeat 2, …),
// each run from freshly initialised partitions with the same seed, and
// checks its bytes. With round set, the disk is measured before every
// round and that round's runs are predicted with it (the measurements
// are returned).
func runInterleaved(st *store.Store, plans []*orderings.Plan, h realrun.Hyper, prof devices.Profile, opt validate.CompareOptions, label string,
	round func() (calibrate.Calibration, error)) ([]orderingRuns, []calibrate.Calibration, error) {
	runs := make([]orderingRuns, len(plans))
	for i, pl := range plans {
		runs[i].name = pl.Ordering
	}
	var rounds []calibrate.Calibration
	var measure func(rep int) (devices.Profile, error)
	if round != nil {
		measure = func(rep int) (devices.Profile, error) {
			cal, err := round()
			if err != nil {
				return prof, fmt.Errorf("disk before round %d: %w", rep+1, err)
			}
			rounds = append(rounds, cal)
			rp := prof
			rp.Disk, rp.CPU.Checksum = cal.Disk(), devices.Bandwidth(cal.ChecksumBW)
			return rp, nil
		}
	}
	err := validate.Interleaved(st, plans, h, prof, opt, ValidateRepeats, measure, func(rep, i int, cmp validate.Comparison, ep realrun.Epoch) error {
		m, p := cmp.Measured, cmp.Predicted
		if m.ReadBytes != p.ReadBytes || m.WriteBytes != p.WriteBytes {
			return fmt.Errorf("%s repeat %d: measured and predicted bytes differ", runs[i].name, rep+1)
		}
		var busy float64
		for _, e := range ep.IO {
			busy += e.End - e.Start
		}
		var between float64
		for k := 1; k < len(ep.Buckets); k++ {
			between += ep.Buckets[k].Start - ep.Buckets[k-1].End
		}
		runs[i].cmps = append(runs[i].cmps, cmp)
		runs[i].busy = append(runs[i].busy, busy)
		runs[i].between = append(runs[i].between, between)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("validate %s: %w", label, err)
	}
	return runs, rounds, nil
}

// regimeOf comes from the measurement: data-bound when the disk was
// busier than the compute in the median run of most orderings.
func regimeOf(runs []orderingRuns) string {
	dataRuns := 0
	for _, rn := range runs {
		k := rn.median()
		if rn.busy[k] > rn.cmps[k].Measured.ComputeSeconds {
			dataRuns++
		}
	}
	if 2*dataRuns >= len(runs) {
		return "data-bound"
	}
	return "compute-bound"
}

// addRows adds each ordering's median run as a row and a point of the
// scatter, counts it in t, notes the ranking disagreements, and returns
// the orderings' median, min and max compute.
func addRows(label, regime string, runs []orderingRuns, o validateOptions, r *Result, scatter *Chart, t *validateTally, notes *[]string) (cMed, cLo, cHi []float64) {
	s := Series{Name: label}
	var pts []rankPoint
	for _, rn := range runs {
		k := rn.median()
		cmp := rn.cmps[k]
		m, p := cmp.Measured, cmp.Predicted
		e := cmp.RelativeError.EpochSeconds
		ok := math.Abs(e) <= o.tolerance
		t.epochs++
		if ok {
			t.within++
		}
		if math.Abs(e) <= o.looser {
			t.withinOld++
		}
		if e > 0 {
			t.over++
		}
		if cmp.DiskDrift > o.tolerance {
			t.drifted++
			if !ok {
				t.missDrifted++
			}
		}
		decomposed := []string{"—", "—", "—", "—", "—", "—", "—", "—", "—", "—", "—"}
		if d := cmp.Decomposed; d != nil {
			t.decomposed++
			eCal, eRan := d.CalibratedSeconds/m.EpochSeconds-1, d.AsRanSeconds/m.EpochSeconds-1
			if math.Abs(eCal) <= o.tolerance {
				t.withinCal++
			}
			if math.Abs(eRan) <= o.tolerance {
				t.withinAsRan++
			}
			rng, in := "—", "—"
			if d.CalibratedHigh > 0 {
				t.ranged++
				if d.InCalibratedRange {
					t.inRange++
				}
				rng, in = f1(d.CalibratedLow)+"–"+f1(d.CalibratedHigh), yesNo(d.InCalibratedRange)
			}
			eAll := d.AsRanAllSeconds/m.EpochSeconds - 1
			if d.AsRanAllSeconds > 0 && math.Abs(eAll) <= o.tolerance {
				t.withinAsRanAll++
			}
			decomposed = []string{f1(d.CalibratedSeconds), fmt.Sprintf("%+.1f", 100*eCal), fmt.Sprintf("%.2f", d.ReadRatio), fmt.Sprintf("%.2f", d.WriteRatio),
				f1(d.AsRanSeconds), fmt.Sprintf("%+.1f", 100*eRan), rng, in, fmt.Sprintf("%.2f", d.EngineRatio), f1(d.AsRanAllSeconds), fmt.Sprintf("%+.1f", 100*eAll)}
		}
		probed := []string{"—", "—", "—", "—"}
		if u := rn.probed; u != nil {
			t.probed++
			eu := u.CalibratedSeconds/m.EpochSeconds - 1
			if math.Abs(eu) <= o.tolerance {
				t.withinProbed++
			}
			probed[0], probed[1] = f1(u.CalibratedSeconds), fmt.Sprintf("%+.1f", 100*eu)
			if u.CalibratedHigh > 0 {
				in := u.CalibratedLow <= m.EpochSeconds && m.EpochSeconds <= u.CalibratedHigh
				if in {
					t.inRangeProbed++
				}
				probed[2], probed[3] = f1(u.CalibratedLow)+"–"+f1(u.CalibratedHigh), yesNo(in)
			}
		}
		decomposed = append(decomposed, probed...)
		lo, hi := rn.span(epochOf)
		clo, chi := rn.span(computeOf)
		r.Rows = append(r.Rows, append([]string{label, regime, rn.name, f1(m.EpochSeconds), f1(lo), f1(hi), f1(p.EpochSeconds), fmt.Sprintf("%+.1f", 100*e), yesNo(ok),
			f1(m.StallSeconds), f1(p.StallSeconds), f1(m.ComputeSeconds), f1(clo), f1(chi), f1(p.ComputeSeconds), f1(rn.busy[k]), fmt.Sprintf("%.0f", 100*cmp.DiskDrift),
			yesNo(m.ReadBytes == p.ReadBytes), yesNo(m.WriteBytes == p.WriteBytes), strconv.Itoa(m.Swaps)}, decomposed...))
		s.X, s.Y = append(s.X, m.EpochSeconds), append(s.Y, p.EpochSeconds)
		t.hi = math.Max(t.hi, math.Max(m.EpochSeconds, p.EpochSeconds))
		pts = append(pts, rankPoint{name: rn.name, measured: m.EpochSeconds, lo: lo, hi: hi, predicted: p.EpochSeconds})
		cMed, cLo, cHi = append(cMed, m.ComputeSeconds), append(cLo, clo), append(cHi, chi)
	}
	scatter.Series = append(scatter.Series, s)
	old, nonOverlap := rankDisagreements(pts)
	t.rankOld += len(old)
	t.rankNonOverlap += len(nonOverlap)
	for _, d := range nonOverlap {
		*notes = append(*notes, fmt.Sprintf("%s: ranking disagreement (ranges do not overlap): measured %s %.2f s (%.2f–%.2f) < %s %.2f s (%.2f–%.2f) but predicted %.2f s ≥ %.2f s",
			label, d.fast.name, d.fast.measured, d.fast.lo, d.fast.hi, d.slow.name, d.slow.measured, d.slow.lo, d.slow.hi, d.fast.predicted, d.slow.predicted))
	}
	for _, d := range old {
		*notes = append(*notes, fmt.Sprintf("%s: ranking disagreement (old criterion, medians > 5%% apart): measured %s (%.1f s) < %s (%.1f s) but predicted the other way",
			label, d.fast.name, d.fast.measured, d.slow.name, d.slow.measured))
	}
	return cMed, cLo, cHi
}

// computeSpreadNote says whether orderings, which do identical arithmetic,
// differ in compute beyond the repeats' noise (computeSpread).
func computeSpreadNote(label string, cMed, cLo, cHi []float64) string {
	between, within, disjoint := computeSpread(cMed, cLo, cHi)
	verdict := "within the repeat noise: the orderings, which do identical arithmetic, do not differ in compute beyond it"
	if between > within {
		verdict = "beyond the repeat noise: the orderings, which do identical arithmetic, differ in compute by more than their repeats do"
	}
	return fmt.Sprintf("%s: compute spread between orderings %.1f%% (max−min of the median computes over their mean) against %.1f%% within an ordering (mean max−min of its repeats over its median); %d of %d ordering pairs have compute ranges that do not overlap — %s.",
		label, 100*between, 100*within, disjoint, len(cMed)*(len(cMed)-1)/2, verdict)
}

// configNote describes the configuration: its regime and why, the
// calibration, the disk as measured around the runs, and the share of an
// epoch the model leaves out (the time between buckets).
func configNote(label, regime string, vc ValidateConfig, st *store.Store, cal calibrate.Calibration, runs []orderingRuns, rounds []calibrate.Calibration, lim diskcap.Limits) string {
	gapHi := 0.0
	for _, rn := range runs {
		for k, c := range rn.cmps {
			gapHi = math.Max(gapHi, rn.between[k]/c.Measured.EpochSeconds)
		}
	}
	rlo, rhi, wlo, whi, clo, chi := math.Inf(1), 0.0, math.Inf(1), 0.0, math.Inf(1), 0.0
	for _, rn := range runs {
		for _, c := range rn.cmps {
			for _, d := range []*devices.Disk{c.DiskBefore, c.DiskAfter} {
				if d == nil {
					continue
				}
				rlo, rhi = math.Min(rlo, float64(d.Read)), math.Max(rhi, float64(d.Read))
				wlo, whi = math.Min(wlo, float64(d.Write)), math.Max(whi, float64(d.Write))
			}
			clo, chi = math.Min(clo, float64(c.Checksum)), math.Max(chi, float64(c.Checksum))
		}
	}
	d := cal.Profile.Disk
	around := fmt.Sprintf("Measured again before and after each run: read %.0f–%.0f MB/s, write %.0f–%.0f MB/s, checksums (mean of the two) %.1f–%.1f GB/s.", rlo/1e6, rhi/1e6, wlo/1e6, whi/1e6, clo/1e9, chi/1e9)
	if math.IsInf(rlo, 1) {
		// Not re-measured: say what the predictions used instead.
		t := lim.Hold(d).Throttle
		around = fmt.Sprintf("Disk held to %s; the predictions use the disk's own rates above (measured outside the limit) held to %.0f / %.0f MB/s (read / write) granted a %.0f ms slice at a time, checksums %.1f GB/s.", lim, float64(t.Read)/1e6, float64(t.Write)/1e6, float64(t.Window)/1e6, clo/1e9)
		if len(rounds) > 0 {
			around = fmt.Sprintf("Disk held to %s; before each round of repeats the disk's own rates were measured again outside the limit (%s), and that round's runs are predicted with them held to %.0f / %.0f MB/s (read / write) granted a %.0f ms slice at a time.",
				lim, roundRates(rounds), float64(t.Read)/1e6, float64(t.Write)/1e6, float64(t.Window)/1e6)
		}
	}
	return fmt.Sprintf("%s — %s: %s. Calibrated at this shape: engine %.0f edges/s%s; disk with %.1f MB transfers read %.0f MB/s, write %.0f MB/s, both at once %s, latency %.0f µs; interference (with checksums, as the loader and writer): training %.0f%% slower while I/O runs, I/O %.0f%% slower while training runs. %s Not modelled: the time between buckets (reading the bucket's edges, bookkeeping), at most %.1f%% of an epoch.",
		label, regime, vc.Why, float64(cal.Profile.CPU.Train.Dot.Edges), engineTimed(cal), float64(st.M.PartitionBytes)/1e6, float64(d.Read)/1e6, float64(d.Write)/1e6, cal.BothAtOnce(), float64(d.Latency)/1e3,
		100*cal.Profile.CPU.Interference.Compute, 100*cal.Profile.CPU.Interference.IO, around, 100*gapHi)
}

// engineTimed says how long the calibration timed the engine for and
// the extent of its rate ("" without its rounds).
func engineTimed(cal calibrate.Calibration) string {
	c := cal.Compute
	if c == nil || c.Rounds == 0 {
		return ""
	}
	return fmt.Sprintf(" (the median of %d rounds over %.1f s of training, %.0fk–%.0fk edges/s)", c.Rounds, c.Seconds, c.Low/1e3, c.High/1e3)
}

// roundRates lists the disk measured before each round: its rates alone
// and, with reads and writes at once, what the writes got beside the
// reads (where a limit on writes stops holding once it is below the
// limit).
func roundRates(rounds []calibrate.Calibration) string {
	parts := make([]string, len(rounds))
	for i, c := range rounds {
		parts[i] = fmt.Sprintf("round %d: read %.0f, write %.0f, writes beside reads %.0f MB/s", i+1, c.ReadBW/1e6, c.WriteBW/1e6, c.BothWriteBW/1e6)
	}
	return strings.Join(parts, "; ")
}

func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// probeNote says what a configuration's probes measured (validate.Probe).
func probeNote(label string, p validate.ProbeResult) string {
	parts := make([]string, len(p.Runs))
	for i, r := range p.Runs {
		parts[i] = fmt.Sprintf("%s %d of %d buckets in %.1f s (predicted %.1f s; reads %.2f×, writes %.2f×, %s)", r.Ordering, r.Buckets, r.Of, r.Seconds, r.PredictedSeconds, r.ReadRatio, r.WriteRatio, r.EngineWords())
	}
	return fmt.Sprintf("%s: probed in %.1f s — %s; scaled %s.",
		label, p.Seconds, strings.Join(parts, "; "), p.Applied())
}

// addRunsToHistory records in hist what a configuration's runs measured
// before the next configuration's: the disk measured before and after
// each run, and the engine's rate as each kept run trained (the
// calibration's rate for the model times the run's engine ratio, so that
// an ordering's own rate is not taken for drift).
func addRunsToHistory(hist *calibrate.History, partBytes int64, cal devices.Profile, h realrun.Hyper, runs []orderingRuns) {
	now := time.Now()
	for _, rn := range runs {
		for _, c := range rn.cmps {
			for _, d := range []*devices.Disk{c.DiskBefore, c.DiskAfter} {
				if d == nil {
					continue
				}
				var p devices.Profile
				p.Disk, p.CPU.Checksum = *d, c.Checksum
				hist.Add(now, partBytes, p)
			}
		}
		k := rn.median()
		d := rn.cmps[k].Decomposed
		tc, ok := cal.CPU.Train.For(string(h.Model))
		if d == nil || d.EngineRatio <= 0 || !ok || cal.CPU.TrainShape == nil {
			continue
		}
		var p devices.Profile
		p.CPU.TrainShape = cal.CPU.TrainShape
		tc.Edges = devices.EdgeRate(float64(tc.Edges) * d.EngineRatio)
		tc.Orderings = nil
		p.CPU.Train.Set(string(h.Model), tc)
		hist.Add(now, partBytes, p)
	}
}

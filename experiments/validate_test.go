package experiments

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/diskcap"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/validate"
	"github.com/tierflow/tierflow/workload"
)

func pairNames(ps []rankPair) [][2]string {
	out := [][2]string{}
	for _, p := range ps {
		out = append(out, [2]string{p.fast.name, p.slow.name})
	}
	return out
}

func TestRankDisagreements(t *testing.T) {
	tests := []struct {
		name            string
		pts             []rankPoint
		old, nonOverlap [][2]string
	}{
		{
			name: "prediction agrees",
			pts: []rankPoint{
				{name: "a", measured: 10, lo: 9, hi: 11, predicted: 9},
				{name: "b", measured: 20, lo: 19, hi: 21, predicted: 18},
			},
			old: [][2]string{}, nonOverlap: [][2]string{},
		},
		{
			name: "disjoint ranges predicted the other way count both ways",
			pts: []rankPoint{
				{name: "a", measured: 10, lo: 9, hi: 11, predicted: 19},
				{name: "b", measured: 20, lo: 19, hi: 21, predicted: 18},
			},
			old: [][2]string{{"a", "b"}}, nonOverlap: [][2]string{{"a", "b"}},
		},
		{
			name: "medians 10% apart but ranges overlap: old criterion only",
			pts: []rankPoint{
				{name: "a", measured: 10, lo: 8, hi: 12, predicted: 9},
				{name: "b", measured: 11, lo: 10.5, hi: 13, predicted: 9},
			},
			old: [][2]string{{"a", "b"}}, nonOverlap: [][2]string{},
		},
		{
			name: "medians 3% apart with disjoint ranges: non-overlap only",
			pts: []rankPoint{
				{name: "a", measured: 10, lo: 9.9, hi: 10.1, predicted: 12},
				{name: "b", measured: 10.3, lo: 10.2, hi: 10.4, predicted: 11},
			},
			old: [][2]string{}, nonOverlap: [][2]string{{"a", "b"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old, nonOverlap := rankDisagreements(tc.pts)
			assert.Equal(t, tc.old, pairNames(old))
			assert.Equal(t, tc.nonOverlap, pairNames(nonOverlap))
		})
	}
}

func TestComputeSpread(t *testing.T) {
	tests := []struct {
		name            string
		med, lo, hi     []float64
		between, within float64
		disjoint        int
	}{
		{"none", nil, nil, nil, 0, 0, 0},
		// Medians 9, 10, 11 (mean 10): between (11−9)/10 = 20%; repeat
		// ranges 0.9/9, 1/10, 1.1/11 = 10% each; 9's range [8.5, 9.4]
		// lies below both others; 10's [9.5, 10.5] touches 11's
		// [10.5, 11.6], which counts as overlapping.
		{"beyond the noise", []float64{9, 10, 11}, []float64{8.5, 9.5, 10.5}, []float64{9.4, 10.5, 11.6}, 0.2, 0.1, 2},
		// Medians 10 and 10.5: between 0.5/10.25; ranges 2/10 and 2.1/10.5 = 20%.
		{"within the noise", []float64{10, 10.5}, []float64{9, 9.5}, []float64{11, 11.6}, 0.5 / 10.25, 0.2, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, w, d := computeSpread(tc.med, tc.lo, tc.hi)
			assert.InDelta(t, tc.between, b, 1e-12)
			assert.InDelta(t, tc.within, w, 1e-12)
			assert.Equal(t, tc.disjoint, d)
		})
	}
}

func TestOrderingRunsMedianAndSpan(t *testing.T) {
	rep := func(epoch, compute float64) validate.Comparison {
		return validate.Comparison{Measured: report.Report{EpochSeconds: epoch, ComputeSeconds: compute}}
	}
	o := orderingRuns{name: "x", cmps: []validate.Comparison{rep(12, 8), rep(10, 9), rep(11, 7)}}
	assert.Equal(t, 2, o.median(), "the 11 s epoch is the median")
	lo, hi := o.span(epochOf)
	assert.Equal(t, [2]float64{10, 12}, [2]float64{lo, hi})
	lo, hi = o.span(computeOf)
	assert.Equal(t, [2]float64{7, 9}, [2]float64{lo, hi})
	// An even count keeps the upper median, as validate.RunAndCompare does.
	o.cmps = append(o.cmps, rep(13, 8))
	assert.Equal(t, 0, o.median(), "sorted 10 11 12 13: index 2 of the sorted is the 12 s epoch")
}

func TestValidateRegistrationAndExtraConfig(t *testing.T) {
	for _, name := range []string{"validate", "validate-extra"} {
		e, err := Lookup(name)
		require.NoError(t, err)
		assert.True(t, e.Slow, "%s runs real training for minutes", name)
	}
	assert.NotContains(t, ValidateConfigs, ValidateExtra, "the extra configuration is one the model was not tuned on")
	// At least three of the orderings must be defined for its (p, c).
	defined := 0
	for _, n := range ValidateOrderings {
		if _, err := orderings.Build(n, ValidateExtra.P, ValidateExtra.C, orderings.Belady, 0); err == nil {
			defined++
		} else {
			assert.ErrorIs(t, err, orderings.ErrNotApplicable, n)
		}
	}
	assert.GreaterOrEqual(t, defined, 3)
}

// TestValidateTinyEndToEnd runs the validation's code path for real on a
// configuration small enough for seconds: every ordering ValidateRepeats
// times, interleaved, bytes checked in every repeat.
func TestValidateTinyEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("trains for real (seconds)")
	}
	r, err := runValidation("validate-tiny", "tiny", []ValidateConfig{{"twitter", 0.0003, workload.Dot, 16, 10, 1000, 4, 3, "tiny"}}, defaultValidateOptions())
	require.NoError(t, err)
	require.Len(t, r.Rows, len(ValidateOrderings))
	med, lo, hi := col(t, r, "measured s"), col(t, r, "measured min s"), col(t, r, "measured max s")
	cmed, clo, chi := col(t, r, "compute measured s"), col(t, r, "compute measured min s"), col(t, r, "compute measured max s")
	col(t, r, "within 10%")
	num := func(s string) float64 {
		x, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		return x
	}
	for _, row := range r.Rows {
		assert.LessOrEqual(t, num(row[lo]), num(row[med]), row[2])
		assert.LessOrEqual(t, num(row[med]), num(row[hi]), row[2])
		assert.LessOrEqual(t, num(row[clo]), num(row[cmed]), row[2])
		assert.LessOrEqual(t, num(row[cmed]), num(row[chi]), row[2])
		assert.Equal(t, "yes", row[col(t, r, "read bytes equal")])
		assert.Equal(t, "yes", row[col(t, r, "write bytes equal")])
	}
	notes := strings.Join(r.Notes, "\n")
	assert.Contains(t, notes, "within 10%;")
	assert.Contains(t, notes, "within 15% (the criterion of earlier runs")
	assert.Contains(t, notes, "Ranking disagreements:")
	if r.Rows[0][1] == "compute-bound" {
		assert.Contains(t, notes, "compute spread between orderings")
	}
	require.Len(t, r.Charts, 1)
	assert.Len(t, r.Charts[0].Series, 2, "one configuration and y = x")
	// The calibration completed by probes is scored beside it.
	pr := col(t, r, "predicted with the calibration and its probes s")
	for _, row := range r.Rows {
		assert.Positive(t, num(row[pr]), row[2])
	}
	assert.Contains(t, notes, "probed in")
	assert.Contains(t, notes, "widened by the drift of the rates measured before its runs")
}

// TestRunsToHistory: the disk measured around each run and the engine's
// rate as the kept run trained (the calibration's times its ratio) join
// the history the next configuration's range is widened by.
func TestRunsToHistory(t *testing.T) {
	cal := devices.Profile{CPU: devices.CPU{Train: devices.CPUTrain{Dot: devices.TrainCost{Edges: 1e6, Orderings: map[string]devices.EdgeRate{"beta": 5e5}}},
		TrainShape: &devices.TrainShape{Model: "dot", Dim: 16}}}
	h := realrun.Hyper{Training: workload.Training{Model: workload.Dot, Dim: 16}}
	d := func(r float64) *devices.Disk { return &devices.Disk{Read: devices.Bandwidth(r), Write: 2e9} }
	cmp := func(before, after, epoch, ratio float64) validate.Comparison {
		c := validate.Comparison{DiskBefore: d(before), DiskAfter: d(after), Checksum: 5e9, Decomposed: &validate.Decomposition{EngineRatio: ratio}}
		c.Measured.EpochSeconds = epoch
		return c
	}
	runs := []orderingRuns{{name: "beta", cmps: []validate.Comparison{cmp(1e9, 1.2e9, 10, 0.8), cmp(1.1e9, 1.3e9, 11, 1.1), cmp(0.9e9, 1e9, 12, 2)}}}
	var hist calibrate.History
	addRunsToHistory(&hist, 14e6, cal, h, runs)
	require.Len(t, hist.Entries, 7, "six disk measurements and the kept run's engine")
	drift, _ := hist.Drift()
	assert.InDelta(t, 0.9/1.05, drift["disk.read"].Low, 1e-9, "reads 0.9–1.3 GB/s, median 1.05")
	assert.InDelta(t, 1.3/1.05, drift["disk.read"].High, 1e-9)
	last := hist.Entries[6]
	assert.Contains(t, last.Series, "engine")
	assert.InDelta(t, 1.1e6, last.Rates["cpu.train.dot.edges"], 1e-6, "the median run's ratio times the model's rate, not beta's own")
}

// TestValidateThrottledWiring checks the throttled validation without
// running it: registered as Slow, every limit applied to reads and
// writes, the 5% criterion, Legend run somewhere and at least five
// orderings in every configuration, and every configuration data-bound by
// construction: at the highest limit, reading an epoch's partitions takes
// longer than training all the graph's edges at the fastest engine rate
// measured here, for every ordering.
func TestValidateThrottledWiring(t *testing.T) {
	e, err := Lookup("validate-throttled")
	require.NoError(t, err)
	assert.True(t, e.Slow, "runs real training for many minutes")
	o := validateThrottledOptions()
	assert.Equal(t, 0.05, o.tolerance)
	assert.Equal(t, ValidateTolerance, o.looser)
	assert.False(t, o.remeasure, "the disk is calibrated inside the limit once per configuration")
	assert.True(t, o.roundDisk, "and measured again before every round of repeats")
	require.Len(t, o.limits, len(ValidateThrottledLimits))
	require.GreaterOrEqual(t, len(o.limits), 3)
	top := devices.Bandwidth(0)
	for i, l := range o.limits {
		assert.Equal(t, ValidateThrottledLimits[i], l.Read)
		assert.Equal(t, ValidateThrottledLimits[i], l.Write)
		top = max(top, l.Read)
		assert.Regexp(t, `^\d+MB/s $`, limitLabel(l))
	}
	assert.Equal(t, "", limitLabel(diskcap.Limits{}))
	require.Len(t, ValidateThrottledConfigs, 2)
	assert.NotEqual(t, ValidateThrottledConfigs[0].C, ValidateThrottledConfigs[1].C)
	ran := map[string]bool{}
	for _, vc := range ValidateThrottledConfigs {
		plans, skipped, err := orderings.Select(o.orderings, vc.P, vc.C, orderings.Belady, 0)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, len(plans), 5, "%+v: skipped %v", vc, skipped)
		pr, err := graph.LookupPreset(vc.Dataset)
		require.NoError(t, err)
		sc, err := pr.Scaled(vc.Scale)
		require.NoError(t, err)
		part := (workload.PartitionBytes(sc.Nodes, vc.P, vc.Dim, false) + store.Align - 1) / store.Align * store.Align
		compute := float64(sc.Edges) / validateThrottledEdgesPerSecond
		for _, pl := range plans {
			ran[pl.Ordering] = true
			read, _ := pl.Counts.Bytes(part)
			assert.Greater(t, float64(read)/float64(top), compute, "%s %s@%g p=%d c=%d: %d MB read at %.0f MB/s against %.2f s of compute",
				pl.Ordering, vc.Dataset, vc.Scale, vc.P, vc.C, read>>20, float64(top)/1e6, compute)
		}
	}
	for _, n := range ValidateThrottledOrderings {
		assert.True(t, ran[n], "%s runs in no configuration", n)
	}
}

// TestValidateDataBoundWiring checks the data-bound validation without
// running it: registered as Slow, the validation's method (the disk
// measured around every run, each run predicted three ways), at least
// five orderings per configuration, p ≥ 32 and c = 4, and every
// configuration data-bound for every ordering by the arithmetic its
// comment gives (reading an epoch's partitions at 1.2 GB/s against its
// edges at 0.7M edges/s), BETA allowed to sit at the boundary.
func TestValidateDataBoundWiring(t *testing.T) {
	e, err := Lookup("validate-databound")
	require.NoError(t, err)
	assert.True(t, e.Slow)
	o := defaultValidateOptions()
	assert.True(t, o.remeasure)
	assert.True(t, o.decompose)
	for _, vc := range ValidateDataBoundConfigs {
		assert.GreaterOrEqual(t, vc.P, 32)
		assert.Equal(t, 4, vc.C)
		plans, _, err := orderings.Select(ValidateThrottledOrderings, vc.P, vc.C, orderings.Belady, 0)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, len(plans), 5)
		pr, err := graph.LookupPreset(vc.Dataset)
		require.NoError(t, err)
		sc, err := pr.Scaled(vc.Scale)
		require.NoError(t, err)
		part := workload.PartitionBytes(sc.Nodes, vc.P, vc.Dim, false)
		compute := float64(sc.Edges) / 0.7e6
		for _, pl := range plans {
			read, _ := pl.Counts.Bytes(part)
			ratio := float64(read) / 1.2e9 / compute
			floor := 1.0
			if pl.Ordering == "beta" || pl.Ordering == "tierflow" {
				floor = 0.8
			}
			assert.Greater(t, ratio, floor, "%s %s@%g p=%d: I/O over compute", pl.Ordering, vc.Dataset, vc.Scale, vc.P)
			t.Logf("%s@%g p=%d %s: %d swaps, I/O over compute %.2f", vc.Dataset, vc.Scale, vc.P, pl.Ordering, pl.Counts.Swaps, ratio)
		}
	}
}

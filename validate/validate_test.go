package validate

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/workload"
)

// placeholder is a small Twitter-shaped work directory (p = 4), its
// training shape, and a profile whose disk and checksum run at 1 B/s, so
// that a prediction made with it unmeasured takes ages.
func placeholder(t *testing.T) (*store.Store, realrun.Hyper, devices.Profile) {
	t.Helper()
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: "twitter", Scale: 0.0001, Seed: 3, P: 4, Dim: 16, Model: string(workload.Dot), Workdir: filepath.Join(t.TempDir(), "work")})
	require.NoError(t, err)
	h := realrun.Hyper{Training: workload.Training{Model: workload.Dot, Dim: 16, Batch: 2000, Negatives: 50}, DegreeFrac: 0.5, LR: 0.1, Workers: 2}
	prof := devices.Profile{Name: "placeholder",
		Disk: devices.Disk{Read: 1, Write: 1, FullDuplex: true},
		CPU: devices.CPU{Workers: 2, Memory: 1 << 30, BatchEdges: 1e6, GatherBW: 1e9, Checksum: 1,
			Train: devices.CPUTrain{Dot: devices.TrainCost{Edges: 1e6, RowBW: 1e15, FLOPS: 1e15}}}}
	return st, h, prof
}

// TestDiskMeasuredAroundEachRun: with CompareOptions.DiskScratch the disk
// and checksum rate are measured just before and just after the run and
// the prediction uses the mean of the two (not the profile's placeholder
// figures); without it the profile is used as given.
func TestDiskMeasuredAroundEachRun(t *testing.T) {
	st, h, prof := placeholder(t)
	plan, err := orderings.Build("beta", 4, 3, orderings.Belady, 0)
	require.NoError(t, err)

	cmp, _, err := RunAndCompare(st, plan, h, prof, CompareOptions{Repeats: 1, Prefetch: true, Seed: 1, DiskScratch: t.TempDir()})
	require.NoError(t, err)
	assert.Greater(t, float64(cmp.Disk.Read), 1e6, "the disk was measured")
	assert.Greater(t, float64(cmp.Checksum), 1e6, "the checksum rate was measured")
	require.NotNil(t, cmp.DiskBefore)
	require.NotNil(t, cmp.DiskAfter)
	lo, hi := min(cmp.DiskBefore.Read, cmp.DiskAfter.Read), max(cmp.DiskBefore.Read, cmp.DiskAfter.Read)
	assert.True(t, lo <= cmp.Disk.Read && cmp.Disk.Read <= hi, "the mean of before %v and after %v, got %v", cmp.DiskBefore.Read, cmp.DiskAfter.Read, cmp.Disk.Read)
	assert.InDelta(t, diskDrift(*cmp.DiskBefore, *cmp.DiskAfter), cmp.DiskDrift, 1e-12)
	p := prof
	p.Disk, p.CPU.Checksum = cmp.Disk, cmp.Checksum
	pred, err := Predict(st, plan, h, true, p)
	require.NoError(t, err)
	assert.Equal(t, pred.EpochSeconds, cmp.Predicted.EpochSeconds, "the prediction used the measured disk")

	cmp, _, err = RunAndCompare(st, plan, h, prof, CompareOptions{Repeats: 1, Prefetch: true, Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, prof.Disk, cmp.Disk)
	assert.Nil(t, cmp.DiskBefore)
	assert.Zero(t, cmp.DiskDrift)
	assert.Greater(t, cmp.Predicted.EpochSeconds, 1e3, "1 B/s disk: the placeholder profile predicts ages")
}

func TestDiskDrift(t *testing.T) {
	a := devices.Disk{Read: 100, Write: 50}
	b := devices.Disk{Read: 300, Write: 50}
	assert.InDelta(t, 2, diskDrift(a, b), 1e-9, "reads tripled")
	assert.InDelta(t, 2.0/3, diskDrift(b, a), 1e-9)
	assert.InDelta(t, 0.5, diskDrift(a, devices.Disk{Read: 100, Write: 75}), 1e-9, "the larger of the two changes")
	assert.Zero(t, diskDrift(devices.Disk{}, b), "nothing measured before: no drift")
}

// TestCompareSimExecutesTheSavedPlan: realrun --plan FILE --compare-sim
// runs and predicts the Plan in FILE as saved — here a random order drawn
// with seed 7 — not one rebuilt from its ordering name and the run's seed
// (which was the behaviour before: random with seed 1, another order with
// another number of swaps).
func TestCompareSimExecutesTheSavedPlan(t *testing.T) {
	dir := t.TempDir()
	saved, err := orderings.Build("random", 8, 3, orderings.Belady, 7)
	require.NoError(t, err)
	rebuilt, err := orderings.Build("random", 8, 3, orderings.Belady, 1)
	require.NoError(t, err)
	require.NotEqual(t, saved.Counts, rebuilt.Counts, "the test needs two orders that differ in their counts")
	planFile := filepath.Join(dir, "plan.json")
	require.NoError(t, atomicfile.Write(planFile, saved.WriteJSON))
	prof := devices.Profile{Name: "placeholder",
		Disk: devices.Disk{Read: 1e9, Write: 1e9, FullDuplex: true},
		CPU: devices.CPU{Workers: 1, Memory: 1 << 30, BatchEdges: 1e6, GatherBW: 1e9,
			Train: devices.CPUTrain{Dot: devices.TrainCost{Edges: 1e6, RowBW: 1e15, FLOPS: 1e15}}}}
	data, err := prof.YAML()
	require.NoError(t, err)
	devFile := filepath.Join(dir, "dev.yaml")
	require.NoError(t, os.WriteFile(devFile, data, 0o644))

	o := job.Defaults
	o.Dataset, o.Scale, o.Dim, o.Batch, o.Negatives, o.Workers, o.Seed = "twitter", 0.0002, 8, 500, 10, 1, 1
	o.PlanFile, o.Workdir = planFile, filepath.Join(dir, "work")
	out, err := CompareSim(o, devFile, nil, io.Discard)
	require.NoError(t, err)
	require.Len(t, out.Results, 1)
	c := out.Results[0]
	assert.True(t, c.CountsMatch)
	assert.Equal(t, saved.Counts, c.Measured.Counts, "the engine executed the saved Plan")
	assert.Equal(t, saved.Counts, c.Predicted.Counts, "the simulator predicted the saved Plan")
	assert.Equal(t, "random", c.Ordering)
}

// TestDecomposition: the two extra predictions. The calibrated one uses
// the profile as given (here a 1 B/s placeholder disk: ages), the other
// two the disk measured around the run; the run's own transfer rates
// against the prediction's give the ratios, and predicting with the disk
// scaled by them moves the epoch the way the ratios say.
func TestDecomposition(t *testing.T) {
	st, h, prof := placeholder(t)
	plan, err := orderings.Build("hilbert", 4, 2, orderings.Belady, 0)
	require.NoError(t, err)
	cmp, _, err := RunAndCompare(st, plan, h, prof, CompareOptions{Repeats: 1, Prefetch: true, Seed: 1, DiskScratch: t.TempDir(), Decompose: true})
	require.NoError(t, err)
	d := cmp.Decomposed
	require.NotNil(t, d)
	assert.Greater(t, d.CalibratedSeconds, 1e3, "the profile as given: a 1 B/s disk")
	assert.Positive(t, d.ReadRatio)
	assert.Positive(t, d.WriteRatio)
	assert.InDelta(t, float64(cmp.Disk.Read)*d.ReadRatio, float64(d.AsRanDisk.Read), 1)
	assert.InDelta(t, float64(cmp.Disk.Write)*d.WriteRatio, float64(d.AsRanDisk.Write), 1)
	if d.ReadRatio > 1 && d.WriteRatio > 1 {
		assert.LessOrEqual(t, d.AsRanSeconds, cmp.Predicted.EpochSeconds, "a faster disk: no longer")
	}
	if d.ReadRatio < 1 && d.WriteRatio < 1 {
		assert.GreaterOrEqual(t, d.AsRanSeconds, cmp.Predicted.EpochSeconds, "a slower disk: no shorter")
	}
}

func TestTransferRatios(t *testing.T) {
	rep := func(readBusy, writeBusy float64) report.Report {
		return report.Report{ReadBytes: 100e6, WriteBytes: 50e6, Resources: []report.ResourceUsage{
			{Name: report.DiskRead, BusySeconds: readBusy}, {Name: report.DiskWrite, BusySeconds: writeBusy}}}
	}
	for _, tc := range []struct {
		name                string
		measured, predicted report.Report
		checksum            devices.Bandwidth
		wantRead, wantWrite float64
	}{
		{"as predicted", rep(0.1, 0.1), rep(0.1, 0.1), 0, 1, 1},
		{"twice as fast", rep(0.05, 0.05), rep(0.1, 0.1), 0, 2, 2},
		{"the loads' checksum taken out", rep(0.11, 0.1), rep(0.1, 0.1), 10e9, 1, 1},
		{"nothing predicted busy", rep(0.1, 0.1), rep(0, 0.1), 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w := transferRatios(tc.measured, tc.predicted, tc.checksum)
			assert.InDelta(t, tc.wantRead, r, 1e-9)
			assert.InDelta(t, tc.wantWrite, w, 1e-9)
		})
	}
	d := scaleDisk(devices.Disk{Read: 100, Write: 50, Combined: 140}, 2, 1, 100, 100)
	assert.Equal(t, devices.Disk{Read: 200, Write: 50, Combined: 210}, d, "combined by the bytes' mix: 140 × 1.5")
	assert.Equal(t, devices.Disk{Read: 100, Write: 50}, scaleDisk(devices.Disk{Read: 100, Write: 50}, 0, 0, 1, 1), "a zero ratio leaves a side as is")
	assert.Equal(t, devices.Bandwidth(200), scaleDisk(devices.Disk{Read: 100, Write: 50, Combined: 110}, 2, 0.5, 1, 1).Combined, "no less than the faster side alone")
	assert.Equal(t, devices.Bandwidth(125), scaleDisk(devices.Disk{Read: 100, Write: 100, Combined: 200}, 1, 0.25, 1, 0).Combined, "no more than the sum")
}

func TestAsRanNote(t *testing.T) {
	cmp := func(err, asRan float64, eng ...float64) Comparison {
		d := &Decomposition{ReadRatio: 1.3, WriteRatio: 1.2, AsRanSeconds: 10 * (1 + asRan)}
		if len(eng) == 2 {
			d.EngineRatio, d.AsRanEngineSeconds, d.AsRanAllSeconds = 0.8, 10*(1+eng[0]), 10*(1+eng[1])
		}
		return Comparison{Ordering: "beta", Measured: report.Report{EpochSeconds: 10}, RelativeError: report.RelativeError{EpochSeconds: err}, Decomposed: d}
	}
	assert.Empty(t, asRanNote(cmp(0.05, 0.01)), "close: nothing to say")
	assert.Empty(t, asRanNote(Comparison{RelativeError: report.RelativeError{EpochSeconds: 0.3}, Measured: report.Report{EpochSeconds: 1}}), "not decomposed")
	assert.Equal(t, "beta: predicted +20.0%; the run's own transfers moved 1.30× (reads) and 1.20× (writes) the predicted rate, and with the disk as it ran the model predicts 9.80 s (-2.0%): the disk's speed during the run explains the miss, not the model",
		asRanNote(cmp(0.2, -0.02)))
	assert.Equal(t, "beta: predicted +20.0%; the run's own transfers moved 1.30× (reads) and 1.20× (writes) the predicted rate, and with the disk as it ran the model predicts 11.50 s (+15.0%); the engine trained at 0.80× the profile's rate, and with the engine as it ran 10.30 s (+3.0%), with both 10.10 s (+1.0%): the engine's speed during the run explains the miss, not the model",
		asRanNote(cmp(0.2, 0.15, 0.03, 0.01)))
	for _, tt := range []struct {
		name           string
		disk, eng, all float64
		verdict        string
	}{
		{"neither", 0.15, 0.18, 0.14, "the model's logic does"},
		{"both needed", 0.15, 0.18, 0.02, "together explain the miss"},
		{"either", 0.01, 0.02, 0.0, "the disk's or the engine's speed"},
		{"disk", -0.02, 0.18, 0.0, "the disk's speed during the run explains the miss"},
	} {
		assert.Contains(t, asRanNote(cmp(0.2, tt.disk, tt.eng, tt.all)), tt.verdict, tt.name)
	}
	assert.Contains(t, asRanNote(cmp(0.2, 0.15)), "the model's logic does", "no engine figures, disk does not explain it")
}

package validate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/sim"
)

// TestPredictRange: a profile's spread gives a predicted range holding
// the prediction; without one there is none; a single-point prediction
// ignores a spread that scaled rates left behind (decompose).
func TestPredictRange(t *testing.T) {
	st, h, prof := placeholder(t)
	prof.Disk.Read, prof.Disk.Write, prof.CPU.Checksum = 500e6, 400e6, 2e9
	plan, err := orderings.Build("beta", 4, 3, orderings.Belady, 0)
	require.NoError(t, err)

	r, err := predictRange(st, plan, h, Engine{}, true, prof)
	require.NoError(t, err)
	assert.False(t, r.Has(), "no spread, no range")

	require.NoError(t, prof.SetSpread("disk.read", 300e6, 600e6))
	require.NoError(t, prof.SetSpread("cpu.train.dot.edges", 0.5e6, 1.5e6))
	pred, err := predict(st, plan, h, Engine{}, true, prof, false)
	require.NoError(t, err)
	r, err = predictRange(st, plan, h, Engine{}, true, prof)
	require.NoError(t, err)
	require.True(t, r.Has())
	assert.True(t, r.Contains(pred.EpochSeconds), "%v holds %v", r, pred.EpochSeconds)
	assert.Less(t, r.Low, r.High)

	_, err = predict(st, plan, h, Engine{}, true, scaleCompute(prof, 3), false)
	assert.NoError(t, err, "a rate scaled out of its spread is predicted as given")

	for _, tc := range []struct {
		measured float64
		in       bool
	}{{r.Low, true}, {r.High, true}, {(r.Low + r.High) / 2, true}, {r.Low * 0.99, false}, {r.High * 1.01, false}} {
		c := Comparison{Measured: report.Report{EpochSeconds: tc.measured}}
		c.setRange(r)
		assert.Equal(t, tc.in, c.InRange, "measured %v in %v", tc.measured, r)
		assert.Equal(t, r, c.PredictedRange())
	}
	c := Comparison{Measured: report.Report{EpochSeconds: 1}}
	c.setRange(sim.EpochRange{})
	assert.False(t, c.InRange)
	assert.False(t, c.PredictedRange().Has())
}

// TestDecomposeEngineAsRan: the engine's rate as it ran reaches the
// prediction whether or not the profile gives the ordering a rate of its
// own (cpu.train.dot.orderings). Scaling the model's edge rate alone left
// an ordering's own rate as it was, so that "with the engine as it ran"
// repeated the prediction.
func TestDecomposeEngineAsRan(t *testing.T) {
	st, h, prof := placeholder(t)
	prof.Disk.Read, prof.Disk.Write, prof.CPU.Checksum = 5e9, 5e9, 1e10 // compute-bound
	plan, err := orderings.Build("beta", 4, 3, orderings.Belady, 0)
	require.NoError(t, err)
	for _, own := range []bool{false, true} {
		p := prof
		p.CPU.Train.Dot = devices.TrainCost{Edges: 1e6}
		if own {
			p.CPU.Train.Dot.Orderings = map[string]devices.EdgeRate{"beta": 0.5e6}
		}
		pred, err := predict(st, plan, h, Engine{}, true, p, false)
		require.NoError(t, err)
		measured := pred
		measured.ComputeSeconds /= 2 // the engine ran twice as fast
		d, err := Decompose(st, plan, h, true, p, measured, pred)
		require.NoError(t, err)
		assert.InDelta(t, 2, d.EngineRatio, 1e-9)
		assert.Less(t, d.AsRanEngineSeconds, 0.75*pred.EpochSeconds, "own rate %v: the engine as it ran", own)
		assert.Less(t, d.AsRanAllSeconds, 0.75*pred.EpochSeconds, "own rate %v: both as they ran", own)
		if own {
			assert.Equal(t, devices.EdgeRate(0.5e6), p.CPU.Train.Dot.Orderings["beta"], "the profile is left as it was")
		}
	}
}

// "Both as they ran" takes the engine's ratio against the compute
// predicted with the disk as it ran: a run that went exactly as that
// prediction (its disk twice as fast as the profile's, and so less of its
// training slowed by transfers) is predicted with both as they ran at that
// prediction's epoch, not with the engine slowed by the transfers the
// profile's slower disk would have overlapped.
func TestDecomposeBothAsRanAgainstTheDisk(t *testing.T) {
	st, h, prof := placeholder(t)
	prof.Disk.Read, prof.Disk.Write, prof.CPU.Checksum = 1e7, 1e7, 1e15
	prof.CPU.Train.Dot = devices.TrainCost{Edges: 1e6}
	prof.CPU.Interference.Compute = 1 // training twice as long while a transfer runs
	plan, err := orderings.Build("beta", 4, 3, orderings.Belady, 0)
	require.NoError(t, err)
	pred, err := predict(st, plan, h, Engine{}, true, prof, false)
	require.NoError(t, err)
	fast := prof
	fast.Disk.Read, fast.Disk.Write = 2e7, 2e7
	ran, err := predict(st, plan, h, Engine{}, true, fast, false)
	require.NoError(t, err)
	require.Less(t, ran.ComputeSeconds, 0.99*pred.ComputeSeconds, "the slower disk overlaps more training")

	d, err := Decompose(st, plan, h, true, prof, ran, pred)
	require.NoError(t, err)
	assert.InDelta(t, 2, d.ReadRatio, 0.01)
	assert.InDelta(t, ran.EpochSeconds, d.AsRanSeconds, 0.01*ran.EpochSeconds, "the disk as it ran")
	assert.InDelta(t, ran.EpochSeconds, d.AsRanAllSeconds, 0.01*ran.EpochSeconds, "both as they ran: the run itself")
}

package experiments

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/calibrate"
)

// steadyTrace is a round every half second, each 0.4 s long, for secs
// seconds, at rate(t).
func steadyTrace(secs float64, rate func(t float64) float64) []calibrate.TimedRound {
	var out []calibrate.TimedRound
	for t := 0.5; t <= secs; t += 0.5 {
		out = append(out, calibrate.TimedRound{At: time.Duration(t * float64(time.Second)), Rate: rate(t), Seconds: 0.4})
	}
	return out
}

// TestScoreDrift: a steady engine is predicted exactly at every start;
// one that steps to twice its rate is missed by +100% by a sample taken
// before the step of runs after it, and not by one of the same side.
func TestScoreDrift(t *testing.T) {
	steady := scoreDrift(steadyTrace(400, func(float64) float64 { return 1e6 }), 10)
	// Starts every 5 s while start + 10 + 20 + 150 <= 400.
	assert.Equal(t, 45, steady.starts)
	assert.Equal(t, 45, steady.within)
	assert.Equal(t, 45, steady.held, "the stretches' extent (one rate) holds the run's median")
	assert.Zero(t, steady.sd)
	assert.Zero(t, steady.lo)
	assert.Zero(t, steady.hi)
	assert.InDelta(t, 0, steady.widthOfRange, 1e-12)

	step := scoreDrift(steadyTrace(400, func(t float64) float64 {
		if t < 200 {
			return 1e6
		}
		return 2e6
	}), 10)
	require.Equal(t, 45, step.starts)
	assert.InDelta(t, 1.0, step.hi, 1e-12, "a sample before the step, runs after it: the epoch predicted twice as long")
	assert.InDelta(t, 0.0, step.lo, 1e-12)
	assert.Less(t, step.within, step.starts)
	assert.Positive(t, step.sd)
	assert.Less(t, step.held, step.starts, "a steady sample's extent cannot hold a run at another rate")

	assert.Zero(t, scoreDrift(nil, 10).starts)
	assert.Zero(t, scoreDrift(steadyTrace(100, func(float64) float64 { return 1 }), 10).starts, "too short for a sample and its runs")
}

// TestRoundsIn: a window takes the rounds that ended in it, their rates
// and time.
func TestRoundsIn(t *testing.T) {
	tr := steadyTrace(5, func(t float64) float64 { return t })
	r := roundsIn(tr, 1, 2.5)
	assert.Equal(t, []float64{1, 1.5, 2}, r.Rates)
	assert.InDelta(t, 1.2, r.Seconds, 1e-12)
	assert.Equal(t, 1.5, medianOf(r.Rates))
	assert.Zero(t, medianOf(nil))
}

package simulated

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheorem3Formula(t *testing.T) {
	// The paper's constants (§4): t = 1e-7 s, w = 2 GB/s, r = 3 GB/s,
	// M = 15 GB, d = 100.
	assert.InDelta(t, 5.333e-7, Theorem3Threshold(100, 15e9, 2e9, 3e9, 1e-7), 1e-10)
	assert.Equal(t, 8, Theorem3Partitions(Theorem3Nodes, Theorem3Dim, Theorem3Buffer))
	assert.Equal(t, 7, Theorem3Partitions(41_600_000, 100, 15e9))
}

func TestTheorem3Sweep(t *testing.T) {
	pts, theta, err := LegendTheorem3Sweep()
	require.NoError(t, err)
	require.Len(t, pts, len(Theorem3Densities)+2)
	for i, pt := range pts {
		rep := pt.Report
		assert.GreaterOrEqual(t, rep.EpochSeconds, rep.BoundSeconds, "density %g", pt.Density)
		assert.Empty(t, rep.Warnings)
		// The per-exchange model accounts for the simulated stall.
		assert.InDelta(t, pt.Model, rep.StallSeconds, 0.05, "density %g", pt.Density)
		if i > 0 {
			prev := pts[i-1]
			assert.Greater(t, pt.Density, prev.Density)
			assert.LessOrEqual(t, rep.StallSeconds/rep.EpochSeconds, prev.Report.StallSeconds/prev.Report.EpochSeconds, "stall ÷ epoch rose at density %g", pt.Density)
		}
		// Above the threshold only the floor (fill, window-0 exchanges)
		// remains; below it some exchange is exposed.
		if pt.Density >= theta {
			assert.InDelta(t, pt.Floor, rep.StallSeconds, 0.01, "density %g", pt.Density)
		} else {
			assert.Greater(t, rep.StallSeconds, pt.Floor+0.01, "density %g", pt.Density)
		}
	}
}

func TestLegendTheorem3Result(t *testing.T) {
	r, err := LegendTheorem3()
	require.NoError(t, err)
	assert.Len(t, r.Rows, len(Theorem3Densities)+2)
	assert.Len(t, r.Charts, 2)
}

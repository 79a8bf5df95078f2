package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/diskcap"
)

func TestCalibrationSetSpread(t *testing.T) {
	prof := func() devices.Profile {
		var p devices.Profile
		p.Disk = devices.Disk{Read: 1000, Write: 800, Combined: 1200, ReadShare: 0.7}
		p.CPU.Checksum = 5000
		p.CPU.Train.Dot.Edges = 400
		p.CPU.BatchEdges = 400
		return p
	}
	cal := Calibration{
		Samples: DiskSamples{Read: []float64{900, 1000, 1300}, Write: []float64{800, 810, 790}, Both: []float64{1000, 1100, 1400}, Checksum: []float64{5000, 5100}},

		Compute: &ComputeRate{Rates: []float64{380, 400, 450, 410}},
	}
	p := prof()
	require.NoError(t, cal.SetSpread(&p))
	tests := []struct {
		key    string
		lo, hi float64
	}{
		{"disk.read", 900, 1300},
		{"disk.write", 790, 810},
		{"disk.combined", 1200 * 1000 / 1100, 1200 * 1400 / 1100},
		{"cpu.checksum", 5000, 5100},
		{"cpu.train.dot.edges", 380, 450},
		{"cpu.batch_edges", 380, 450},
	}
	for _, tt := range tests {
		r, ok := p.Spread.Of(tt.key)
		require.True(t, ok, tt.key)
		assert.InEpsilon(t, tt.lo, r.Low, 1e-3, tt.key)
		assert.InEpsilon(t, tt.hi, r.High, 1e-3, tt.key)
	}
	_, ok := p.Spread.Of("cpu.train.complex.edges")
	assert.False(t, ok, "a rate the profile does not set has no spread")
	assert.Equal(t, 2, p.Spread.Samples, "the fewest measurements: the checksum's")

	held := cal
	held.Limit = diskcap.Limits{Read: 500}
	p = prof()
	require.NoError(t, held.SetSpread(&p))
	_, ok = p.Spread.Of("disk.read")
	assert.False(t, ok, "under a kernel limit the disk's rate is the limit's")

	one := Calibration{Samples: DiskSamples{Read: []float64{1100}}}
	p = prof()
	require.NoError(t, one.SetSpread(&p))
	assert.False(t, p.HasSpread(), "one measurement gives no range")
}

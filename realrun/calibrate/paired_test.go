package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFitPaired(t *testing.T) {
	// Pairs of 100-byte transfers back to back, 1.5 s each: the read
	// takes 1 s, the write 1.5 s; alone the write moves 100 B/s, so it
	// moved 50 B alone after the read ended and 50 B beside it.
	steady := func(n int, from float64) []pairTimes {
		var ps []pairTimes
		for k := 0; k < n; k++ {
			t0 := from + 1.5*float64(k)
			ps = append(ps, pairTimes{rs: t0, re: t0 + 1, ws: t0, we: t0 + 1.5})
		}
		return ps
	}
	tests := []struct {
		name         string
		pairs        []pairTimes
		readAlone    float64
		read, write  float64
		burst        bool
		first, stead float64
	}{
		{"steady", steady(8, 0), 200, 100, 50, false, 200 / 1.5, 200 / 1.5},
		{"burst then steady", append([]pairTimes{{0, 0.25, 0, 0.25}, {0.25, 0.5, 0.25, 0.5}}, steady(8, 0.5)...), 200, 100, 50, true, 0, 200 / 1.5},
		{"write starts late (its checksum first)", []pairTimes{{0, 1, 0.5, 1.5}, {1.5, 2.5, 2, 3}}, 100, 100, 100, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pd := fitPaired(tt.pairs, 100, tt.readAlone, 100)
			assert.InDelta(t, tt.read, pd.ReadBW, 1e-9, "read while both ran")
			assert.InDelta(t, tt.write, pd.WriteBW, 1e-9, "write while both ran")
			assert.Equal(t, tt.burst, pd.Burst)
			assert.Equal(t, len(tt.pairs), pd.Pairs)
			assert.Equal(t, int64(200*len(tt.pairs)), pd.Bytes)
			if tt.stead > 0 {
				assert.InDelta(t, tt.stead, pd.SteadyRate, 1e-9)
			}
			if tt.first > 0 {
				assert.InDelta(t, tt.first, pd.FirstRate, 1e-9)
			}
		})
	}
	assert.Zero(t, fitPaired(nil, 100, 1, 1).ReadBW)
}

func TestDiskSharingPrefersPaired(t *testing.T) {
	cal := Calibration{ReadBW: 200, WriteBW: 100, BothReadBW: 120, BothWriteBW: 60}
	c, s, shared := diskSharing(cal)
	assert.True(t, shared)
	assert.InDelta(t, 200, c, 1e-9, "180 kept at least the faster side alone")
	cal.Paired = &PairedDisk{ReadBW: 150, WriteBW: 70}
	c, s2, _ := diskSharing(cal)
	assert.InDelta(t, 220, c, 1e-9)
	assert.InDelta(t, 150.0/220, s2, 1e-9)
	assert.NotEqual(t, s, s2)
}

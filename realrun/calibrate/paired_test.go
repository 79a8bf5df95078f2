package calibrate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFitPaired(t *testing.T) {
	// Pairs of 100-byte transfers back to back, 1.5 s each: the read
	// takes 1 s, the write (after its checksum) 1.25 s.
	steady := func(n int, from float64) []pairTimes {
		var ps []pairTimes
		for k := 0; k < n; k++ {
			t0 := from + 1.5*float64(k)
			ps = append(ps, pairTimes{rs: t0, re: t0 + 1, ws: t0 + 0.25, we: t0 + 1.5})
		}
		return ps
	}
	tests := []struct {
		name          string
		pairs         []pairTimes
		readAlone     float64
		read, write   float64
		burst         bool
		first, steady float64
	}{
		{"steady, the read alone unknown: its whole time", steady(8, 0), 0, 100, 80, false, 200 / 1.5, 200 / 1.5},
		// 50 bytes alone in the writer's 0.25 s checksum, the other 50
		// beside the write in 0.75 s.
		{"steady, the read's alone part taken off", steady(8, 0), 200, 50 / 0.75, 80, false, 200 / 1.5, 200 / 1.5},
		// Alone at 1000 B/s the read would have ended before the write
		// began: nothing moved beside it, so its whole time.
		{"steady, the read alone too fast to tell", steady(8, 0), 1000, 100, 80, false, 200 / 1.5, 200 / 1.5},
		{"burst then steady", append([]pairTimes{{0, 0.25, 0, 0.25}, {0.25, 0.5, 0.25, 0.5}}, steady(8, 0.5)...), 0, 100, 80, true, 0, 200 / 1.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pd := fitPaired(tt.pairs, 100, tt.readAlone)
			assert.InDelta(t, tt.read, pd.ReadBW, 1e-9, "read beside the write")
			assert.InDelta(t, tt.write, pd.WriteBW, 1e-9, "write beside the read")
			assert.Equal(t, tt.burst, pd.Burst)
			assert.Equal(t, len(tt.pairs), pd.Pairs)
			assert.Equal(t, int64(200*len(tt.pairs)), pd.Bytes)
			assert.InDelta(t, tt.steady, pd.SteadyRate, 1e-9)
			if tt.first > 0 {
				assert.InDelta(t, tt.first, pd.FirstRate, 1e-9)
			}
		})
	}
	assert.Zero(t, fitPaired(nil, 100, 200).ReadBW)
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

func TestPairedFor(t *testing.T) {
	assert.Equal(t, 8*time.Second, pairedFor(12<<30, false), "partitions of gigabytes: the full floor")
	assert.Equal(t, 2*time.Second, pairedFor(512e6, false))
	assert.Equal(t, 200*time.Millisecond, pairedFor(4<<20, false), "a test graph's few megabytes")
	assert.Equal(t, time.Second, pairedFor(12<<30, true), "around a run: an eighth")
	assert.Equal(t, 250*time.Millisecond, pairedFor(512e6, true))
}

package calibrate

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFitPaired(t *testing.T) {
	// Pairs of 100-byte transfers back to back, 2.25 s each: the read
	// takes 1 s while the writer checksums for 1.25 s; the write starts
	// when the read has arrived and takes 1.25 s, while the loader
	// verifies for 0.75 s. The checksums: 200 bytes in 2 s.
	steady := func(n int, from float64) []pairTimes {
		var ps []pairTimes
		for k := 0; k < n; k++ {
			t0 := from + 2.25*float64(k)
			ps = append(ps, pairTimes{rs: t0, re: t0 + 1, ws: t0 + 1, we: t0 + 2.25, verify: 0.75, sum: 1.25})
		}
		return ps
	}
	tests := []struct {
		name          string
		pairs         []pairTimes
		read, write   float64
		burst         bool
		first, steady float64
	}{
		{"steady", steady(8, 0), 100, 80, false, 200 / 2.25, 200 / 2.25},
		{"burst then steady", append([]pairTimes{{rs: 0, re: 0.25, ws: 0.25, we: 0.5}, {rs: 0.5, re: 0.75, ws: 0.75, we: 1}}, steady(8, 1)...), 100, 80, true, 400, 200 / 2.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pd := fitPaired(tt.pairs, 100)
			assert.InDelta(t, tt.read, pd.ReadBW, 1e-9, "read")
			assert.InDelta(t, tt.write, pd.WriteBW, 1e-9, "write")
			assert.Equal(t, tt.burst, pd.Burst)
			assert.Equal(t, len(tt.pairs), pd.Pairs)
			assert.Equal(t, int64(200*len(tt.pairs)), pd.Bytes)
			assert.InDelta(t, tt.steady, pd.SteadyRate, 1e-9)
			assert.InDelta(t, tt.first, pd.FirstRate, 1e-9)
			assert.InDelta(t, 100, pd.ChecksumBW, 1e-9)
			assert.InDelta(t, 100/0.75, pd.VerifyBW, 1e-9)
			assert.InDelta(t, 80, pd.SumBW, 1e-9)
		})
	}
	assert.Zero(t, fitPaired(nil, 100).ReadBW)

	// The quarters of the steady half: the reads slow down in the last.
	ps := steady(16, 0)
	for k := 14; k < 16; k++ {
		ps[k].re = ps[k].rs + 2
	}
	pd := fitPaired(ps, 100)
	assert.Equal(t, []float64{100, 100, 100, 50}, pd.ReadSamples)
	assert.Equal(t, []float64{80, 80, 80, 80}, pd.WriteSamples)
	assert.Equal(t, []float64{100, 100, 100, 100}, pd.ChecksumSamples)

	// A calibration takes the pairs' rates and keeps the passes'.
	cal := Calibration{ReadBW: 300, WriteBW: 200, ChecksumBW: 900, Samples: DiskSamples{Read: []float64{290, 300, 310}}, Paired: &pd}
	cal.adoptPaired()
	assert.Equal(t, pd.ReadBW, cal.ReadBW)
	assert.Equal(t, pd.WriteBW, cal.WriteBW)
	assert.Equal(t, pd.ChecksumBW, cal.ChecksumBW)
	assert.Equal(t, append(slices.Clone(pd.ReadSamples), 290, 300, 310), cal.Samples.Read, "the spread: the pairs' quarters and the passes")
	require.NotNil(t, cal.Passes)
	assert.Equal(t, Passes{ReadBW: 300, WriteBW: 200, ChecksumBW: 900, Samples: DiskSamples{Read: []float64{290, 300, 310}}}, *cal.Passes)
	// Pairs that measured nothing leave the passes in place.
	cal = Calibration{ReadBW: 300, Paired: &PairedDisk{}}
	cal.adoptPaired()
	assert.Equal(t, 300.0, cal.ReadBW)
	assert.Nil(t, cal.Passes)
}

func TestDiskSharingFromStreams(t *testing.T) {
	cal := Calibration{ReadBW: 200, WriteBW: 100, BothReadBW: 120, BothWriteBW: 60}
	c, s, shared := diskSharing(cal)
	assert.True(t, shared)
	assert.InDelta(t, 200, c, 1e-9, "180 kept at least the faster side alone")
	assert.InDelta(t, 120.0/180, s, 1e-9)
	cal.Paired = &PairedDisk{ReadBW: 150, WriteBW: 70}
	c2, s2, _ := diskSharing(cal)
	assert.Equal(t, c, c2, "the engine's pairs do not overlap: they say nothing of sharing")
	assert.Equal(t, s, s2)
	cal.BothReadBW, cal.BothWriteBW = 200, 90
	_, _, shared = diskSharing(cal)
	assert.False(t, shared, "both at once move 290 of 300: no sharing")
}

func TestPairedFor(t *testing.T) {
	assert.Equal(t, 8*time.Second, pairedFor(12<<30, false), "partitions of gigabytes: the full floor")
	assert.Equal(t, 2*time.Second, pairedFor(512e6, false))
	assert.Equal(t, 200*time.Millisecond, pairedFor(4<<20, false), "a test graph's few megabytes")
	assert.Equal(t, time.Second, pairedFor(12<<30, true), "around a run: an eighth")
	assert.Equal(t, 250*time.Millisecond, pairedFor(512e6, true))
}

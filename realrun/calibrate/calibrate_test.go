package calibrate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOverlapRates(t *testing.T) {
	tests := []struct {
		name         string
		rdone, wdone []float64
		want         [2]float64
	}{
		// Reads end at 3 s with 3 files; the writer finished one file at
		// 2 s and was half-way (by its pace) through its second: 1.5 files.
		{"reads first", []float64{1, 2, 3}, []float64{2, 4}, [2]float64{1, 0.5}},
		// Writes end first, at 2 s with 2 files; the reader had done one
		// file at 1.5 s and a third of its 1.5-s second file.
		{"writes first", []float64{1.5, 3}, []float64{1, 2}, [2]float64{(1 + 1.0/3) / 2, 1}},
		{"no reads", nil, []float64{1}, [2]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := overlapRates(tt.rdone, tt.wdone, 1)
			assert.InDelta(t, tt.want[0], got[0], 1e-9)
			assert.InDelta(t, tt.want[1], got[1], 1e-9)
		})
	}
}

func TestDiskSharing(t *testing.T) {
	tests := []struct {
		name          string
		cal           Calibration
		combined, shr float64
		shared        bool
	}{
		{"adds up", Calibration{ReadBW: 100, WriteBW: 100, BothReadBW: 98, BothWriteBW: 97}, 0, 0, false},
		{"reads favoured", Calibration{ReadBW: 100, WriteBW: 80, BothReadBW: 90, BothWriteBW: 30}, 120, 0.75, true},
		// Less than the faster direction alone: kept at max(read, write),
		// the least the profile allows.
		{"below max", Calibration{ReadBW: 100, WriteBW: 80, BothReadBW: 60, BothWriteBW: 20}, 100, 0.75, true},
		{"no overlap measured", Calibration{ReadBW: 100, WriteBW: 80, BothBW: 110}, 110, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, s, sh := diskSharing(tt.cal)
			assert.Equal(t, tt.shared, sh)
			assert.InDelta(t, tt.combined, c, 1e-9)
			assert.InDelta(t, tt.shr, s, 1e-9)
		})
	}
}

func TestMeanDisk(t *testing.T) {
	a := Calibration{ReadBW: 100, WriteBW: 50, BothReadBW: 60, BothWriteBW: 20, ChecksumBW: 4, LatencySeconds: 1e-4}
	b := Calibration{ReadBW: 300, WriteBW: 50, BothReadBW: 60, BothWriteBW: 20, ChecksumBW: 4, LatencySeconds: 3e-4}
	m := MeanDisk(a, b)
	assert.InDelta(t, 150, m.ReadBW, 1e-9, "the mean time per byte: 2/(1/100 + 1/300)")
	assert.InDelta(t, 50, m.WriteBW, 1e-9)
	assert.InDelta(t, 2e-4, m.LatencySeconds, 1e-12)
}

package calibrate

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// fitRows are the rows of calibrateCompute's shapes and bucket sizes.
func fitRows() [][3]float64 {
	var rows [][3]float64
	for _, sh := range [][2]int{{64, 4}, {256, 4}, {64, 16}, {256, 16}, {64, 100}, {256, 100}, {128, 50}} {
		edges := int(math.Max(4000, 3e9/(12*float64(sh[0]*sh[1])+1)))
		rows = append(rows, costRow(sh[0], sh[1], edges))
	}
	return rows
}

func times(rows [][3]float64, x [3]float64, noise []float64) []float64 {
	y := make([]float64, len(rows))
	for i, r := range rows {
		y[i] = r[0]*x[0] + r[1]*x[1] + r[2]*x[2]
		if noise != nil {
			y[i] *= 1 + noise[i]
		}
	}
	return y
}

func TestNonNegativeLeastSquares(t *testing.T) {
	rows := fitRows()
	noise := []float64{0.03, -0.02, 0.05, -0.04, 0.01, 0.02, -0.03}
	tests := []struct {
		name  string
		rows  [][3]float64
		y     []float64
		want  [3]float64
		exact bool // the data fit exactly: want is the truth
	}{
		{"exact", rows, times(rows, [3]float64{1e-6, 1e-10, 1e-10}, nil), [3]float64{1e-6, 1e-10, 1e-10}, true},
		{"no edge term", rows, times(rows, [3]float64{0, 2e-10, 1e-10}, nil), [3]float64{0, 2e-10, 1e-10}, true},
		// A negative true coefficient cannot be fitted: that column is
		// left out and the other two take the best relative fit.
		{"negative flops", rows, times(rows, [3]float64{2e-6, 3e-10, -1e-12}, nil), [3]float64{2.0000925729228113e-06, 2.9493975108666825e-10, 0}, false},
		{"noisy", rows, times(rows, [3]float64{1e-6, 1e-10, 1e-10}, noise), [3]float64{1.0820597885041263e-06, 5.1435720605908904e-11, 1.0023357405620521e-10}, false},
		// A column of zeros is singular wherever it is included.
		{"zero column", [][3]float64{{1, 0, 2}, {2, 0, 1}, {3, 0, 5}}, []float64{5, 4, 13}, [3]float64{1, 0, 2}, true},
		{"nothing feasible", [][3]float64{{1, 1, 1}, {2, 2, 2}}, []float64{-1, -2}, [3]float64{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := nonNegativeLeastSquares(tc.rows, tc.y)
			for j := range got {
				assert.GreaterOrEqual(t, got[j], 0.0)
				assert.InDelta(t, tc.want[j], got[j], 1e-9*math.Abs(tc.want[j]), "coefficient %d: %v", j, got)
			}
		})
	}
}

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

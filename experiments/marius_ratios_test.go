package experiments

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/validate"
)

func TestMariusRatiosWiring(t *testing.T) {
	e, err := Lookup("marius-ratios")
	require.NoError(t, err)
	assert.True(t, e.Slow, "runs real training under a kernel limit")
	vc := MariusRatiosConfig
	assert.Equal(t, 100, vc.Dim, "Figure 10's d=100")
	assert.Equal(t, [2]int{32, 8}, [2]int{vc.P, vc.C}, "Figure 10's p and c")
	assert.Equal(t, 1000, vc.Negatives)
}

func TestIOSeconds(t *testing.T) {
	for _, tc := range []struct {
		name        string
		disk        devices.Disk
		read, write float64
		want        float64
	}{
		{"full duplex: the slower direction", devices.Disk{Read: 400e6, Write: 200e6, FullDuplex: true}, 400e6, 300e6, 1.5},
		// p3.2xlarge's EBS volume: 400 MB/s alone, 500 MB/s combined.
		{"combined", devices.Disk{Read: 400e6, Write: 400e6, Combined: 500e6}, 400e6, 400e6, 1.6},
		{"combined, one direction", devices.Disk{Read: 400e6, Write: 400e6, Combined: 500e6}, 400e6, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, ioSeconds(tc.disk, tc.read, tc.write), 1e-12)
		})
	}
}

func TestMariusRatioNotes(t *testing.T) {
	run := func(name string, epochs []float64, bytes int64, predicted float64) orderingRuns {
		o := orderingRuns{name: name}
		for _, e := range epochs {
			o.cmps = append(o.cmps, validate.Comparison{
				Measured:  report.Report{EpochSeconds: e, ReadBytes: bytes, WriteBytes: bytes},
				Predicted: report.Report{EpochSeconds: predicted}})
		}
		return o
	}
	runs := []orderingRuns{
		run("beta", []float64{10, 11, 12}, 100, 10),
		run("hilbert", []float64{25, 24, 26}, 250, 24),
	}
	notes := mariusRatioNotes("cfg", runs, map[string]float64{"beta": 775, "hilbert": 1876})
	require.Len(t, notes, 1)
	// Medians 11 and 25; ranges 24–26 against 10–12.
	assert.Equal(t, "cfg: Hilbert ÷ BETA — I/O 2.50×; epoch measured 2.27× (2.00–2.60 over the repeats' ranges), predicted 2.40×; on p3.2xlarge (simulated) 2.42×.", notes[0])
	assert.Empty(t, mariusRatioNotes("cfg", runs[1:], nil), "no BETA, no ratios")
}

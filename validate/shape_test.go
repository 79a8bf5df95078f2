package validate

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/realrun/calibrate"
)

func TestShapeNote(t *testing.T) {
	run := devices.TrainShape{Model: "dot", Dim: 64, Batch: 10000, Negatives: 100, Chunk: 100, Workers: 2, Rows: 10400}
	at := func(s devices.TrainShape) devices.Profile {
		return devices.Profile{CPU: devices.CPU{TrainShape: &s}}
	}
	other := run
	other.Dim, other.Rows = 100, 130000
	tests := []struct {
		name  string
		prof  devices.Profile
		diffs []string
		want  []string // substrings of the note; none: no note
	}{
		{"same shape", at(run), []string{}, nil},
		{"other shape", at(other), []string{"d 100 → 64 (0.64×)", "partition rows 130000 → 10400 (0.08×)"},
			[]string{"{Device} cal.yaml: cpu.train was measured at dot, d=100,", "this run differs: d 100 → 64 (0.64×), partition rows 130000 → 10400 (0.08×)", "realrun calibrate"}},
		{"no shape recorded", devices.Profile{}, []string{"no training shape recorded"},
			[]string{"cpu.train records no training shape", "this run's shape (dot, d=64", "leave {Device} out"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := ShapeDifferences(tc.prof, run)
			if len(tc.diffs) == 0 {
				assert.Empty(t, d)
			} else {
				assert.Equal(t, tc.diffs, d)
			}
			note := shapeNote("cal.yaml", tc.prof, run)
			if tc.want == nil {
				assert.Empty(t, note)
			}
			for _, w := range tc.want {
				assert.Contains(t, note, w)
			}
			assert.NotContains(t, note, "\n", "one line")
		})
	}
}

func TestFLOPSNote(t *testing.T) {
	shape := devices.TrainShape{Model: "complex", Dim: 64, Batch: 10000, Negatives: 100, Chunk: 100, Workers: 2, Rows: 10400}
	cal := func(peak float64, s *devices.TrainShape) calibrate.Calibration {
		c := calibrate.Calibration{Shape: s, FMAPeak: peak, FMACores: 2}
		c.Profile.CPU.Train.ComplEx = devices.TrainCost{Edges: 500e3}
		return c
	}
	// The cost rule (workload.ChunkCost): the products 12·100·64 and each
	// query's complex product, 2·11·64 a side, per edge: 78,208 FLOPs ×
	// 500k edges/s = 39.1 GFLOP/s.
	assert.Equal(t, "39.1 GFLOP/s of score arithmetic, 10% of the FMA peak 384 GFLOP/s of 2 cores", FLOPSNote(cal(384e9, &shape)))
	assert.Equal(t, "39.1 GFLOP/s of score arithmetic (FMA peak not measured)", FLOPSNote(cal(0, &shape)))
	assert.Equal(t, "FLOP/s not measured", FLOPSNote(cal(384e9, nil)))
}

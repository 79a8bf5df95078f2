package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/workload"
)

// A rate measured at one training shape is an edge rate alone (rows and
// FLOPs folded into it): the bucket takes edges ÷ rate, with no infinite
// or zero-rate term.
func TestCPUBucketTimeEdgeRateAlone(t *testing.T) {
	tests := []struct {
		name    string
		workers int
		edges   int64
		want    float64
	}{
		{"one worker", 1, 40_000, 40_000 / 1e6},
		{"two workers, whole rounds", 2, 40_000, 40_000 / 1e6},
		{"two workers, an odd batch", 2, 30_000, 2 * 20_000 / 1e6}, // three batches, each a worker at half the machine's rate: two rounds
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prof := devices.Profile{CPU: devices.CPU{Workers: tc.workers, Train: devices.CPUTrain{Dot: devices.TrainCost{Edges: 1e6}}}}
			tr := workload.Training{Model: workload.Dot, Dim: 64, Batch: 10_000, Negatives: 100}
			assert.InDelta(t, tc.want, CPUBucketTime(prof, tr, tc.edges), 1e-12)
		})
	}
}

// TestShapeNote: simulating the CPU engine with a profile measured at
// another training shape says so in one line naming each difference; the
// same shape, a profile without a shape, or a GPU system say nothing.
func TestShapeNote(t *testing.T) {
	rr, err := LookupSystem("realrun")
	require.NoError(t, err)
	marius, err := LookupSystem("marius")
	require.NoError(t, err)
	shape := devices.TrainShape{Model: "complex", Dim: 64, Batch: 10000, Negatives: 100, Chunk: 100, Workers: 2, Rows: 5000}
	tr := workload.Training{Model: workload.ComplEx, Dim: 64, Batch: 10000, Negatives: 100}
	with := func(sys System, ts *devices.TrainShape, tr workload.Training) Scenario {
		var prof devices.Profile
		prof.CPU.TrainShape = ts
		return Scenario{System: sys, Profile: prof, Training: tr}
	}
	assert.Empty(t, shapeNote("cal.yaml", with(rr, &shape, tr)))
	assert.Empty(t, shapeNote("cal.yaml", with(rr, nil, tr)))
	wider := tr
	wider.Dim, wider.Batch = 128, 50000
	assert.Empty(t, shapeNote("cal.yaml", with(marius, &shape, wider)))
	note := shapeNote("cal.yaml", with(rr, &shape, wider))
	assert.Contains(t, note, "{Device} cal.yaml: cpu.train was measured at complex, d=64")
	assert.Contains(t, note, "d 64 → 128 (2.00×), batch 10000 → 50000 (5.00×)")
	assert.NotContains(t, note, "\n")
}

// TestCPUTrainCost: the model's own cost; another model's full-term rates
// priced by the cost rule, with a note; a folded edge rate of another
// model refused (ErrNoTrainCost), naming the calibration to run.
func TestCPUTrainCost(t *testing.T) {
	full := devices.TrainCost{Edges: 1e6, RowBW: 1e10, FLOPS: 1e11}
	folded := devices.TrainCost{Edges: 5e5}
	pair := devices.CPUTrain{}
	pair.Set("linear+dot", folded)
	tests := []struct {
		name  string
		train devices.CPUTrain
		m     workload.Model
		want  devices.TrainCost
		note  string
		err   string
	}{
		{"own, folded", devices.CPUTrain{RotatE: folded}, workload.RotatE, folded, "", ""},
		{"own pair", pair, "linear+dot", folded, "", ""},
		{"scaled from full terms", devices.CPUTrain{Dot: full}, workload.TransEL1, full, "priced at cpu.train.dot's rates", ""},
		{"another pair, folded", pair, "linear+cos", devices.TrainCost{}, "", "edge rate for linear+dot alone"},
		{"folded elsewhere", devices.CPUTrain{Dot: folded, DistMult: folded}, workload.ComplEx, devices.TrainCost{}, "", "edge rate for dot, distmult alone"},
		{"none", devices.CPUTrain{}, workload.Dot, devices.TrainCost{}, "", "cpu.train gives no cost"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, note, err := CPUTrainCost(devices.Profile{CPU: devices.CPU{Train: tc.train}}, tc.m)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrNoTrainCost)
				assert.ErrorContains(t, err, tc.err)
				assert.ErrorContains(t, err, "realrun calibrate {Model} "+string(tc.m))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			if tc.note == "" {
				assert.Empty(t, note)
			} else {
				assert.Contains(t, note, tc.note)
			}
		})
	}
}

// TestCPUBucketTimeTerms: with full-term rates a chunk costs its cost
// rule's terms at them; pairwise operations at their own rate, or at a
// third of the FLOP rate without one.
func TestCPUBucketTimeTerms(t *testing.T) {
	tc := devices.TrainCost{Edges: 1e6, RowBW: 1e9, FLOPS: 1e10}
	tr := workload.Training{Model: workload.TransEL1, Dim: 10, Batch: 4, Negatives: 5, ChunkSize: 4}
	// One chunk of 4: 4 edges, 680 bytes, 240 FLOPs, 3600 pairwise
	// operations (workload.TestChunkCost).
	at := func(tc devices.TrainCost) float64 {
		prof := devices.Profile{CPU: devices.CPU{Workers: 1, Train: devices.CPUTrain{TransEL1: tc}}}
		return CPUBucketTime(prof, tr, 4)
	}
	assert.InDelta(t, 4/1e6+680/1e9+240/1e10+3600/(1e10/3), at(tc), 1e-15)
	tc.Pairwise = 1e9
	assert.InDelta(t, 4/1e6+680/1e9+240/1e10+3600/1e9, at(tc), 1e-15)
}

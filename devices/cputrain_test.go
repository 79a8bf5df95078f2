package devices

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
			prof := Profile{CPU: CPU{Workers: tc.workers, Train: CPUTrain{Dot: TrainCost{Edges: 1e6}}}}
			tr := workload.Training{Model: workload.Dot, Dim: 64, Batch: 10_000, Negatives: 100}
			assert.InDelta(t, tc.want, CPUBucketTime(prof, tr, tc.edges), 1e-12)
		})
	}
}

// TestCPUTrainCost: the model's own cost; another model's full-term rates
// priced by the cost rule, with a note; a folded edge rate of another
// model refused (ErrNoTrainCost), naming the calibration to run.
func TestCPUTrainCost(t *testing.T) {
	full := TrainCost{Edges: 1e6, RowBW: 1e10, FLOPS: 1e11}
	folded := TrainCost{Edges: 5e5}
	pair := CPUTrain{}
	pair.Set("linear+dot", folded)
	tests := []struct {
		name  string
		train CPUTrain
		m     workload.Model
		want  TrainCost
		note  string
		err   string
	}{
		{"own, folded", CPUTrain{RotatE: folded}, workload.RotatE, folded, "", ""},
		{"own pair", pair, "linear+dot", folded, "", ""},
		{"scaled from full terms", CPUTrain{Dot: full}, workload.TransEL1, full, "priced at cpu.train.dot's rates", ""},
		{"another pair, folded", pair, "linear+cos", TrainCost{}, "", "edge rate for linear+dot alone"},
		{"folded elsewhere", CPUTrain{Dot: folded, DistMult: folded}, workload.ComplEx, TrainCost{}, "", "edge rate for dot, distmult alone"},
		{"none", CPUTrain{}, workload.Dot, TrainCost{}, "", "cpu.train gives no cost"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, note, err := CPUTrainCost(Profile{CPU: CPU{Train: tc.train}}, tc.m)
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
func TestCPUBucketTimeTerms(t *testing.T) {
	tc := TrainCost{Edges: 1e6, RowBW: 1e9, FLOPS: 1e10}
	tr := workload.Training{Model: workload.TransEL1, Dim: 10, Batch: 4, Negatives: 5, ChunkSize: 4}
	// One chunk of 4: 4 edges, 680 bytes, 240 FLOPs, 3600 pairwise
	// operations (workload.TestChunkCost).
	at := func(tc TrainCost) float64 {
		prof := Profile{CPU: CPU{Workers: 1, Train: CPUTrain{TransEL1: tc}}}
		return CPUBucketTime(prof, tr, 4)
	}
	assert.InDelta(t, 4/1e6+680/1e9+240/1e10+3600/(1e10/3), at(tc), 1e-15)
	tc.Pairwise = 1e9
	assert.InDelta(t, 4/1e6+680/1e9+240/1e10+3600/1e9, at(tc), 1e-15)
}

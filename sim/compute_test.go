package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"

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

package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/workload"
)

func TestMicroBatchesWhenTheBatchDoesNotFit(t *testing.T) {
	base := Request{System: "marius", Device: "p3.2xlarge", Dataset: "freebase86m", Dim: 800, Batch: 50_000, Negatives: 1_000, P: 32, C: 8, Orderings: "beta"}
	whole, err := base.Predict()
	require.NoError(t, err)
	assert.Zero(t, whole.Results[0].MicroBatches, "3.3 GB fits a 16 GB V100")

	small := base
	small.GPUMemory = "2GB"
	out, err := small.Predict()
	require.NoError(t, err)
	r := out.Results[0]
	require.Greater(t, r.MicroBatches, 1)
	assert.LessOrEqual(t, r.BatchPeakBytes, r.BatchBudgetBytes)
	assert.Equal(t, int64(2e9), r.BatchBudgetBytes)
	assert.Positive(t, r.DuplicatedRows)
	assert.Positive(t, r.ExtraTransferBytes)
	assert.GreaterOrEqual(t, r.EpochSeconds, whole.Results[0].EpochSeconds)

	// The fewest: one micro-batch fewer does not fit.
	sc, _, err := small.Assemble()
	require.NoError(t, err)
	sc.Ordering = "beta"
	cfg, err := sc.Config()
	require.NoError(t, err)
	fewer := workload.EstimateBatch(cfg.microShape(r.MicroBatches - 1)).Total
	assert.Greater(t, fewer, r.BatchBudgetBytes)

	off := small
	off.NoMicroBatching = true
	out, err = off.Predict()
	require.NoError(t, err)
	assert.Zero(t, out.Results[0].MicroBatches)
	assert.Contains(t, strings.Join(out.Results[0].Warnings, "\n"), "micro-batching is off")

	bad := base
	bad.GPUMemory = "lots"
	_, err = bad.Predict()
	var in *inputerr.Error
	assert.ErrorAs(t, err, &in)
}

func TestMicroBatchesOnTheGPUBuffer(t *testing.T) {
	// GE2 keeps 4 partitions and a write buffer (5 × 2.15 GB) in GPU
	// memory: 1.25 GB of 12 GB are left for the batch.
	q := Request{System: "ge2", Device: "p3.2xlarge", Dataset: "freebase86m", Dim: 800, Batch: 50_000, Negatives: 1_000, P: 256, Orderings: "all", GPUMemory: "12GB"}
	out, err := q.Predict()
	require.NoError(t, err)
	require.NotEmpty(t, out.Results)
	r := out.Results[0]
	require.Greater(t, r.MicroBatches, 1, "%+v", r.Warnings)
	assert.LessOrEqual(t, r.BatchPeakBytes, r.BatchBudgetBytes)
}

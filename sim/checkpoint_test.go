package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
)

func TestCheckpointsInsideTheEpoch(t *testing.T) {
	q := Request{System: "marius", Device: "p3.2xlarge", Dataset: "freebase86m", Dim: 100, P: 16, C: 4, Orderings: "beta"}
	plain, err := q.Predict()
	require.NoError(t, err)
	q.CheckpointEvery = "16b"
	ck, err := q.Predict()
	require.NoError(t, err)
	a, b := plain.Results[0].Report, ck.Results[0].Report
	assert.Zero(t, a.InsideCheckpoints)
	assert.Equal(t, 256/16-1, b.InsideCheckpoints)
	assert.LessOrEqual(t, b.CheckpointBytes, int64(b.InsideCheckpoints*b.C)*b.PartitionBytes)
	assert.Positive(t, b.CheckpointBytes)
	assert.Zero(t, b.CheckpointBytes%b.PartitionBytes, "whole partitions")
	assert.Greater(t, b.EpochSeconds, a.EpochSeconds)
	assert.Positive(t, b.CheckpointWaitSeconds)
	assert.Equal(t, a.ReadBytes, b.ReadBytes, "the Plan's own I/O is unchanged")
	assert.Equal(t, a.WriteBytes, b.WriteBytes)
	q.CheckpointEvery = "1h"
	hourly, err := q.Predict()
	require.NoError(t, err)
	h := hourly.Results[0].Report
	assert.InDelta(t, int(a.EpochSeconds/3600), h.InsideCheckpoints, 1, "about one an hour")
	q.CheckpointEvery = "often"
	_, err = q.Predict()
	var bad *inputerr.Error
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "{CheckpointEvery}")
}

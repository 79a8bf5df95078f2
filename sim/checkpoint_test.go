package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/report"
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

// A checkpoint holds the executor's loads back, as the real engine's
// does: it is written once the read in flight has finished, and no read
// runs while it is written.
func TestCheckpointPausesLoads(t *testing.T) {
	q := Request{System: "marius", Device: "p3.2xlarge", Dataset: "freebase86m", Dim: 100, P: 16, C: 4, Orderings: "beta",
		CheckpointEvery: "4b", Trace: true}
	res, err := q.Predict()
	require.NoError(t, err)
	r := res.Results[0].Report
	require.NotNil(t, r.Trace)
	require.Positive(t, r.InsideCheckpoints)
	var ckpts, reads []report.Span
	for _, s := range r.Trace.Spans {
		switch {
		case strings.HasPrefix(s.Name, "checkpoint:"):
			ckpts = append(ckpts, s)
		case s.Track == report.DiskRead:
			reads = append(reads, s)
		}
	}
	require.Len(t, ckpts, r.InsideCheckpoints)
	for _, c := range ckpts {
		for _, rd := range reads {
			assert.False(t, rd.Start < c.End && rd.End > c.Start, "read %q [%.3f, %.3f] overlaps %q [%.3f, %.3f]", rd.Name, rd.Start, rd.End, c.Name, c.Start, c.End)
		}
	}
}

package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWorkUnit(t *testing.T) {
	for _, tc := range []struct{ edges, batch, chunk, workers, want int }{
		{100_000, 10_000, 100, 2, 10_000}, // large buckets: batches
		{1_000, 10_000, 100, 2, 500},      // one batch's worth: split in two
		{1_050, 10_000, 100, 2, 600},      // whole chunks
		{1_000, 10_000, 100, 1, 1_000},    // one worker: the whole bucket, as one batch
		{30, 10_000, 100, 4, 100},         // at least a chunk
		{15_000, 10_000, 100, 2, 7_500},
	} {
		assert.Equal(t, tc.want, WorkUnit(tc.edges, tc.batch, tc.chunk, tc.workers), "%+v", tc)
	}
}

package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A bucket is cut into full batches and one remainder, the rule every
// engine and the simulator follow.
func TestBatchCutting(t *testing.T) {
	for _, c := range []struct {
		n     int64
		batch int
		sizes []int
	}{
		{0, 4, nil},
		{3, 4, []int{3}},
		{4, 4, []int{4}},
		{10, 4, []int{4, 4, 2}},
		{12, 4, []int{4, 4, 4}},
	} {
		var got []int
		for i := range BatchCount(c.n, c.batch) {
			got = append(got, BatchSize(c.n, c.batch, i))
		}
		assert.Equal(t, c.sizes, got, "n=%d batch=%d", c.n, c.batch)
		full, rest := SplitBatches(c.n, c.batch)
		assert.Equal(t, c.n, full*int64(c.batch)+int64(rest))
	}
}

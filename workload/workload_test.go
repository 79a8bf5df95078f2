package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPartitionBytes(t *testing.T) {
	tests := []struct {
		nodes int64
		p, d  int
		want  int64
	}{
		// Marius: Freebase86m at d=100, p=32 moves partitions of about 2.15 GB.
		{86_000_000, 32, 100, 2_687_500 * 800},
		{10, 3, 1, 4 * 8},
		{0, 3, 1, 0},
		{10, 0, 1, 0},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, PartitionBytes(tt.nodes, tt.p, tt.d, false))
	}
	assert.InDelta(t, 2.15, float64(PartitionBytes(86_000_000, 32, 100, false))/1e9, 0.01)
	assert.Equal(t, int64(10*101*4), PartitionBytes(40, 4, 100, true), "row-wise Adagrad: one float of state a row")
}

func TestLookupDataset(t *testing.T) {
	d, err := LookupDataset("twitter")
	require.NoError(t, err)
	assert.Equal(t, int64(41_600_000), d.Nodes)
	_, err = LookupDataset("orkut")
	assert.ErrorContains(t, err, `unknown dataset "orkut"`)
}

func TestCheckResident(t *testing.T) {
	ds := Dataset{Name: "g", Nodes: 100}
	for _, tt := range []struct {
		resident int64
		p        int
		want     string // "" = fine
	}{
		{0, 4, ""},
		{60, 4, ""},
		{96, 4, ""},
		{97, 4, "resident_nodes 97: leaves 3 partitioned nodes of g for p = 4 partitions"},
		{100, 1, ""}, // only unpartitioned types: one empty partition
		{100, 2, "leaves 0 partitioned nodes"},
		{101, 1, "resident_nodes 101: more than the 100 nodes of g"},
		{-1, 1, "resident_nodes -1: must not be negative"},
	} {
		ds.ResidentNodes = tt.resident
		err := ds.CheckResident(tt.p)
		if tt.want == "" {
			assert.NoError(t, err, "%d resident, p = %d", tt.resident, tt.p)
			assert.Equal(t, 100-tt.resident, ds.PartitionedNodes())
			continue
		}
		assert.ErrorContains(t, err, tt.want)
	}
}

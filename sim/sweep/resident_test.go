package sweep

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/sim"
)

// TestResidentFit: the resident table takes its share of the buffer's
// memory, so a capacity that fits without it is unfit once a graph's
// unpartitioned types are counted; zero resident nodes sweeps as before.
func TestResidentFit(t *testing.T) {
	for _, tt := range []struct {
		name     string
		resident int64
		fits     []bool // at c = 4, 8, 10, with 2 staging buffers, in 80% of 61 GiB = 52.5 GB
	}{
		{"none", 0, []bool{true, true, true}},                    // freebase86m d=100 p=16: 4.305 GB partitions; c=10: 51.7 GB
		{"20M resident", 20_000_000, []bool{true, true, false}},  // 16 GB more, partitions of 66.1M nodes 3.305 GB; c=10: 55.7 GB
		{"40M resident", 40_000_000, []bool{true, false, false}}, // 32 GB more, 2.305 GB partitions; c=8: 55.1 GB
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := sim.Request{System: "marius", Dataset: "freebase86m", Dim: 100, Orderings: "beta", ResidentNodes: tt.resident}
			out, err := Run(q, Grid{Ps: []int{16}, Cs: []int{4, 8, 10}, Devices: []string{"p3.2xlarge"}, MemoryShare: 0.8})
			require.NoError(t, err)
			got := map[int]bool{}
			for _, r := range out.Rows {
				got[r.C] = r.Fits
				sys, err := sim.LookupSystem(r.System)
				require.NoError(t, err)
				assert.Equal(t, sys.PartitionBytes(tt.resident, 1, 100), r.ResidentBytes)
				assert.Equal(t, int64(r.C+2)*r.PartitionBytes+r.ResidentBytes, r.BufferBytes, "the slots, the staging buffers and the table")
			}
			assert.Equal(t, tt.fits, []bool{got[4], got[8], got[10]})
		})
	}
}

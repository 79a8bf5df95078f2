package sweep

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/sim"
)

// TestInMemory: with Grid.InMemory the systems that keep every parameter
// in memory are ranked with the partitioned rows where their parameters
// fit the memory share (sim.System.ResidentMemory), and left out with the
// reason where they do not.
func TestInMemory(t *testing.T) {
	for _, tt := range []struct {
		name, dataset string
		dim           int
		inMemory      bool
		first         string
		ranked        []string
		leftOut       []string
	}{
		{"a small graph: in-gpu fastest", "fb15k", 100, true, "in-gpu", []string{"in-gpu", "marius-inmem", "dglke"}, nil},
		{"a large graph: left out", "freebase86m", 100, true, "marius", nil, []string{"marius-inmem", "dglke", "in-gpu"}},
		{"off", "fb15k", 100, false, "marius", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := sim.Request{System: "marius", Dataset: tt.dataset, Dim: tt.dim, Orderings: "beta"}
			out, err := Run(q, Grid{Ps: []int{4, 8}, Cs: []int{2}, Devices: []string{"p3.2xlarge"}, MemoryShare: 0.8, InMemory: tt.inMemory})
			require.NoError(t, err)
			require.NotEmpty(t, out.Rows)
			assert.Equal(t, tt.first, out.Rows[0].System)
			var ranked []string
			for _, r := range out.Rows {
				if r.InMemory {
					assert.True(t, r.Fits)
					ranked = append(ranked, r.System)
					sys, err := sim.LookupSystem(r.System)
					require.NoError(t, err)
					assert.Equal(t, sys.ResidentMemory(devicesP3(t), out.Nodes, tt.dim).Bytes, r.BufferBytes)
				}
			}
			assert.Equal(t, tt.ranked, ranked)
			var left []string
			for _, l := range out.LeftOut {
				left = append(left, l.System)
				assert.Contains(t, l.Reason, "needs more than 80% of the")
			}
			assert.Equal(t, tt.leftOut, left)
			for _, c := range out.Curves() {
				assert.NotEmpty(t, c.P, "in-memory rows draw no curve over p")
			}
		})
	}
}

func devicesP3(t *testing.T) devices.Profile {
	t.Helper()
	p, err := devices.Resolve("p3.2xlarge")
	require.NoError(t, err)
	return p
}

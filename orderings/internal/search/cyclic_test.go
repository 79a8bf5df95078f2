package search

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/internal/cyclic"
)

// TestCyclicStates checks the first cyclic construction found: every
// pair covered (the Plan validates), BETA's swaps at most, the expected
// prefetchable share, and, with nothing pinned through a BETA sweep, no
// eviction of the partition loaded last.
func TestCyclicStates(t *testing.T) {
	tests := []struct {
		p, c        int
		found, goal bool
	}{
		{p: 29, c: 3, found: true, goal: true},
		{p: 37, c: 3, found: true, goal: true},
		{p: 37, c: 4, found: true, goal: true},
		{p: 104, c: 3, found: true, goal: true}, // n = 103 and one pinned partition
		{p: 97, c: 5, found: true, goal: true},
		{p: 65, c: 3, found: true, goal: true}, // one step pattern
		{p: 31, c: 3, found: true, goal: true}, // n = 29, two groups of one pinned
		{p: 30, c: 3, found: true, goal: true}, // n = 27, three groups, one pair covered at the end
		{p: 8, c: 4, found: false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("p=%d c=%d", tt.p, tt.c), func(t *testing.T) {
			var states [][]int
			cyclicCandidates(tt.p, tt.c, 20000, func(pl cyclic.Plan) bool {
				states = cyclic.Sequence(tt.p, tt.c, pl)
				return false
			})
			if !tt.found {
				assert.Nil(t, states)
				return
			}
			require.NotNil(t, states)
			order := orderings.FillOrder(tt.p, tt.c, states)
			s, err := orderings.Replay(tt.p, tt.c, order, orderings.Belady)
			require.NoError(t, err)
			pl := &orderings.Plan{Ordering: "cyclic", Policy: string(orderings.Belady), P: tt.p, C: tt.c, Buckets: order,
				Loads: s.Loads, FinalResident: s.FinalResident, Counts: s.Counts}
			require.NoError(t, pl.Validate())
			assert.LessOrEqual(t, s.Counts.Swaps, orderings.BETASwaps(tt.p, tt.c))
			assert.Equal(t, tt.goal, s.Counts.MeetsPrefetchTarget(), "%+v", s.Counts)
			for i := 2; i < len(states) && tt.goal; i++ {
				loaded := without(states[i-1], states[i-2])
				evicted := without(states[i-1], states[i])
				assert.NotEqual(t, loaded, evicted, "state %d", i)
			}
		})
	}
}

// without returns the elements of s not in drop.
func without(s, drop []int) []int {
	var out []int
	for _, x := range s {
		if !slices.Contains(drop, x) {
			out = append(out, x)
		}
	}
	return out
}

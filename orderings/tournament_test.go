package orderings

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTournamentStatesAreBETAsSwaps checks the tournament sequence at every
// p ≤ 128 and c ≥ 3 where it is defined (p ≥ 2(c−1)): exactly BETA's
// swaps (Marius eq. 3), one partition changes per swap, and every pair of
// partitions shares a state (the Plan of its buckets validates).
func TestTournamentStatesAreBETAsSwaps(t *testing.T) {
	for p := 4; p <= 128; p++ {
		for c := 3; c <= p; c++ {
			states := tournamentStates(p, c)
			if p < 2*(c-1) {
				assert.Nil(t, states, "p=%d c=%d", p, c)
				continue
			}
			require.NotNil(t, states, "p=%d c=%d", p, c)
			require.Equal(t, BETASwaps(p, c), len(states)-1, "p=%d c=%d", p, c)
			for i := 1; i < len(states); i++ {
				require.Len(t, states[i], c)
				require.Len(t, withoutAll(states[i], states[i-1]), 1, "p=%d c=%d state %d", p, c, i)
			}
			order := statesToOrder(p, states, nil, nil)
			require.Len(t, order, p*p, "p=%d c=%d: a pair never shares a state", p, c)
		}
	}
	assert.Nil(t, tournamentStates(8, 2))
}

// TestTournamentHidesLargeBuffers checks what the balanced sweeps are for:
// with the fill order, the tournament sequence replays under Belady to
// BETA's swaps and hides at least 95% of them at every c ≥ 9 up to
// p = 128 (where BETA's states hide at most 85–98%, fewer as p grows).
func TestTournamentHidesLargeBuffers(t *testing.T) {
	for c := 9; c <= 16; c++ {
		for p := 2 * (c - 1); p <= 128; p += 3 {
			t.Run(fmt.Sprintf("p=%d c=%d", p, c), func(t *testing.T) {
				states := tournamentStates(p, c)
				order := fillOrder(p, c, states)
				s, err := Replay(p, c, order, Belady)
				require.NoError(t, err)
				plan := &Plan{Ordering: "tournament", Policy: string(Belady), P: p, C: c, Buckets: order,
					Loads: s.Loads, FinalResident: s.FinalResident, Counts: s.Counts}
				require.NoError(t, plan.Validate())
				assert.Equal(t, BETASwaps(p, c), s.Counts.Swaps)
				assert.True(t, prefetchGoal(s.Counts), "%+v", s.Counts)
			})
		}
	}
}

package orderings

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fillPlan replays FillOrder's bucket order for states and returns the
// validated Plan.
func fillPlan(t *testing.T, p, c int, states [][]int) *Plan {
	t.Helper()
	order := FillOrder(p, c, states)
	s, err := Replay(p, c, order, Belady)
	require.NoError(t, err)
	plan := &Plan{Ordering: "fill", Policy: string(Belady), P: p, C: c, Buckets: order,
		Loads: s.Loads, FinalResident: s.FinalResident, Counts: s.Counts}
	require.NoError(t, plan.Validate(), "p=%d c=%d", p, c)
	return plan
}

// TestFillOrder pins what the fill order makes of a few state sequences:
// the states' swaps, and how many of them it hides. BETA's own order
// (Marius Algorithm 4) hides 12 of 42, 24 of 78, 48 of 150 and 117 of 861
// of the same states, the tournament's plain order 120 of 1,064 and 42 of
// 202: in a sweep every new bucket touches the mover evicted next, and
// only the pivots' buckets, deferred, can fill the window.
func TestFillOrder(t *testing.T) {
	tests := []struct {
		name          string
		p, c          int
		states        [][]int
		swaps, hidden int
	}{
		{"beta", 16, 4, betaStates(16, 4, nil), 42, 39},
		{"beta", 32, 8, betaStates(32, 8, nil), 78, 78},
		{"beta", 64, 16, betaStates(64, 16, nil), 150, 150},
		{"beta", 128, 11, betaStates(128, 11, nil), 861, 837},
		{"tournament", 128, 9, tournamentStates(128, 9), 1064, 1064},
		{"tournament", 48, 7, tournamentStates(48, 7), 202, 202},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s p=%d c=%d", tt.name, tt.p, tt.c), func(t *testing.T) {
			plan := fillPlan(t, tt.p, tt.c, tt.states)
			assert.Equal(t, tt.swaps, plan.Counts.Swaps)
			assert.Equal(t, tt.hidden, plan.Counts.PrefetchableSwaps)
		})
	}
}

// TestFillOrderBeatsLegendsRule checks the fill order against Legend's
// Algorithm 2 rule alone (each state's new buckets, those touching the
// next victim first) on BETA's, the tournament's and the pivot/mover
// states: never more swaps, never fewer prefetchable ones.
func TestFillOrderBeatsLegendsRule(t *testing.T) {
	for p := 6; p <= 48; p += 3 {
		for c := 3; c <= p/2; c++ {
			for name, states := range map[string][][]int{
				"beta": betaStates(p, c, nil), "tournament": tournamentStates(p, c), "fan": fanStates(p, c, true, false),
			} {
				if states == nil {
					continue
				}
				fill := fillPlan(t, p, c, states)
				legend, err := Replay(p, c, statesToOrder(p, states, nextVictim(states), nil), Belady)
				require.NoError(t, err)
				require.LessOrEqual(t, fill.Counts.Swaps, legend.Counts.Swaps, "%s p=%d c=%d", name, p, c)
				if fill.Counts.Swaps == legend.Counts.Swaps {
					assert.GreaterOrEqual(t, fill.Counts.PrefetchableSwaps, legend.Counts.PrefetchableSwaps, "%s p=%d c=%d", name, p, c)
				}
			}
		}
	}
}

func TestReplayStates(t *testing.T) {
	// c = 2: 0 and 1 fill the buffer; 2 replaces 0 (never used again),
	// then 3 replaces 1. States are listed by slot.
	order := []Bucket{{0, 0}, {0, 1}, {1, 1}, {1, 2}, {2, 2}, {2, 3}, {3, 3}}
	s, err := Replay(4, 2, order, Belady)
	require.NoError(t, err)
	got := replayStates(2, s.Loads)
	assert.Equal(t, [][]int{{0, 1}, {2, 1}, {2, 3}}, got)
	assert.True(t, sameStates(got, [][]int{{1, 0}, {1, 2}, {3, 2}}))
	assert.False(t, sameStates(got, got[1:]))
	assert.False(t, sameStates(got, [][]int{{0, 1}, {2, 1}, {2, 0}}))
	// A buffer never filled: one state of what was loaded.
	s, err = Replay(4, 4, []Bucket{{0, 1}}, Belady)
	require.NoError(t, err)
	assert.Equal(t, [][]int{{0, 1}}, replayStates(4, s.Loads))
}

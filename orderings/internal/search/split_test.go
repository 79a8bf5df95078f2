package search

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings/internal/cyclic"
	"github.com/tierflow/tierflow/orderings/internal/misses"
)

func TestSplitSingles(t *testing.T) {
	// Z_7 split by {1, 2, 3}: any one step (each covers all three).
	var got [][]int
	_, complete := splitSingles(7, 3, allDiffs(7), nil, 1000, func(_, singles []int) bool {
		got = append(got, append([]int(nil), singles...))
		return true
	})
	assert.True(t, complete)
	assert.ElementsMatch(t, [][]int{{1}, {2}, {3}}, got)
	// Z_19 has no split by {s, 2s, 3s} (9 differences, three steps).
	n := 0
	_, complete = splitSingles(19, 3, allDiffs(19), nil, 1_000_000, func(_, _ []int) bool { n++; return true })
	assert.True(t, complete)
	assert.Zero(t, n)
	// Every split found covers each difference once.
	_, complete = splitSingles(97, 4, allDiffs(97), nil, 1_000_000, func(_, singles []int) bool {
		seen := map[int]bool{}
		for _, s := range singles {
			for j := 1; j <= 4; j++ {
				d := normDiff(j*s, 97)
				assert.False(t, seen[d], "difference %d twice", d)
				seen[d] = true
			}
		}
		assert.Len(t, seen, 48)
		return false
	})
	assert.False(t, complete)
}

func TestRandomPattern(t *testing.T) {
	rng := newSplitRand(1)
	pat, sums := randomPattern(101, 3, 5, allDiffs(101), rng, 10000)
	require.NotNil(t, pat)
	require.Len(t, sums, 15)
	seen := map[int]bool{}
	for _, d := range sums {
		assert.False(t, seen[d])
		seen[d] = true
	}
}

// TestSplitFamilyExhausted pins the search results behind the c = 4
// misses p = 20 … 32 (REPRODUCE.md, "tierflow's targets"): for every
// n = p − m odd, m ≤ 7 extra partitions in at most four pinned groups
// of 1 … 3 whose differences leave a multiple of 3, every split of the
// differences of Z_n into pinned steps, single steps and patterns (at
// most one fits: the room left is under 24 differences) is enumerated,
// and none, in the block order cyclicSplits uses (pinned, single steps,
// pattern), reaches PrefetchTarget within BETA's swaps. At p = 20, 23
// and 26 no split exists at all.
func TestSplitFamilyExhausted(t *testing.T) {
	tests := []struct{ p, splits int }{{20, 0}, {23, 0}, {24, 300}, {26, 0}, {28, 320}, {32, 1728}}
	const c, k = 4, 3
	for _, tt := range tests {
		p := tt.p
		splits, options := 0, 0
		try := func(pl cyclic.Plan) bool {
			splits++
			counts, err := replayed(p, c, cyclic.Sequence(p, c, pl))
			require.NoError(t, err)
			assert.False(t, reaches(p, c, counts), "p=%d: %+v", p, pl)
			return true
		}
		for m := 0; m <= 2*k+1; m++ {
			n := p - m
			if n%2 == 0 {
				continue
			}
			h := (n - 1) / 2
			comps := [][]int{nil}
			if m > 0 {
				comps = compositions(m, k, 4)
			}
			for _, pins := range comps {
				pinned := 0
				for _, q := range pins {
					pinned += k - q
				}
				if h < pinned || (h-pinned)%k != 0 {
					continue
				}
				options++
				require.Less(t, h-pinned, 2*k*(k+1), "p=%d: two patterns could fit", p)
				emit := func(pat []int) func(pinSteps, singles []int) bool {
					return func(pinSteps, singles []int) bool {
						pl := cyclic.Plan{N: n, Pins: pins}
						for _, s := range pinSteps {
							pl.Blocks = append(pl.Blocks, []int{max(s, 1)})
						}
						pl.Blocks = append(pl.Blocks, stepBlocks(singles)...)
						if pat != nil {
							pl.Blocks = append(pl.Blocks, append([]int(nil), pat...))
						}
						return try(pl)
					}
				}
				_, complete := splitSingles(n, k, allDiffs(n), pins, 1<<40, emit(nil))
				require.True(t, complete)
				for r := k + 1; r*k <= h-pinned; r++ {
					eachPattern(n, k, r, allDiffs(n), func(pat, sums []int) bool {
						avail := allDiffs(n)
						for _, d := range sums {
							avail[d] = false
						}
						_, complete := splitSingles(n, k, avail, pins, 1<<40, emit(pat))
						require.True(t, complete)
						return true
					})
				}
			}
		}
		require.Positive(t, options, "p=%d", p)
		if tt.splits >= 0 {
			assert.Equal(t, tt.splits, splits, "p=%d", p)
		}
		t.Logf("p=%d c=4: %d (n, groups), %d splits, none reaches the targets", p, options, splits)
	}
}

// eachPattern passes to yield every step pattern of r ≥ k+1 steps over
// Z_n (steps 1 … n−1, every rotation and sign) whose r·k cyclic window
// sums are distinct differences marked in avail and whose total is
// coprime to n, with its window sums, until yield returns false. An
// exhaustive depth-first search, for small n.
func eachPattern(n, k, r int, avail []bool, yield func(pat, sums []int) bool) {
	if r < k+1 {
		return
	}
	pat := make([]int, 0, r)
	var sums []int
	free := func(d int, pending []int) bool {
		return d != 0 && d < len(avail) && avail[d] && !slices.Contains(sums, d) && !slices.Contains(pending, d)
	}
	var dfs func() bool
	dfs = func() bool {
		if len(pat) == r {
			wrap, fit := wrapSums(pat, k, n, nil, free)
			if !fit {
				return true
			}
			sums = append(sums, wrap...)
			ok := yield(pat, sums)
			sums = sums[:len(sums)-len(wrap)]
			return ok
		}
		for v := 1; v < n; v++ {
			pat = append(pat, v)
			if add, ok := stepSums(pat, k, n, free); ok {
				sums = append(sums, add...)
				if !dfs() {
					return false
				}
				sums = sums[:len(sums)-len(add)]
			}
			pat = pat[:len(pat)-1]
		}
		return true
	}
	dfs()
}

// TestSplitStepsExhausted runs SplitStepsExhausted at every (p, c) listed
// in testdata/tierflow_prefetch_misses.txt with c = 8 (gentables
// -split-steps-all: every c ≥ 5, about a minute).
func TestSplitStepsExhausted(t *testing.T) {
	list, err := misses.Read("../../" + misses.Path)
	require.NoError(t, err)
	var ps []int
	for _, m := range list {
		if m.C == 8 {
			ps = append(ps, m.P)
		}
	}
	require.NotEmpty(t, ps, "the c = 8 misses")
	for _, p := range ps {
		splits, err := SplitStepsExhausted(p, 8)
		require.NoError(t, err)
		if splits > 0 {
			t.Logf("p=%d c=8: %d splits of single and pinned steps, none reaches the targets", p, splits)
		}
	}
}

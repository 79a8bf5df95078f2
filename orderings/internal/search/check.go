package search

import (
	"fmt"

	"github.com/tierflow/tierflow/orderings/internal/cyclic"
)

// SplitStepsExhausted checks a search result behind tierflow's misses
// (REPRODUCE.md, "tierflow's targets") at (p, c): for every (n, groups) of
// the split search (splitOptions: n = p − m odd, m ≤ 2c − 1 extra
// partitions in at most four pinned groups of 1 … c−1), splitSingles runs
// to completion, and every split of Z_n's differences into single and
// pinned steps it finds, replayed with the fill order, misses BETA's swaps
// or PrefetchTarget. Patterns fit at these pairs where n is large enough
// and are not enumerated. It returns the number of splits replayed, or an
// error for the first that reaches the targets. (Before the tournament
// candidate the misses included every c = 9, 10, 11 pair from p = 79, 99,
// 122 on; there no pattern fits, so the whole split family was shown
// empty, as git history keeps.)
func SplitStepsExhausted(p, c int) (int, error) {
	k := c - 1
	splits := 0
	var bad error
	for _, o := range splitOptions(p, c, 2*k+1, 4) {
		_, complete := splitSingles(o.N, k, allDiffs(o.N), o.Pins, 1<<40, func(pinSteps, singles []int) bool {
			splits++
			counts, err := replayed(p, c, cyclic.Sequence(p, c, splitPlan(o.N, o.Pins, pinSteps, singles, nil)))
			switch {
			case err != nil:
				bad = err
			case reaches(p, c, counts):
				bad = fmt.Errorf("%d%v %v %v reaches the targets: %+v", o.N, o.Pins, pinSteps, singles, counts)
			}
			return bad == nil
		})
		if bad != nil {
			return splits, fmt.Errorf("p=%d c=%d: %w", p, c, bad)
		}
		if !complete {
			return splits, fmt.Errorf("p=%d c=%d: %d%v: splitSingles did not complete", p, c, o.N, o.Pins)
		}
	}
	return splits, nil
}

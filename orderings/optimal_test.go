package orderings

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkOptimalCertificate checks everything an OptimalResult claims that
// can be checked without trusting the search: the state sequence is a
// legal one-swap-per-step sequence from {0…c-1}, its order replays under
// Belady to a valid Plan with exactly Swaps swaps, and the iterations ran
// consecutive bounds from the root bound, only the last finding a solution.
func checkOptimalCertificate(t *testing.T, r OptimalResult) {
	t.Helper()
	p, c := r.P, r.C
	require.Len(t, r.States, r.Swaps+1)
	bad := r
	bad.Swaps--
	bad.States = bad.States[:len(bad.States)-1]
	if r.Swaps > 0 {
		_, err := bad.Plan()
		require.Error(t, err, "a sequence one state short must not pass")
	}
	assert.Equal(t, allPartitions(c), r.States[0])
	for i, st := range r.States {
		require.Len(t, st, c, "state %d", i)
		if i > 0 {
			added := 0
			for _, x := range st {
				if !containsInt(r.States[i-1], x) {
					added++
				}
			}
			assert.Equal(t, 1, added, "state %d differs from %d by one swap", i, i-1)
		}
	}
	pl, err := r.Plan()
	require.NoError(t, err)
	assert.Equal(t, r.Swaps, pl.Counts.Swaps, "Belady replays the optimal states with exactly the optimum")
	assert.GreaterOrEqual(t, r.RootBound, LowerBound(p, c))
	require.NotEmpty(t, r.Iterations)
	var total int64
	for i, it := range r.Iterations {
		assert.Equal(t, r.RootBound+i, it.Bound)
		assert.Equal(t, i == len(r.Iterations)-1, it.Found, "iteration %d", i)
		total += it.Nodes
	}
	assert.Equal(t, r.Nodes, total)
	assert.Equal(t, r.Swaps, r.Iterations[len(r.Iterations)-1].Bound)
}

// TestOptimalSmall runs the exact search for every p ≤ 8 and 2 ≤ c ≤ p,
// checks its certificate, and places it between the lower bound and BETA.
func TestOptimalSmall(t *testing.T) {
	for p := 2; p <= 8; p++ {
		for c := 2; c <= p; c++ {
			r, err := OptimalSwaps(p, c, 0)
			require.NoError(t, err, "p=%d c=%d", p, c)
			checkOptimalCertificate(t, r)
			assert.GreaterOrEqual(t, r.Swaps, LowerBound(p, c))
			assert.LessOrEqual(t, r.Swaps, BETASwaps(p, c))
		}
	}
}

// TestOptimalKnownValues pins results where the optimum is strictly
// between the lower bound and BETA or strictly above the bound.
func TestOptimalKnownValues(t *testing.T) {
	for _, tc := range []struct{ p, c, opt int }{
		{6, 3, 6},  // BETA 7 (Marius Fig. 5), the bound is reached
		{8, 3, 13}, // BETA 14
		{8, 4, 8},  // BETA 9
		{6, 4, 4},  // the bound 3 is not reachable; BETA is optimal
		{8, 5, 6},  // the bound 5 is not reachable
		{9, 4, 11}, // bound 10, BETA 12: neither is tight
	} {
		r, err := OptimalSwaps(tc.p, tc.c, 0)
		require.NoError(t, err)
		assert.Equal(t, tc.opt, r.Swaps, "p=%d c=%d", tc.p, tc.c)
		checkOptimalCertificate(t, r)
	}
}

// bfsOptimum is an independent check: breadth-first search over (resident
// set, covered pairs) with every possible swap and no pruning at all.
func bfsOptimum(p, c int) int {
	s := newOptSearch(p, c, 0)
	type node struct {
		set uint16
		cov pset
	}
	start := node{set: uint16(1)<<c - 1}
	start.cov = s.within(start.set)
	seen := map[node]bool{start: true}
	frontier := []node{start}
	for depth := 0; ; depth++ {
		var next []node
		for _, n := range frontier {
			if n.cov == s.full {
				return depth
			}
			for y := range p {
				if n.set&(1<<y) == 0 {
					continue
				}
				for x := range p {
					if n.set&(1<<x) != 0 {
						continue
					}
					rest := n.set &^ (1 << y)
					m := node{rest | 1<<x, n.cov.or(s.cover[x][rest])}
					if !seen[m] {
						seen[m] = true
						next = append(next, m)
					}
				}
			}
		}
		frontier = next
	}
}

func TestOptimalMatchesBreadthFirst(t *testing.T) {
	for p := 3; p <= 6; p++ {
		for c := 2; c <= p; c++ {
			r, err := OptimalSwaps(p, c, 0)
			require.NoError(t, err)
			assert.Equal(t, bfsOptimum(p, c), r.Swaps, "p=%d c=%d", p, c)
		}
	}
}

func TestOptimalErrors(t *testing.T) {
	_, err := OptimalSwaps(17, 3, 0)
	assert.ErrorContains(t, err, "exceeds")
	_, err = OptimalSwaps(4, 1, 0)
	assert.ErrorContains(t, err, "c must be")
	_, err = OptimalSwaps(10, 4, 100)
	assert.True(t, errors.Is(err, ErrSearchLimit), "%v", err)
}

// TestNoOrderingBeatsOptimum replays every ordering's Plan for every p ≤ 9
// and 2 ≤ c ≤ p under every policy and checks its swaps are never below
// the proven optimum. (TestNoOrderingBeatsLowerBound checks the lower
// bound everywhere else.)
func TestNoOrderingBeatsOptimum(t *testing.T) {
	opt := map[[2]int]int{}
	for p := 2; p <= 9; p++ {
		for c := 2; c <= p; c++ {
			r, err := OptimalSwaps(p, c, 0)
			require.NoError(t, err)
			opt[[2]int{p, c}] = r.Swaps
		}
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			for pc, o := range opt {
				for _, pol := range Policies {
					pl, err := Build(name, pc[0], pc[1], pol, 3)
					if errors.Is(err, ErrNotApplicable) {
						continue
					}
					require.NoError(t, err)
					require.NoError(t, pl.Validate())
					assert.GreaterOrEqual(t, pl.Counts.Swaps, o, "p=%d c=%d %s", pc[0], pc[1], pol)
				}
			}
		})
	}
}

func ExampleOptimalSwaps() {
	r, err := OptimalSwaps(6, 3, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("optimum", r.Swaps, "lower bound", LowerBound(6, 3), "BETA", BETASwaps(6, 3))
	fmt.Println(r.States)
	// Output:
	// optimum 6 lower bound 6 BETA 7
	// [[0 1 2] [1 2 3] [2 3 4] [2 4 5] [1 4 5] [0 4 5] [0 3 5]]
}

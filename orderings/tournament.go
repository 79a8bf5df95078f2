package orderings

// The tournament sequence: BETA's pivots and sweeps with the sweeps
// balanced, so that the buckets the pivots make among themselves can hide
// the sweeps' swaps.
//
// BETA (Marius Algorithm 3) fixes c−1 pivots, sweeps every partition not
// yet a pivot through the last slot, then replaces the pivots. Each sweep
// swap evicts the partition it has just loaded, so all of that state's new
// buckets touch the victim and the swap can only be hidden behind a
// bucket deferred from earlier: one of the (c−1)² buckets among the
// pivots. BETA's first sweep is p − c + 1 swaps long and its last ones
// are short, so the early sweeps run out of such buckets and the late
// ones leave them unused.
//
// Partition the partitions into g = ⌊p/(c−1)⌋ groups of c−1 and a rest R
// of r = p − g(c−1) < c−1. Every pair of groups must meet once: the
// members of one group pass as movers through the other while it is
// pivot. BETA orients these pairs transitively (group i sweeps every group
// after it); any orientation needs the same number of mover loads,
// (c−1)·g(g−1)/2, and the same pivot changes. tournamentStates orients
// them as a (near-)regular tournament, the circulant one in which group i
// sweeps groups i+1 … i+⌊(g−1)/2⌋ (mod g) (for even g, group i < g/2 also
// sweeps i + g/2), so that every sweep holds about (c−1)(g−1)/2 + r
// movers, and R is swept by every group. Group i is pivot in phase i: its
// members are loaded one at a time in place of the old pivots (their pairs
// among themselves are covered then), then the movers pass through. The
// last mover of each phase is one the next phase needs (a member of R
// where there is one), and it stays through the refresh, where it meets
// the new pivots, as BETA's last mover does; at the end the members of R
// are loaded to meet each other. With that, the sequence has exactly
// BETASwaps(p, c) swaps (Marius eq. 3) at every p ≥ 2(c−1), c ≥ 3
// (TestTournamentStatesAreBETAsSwaps checks every p ≤ 128): the
// (c−1)·g(g−1)/2 + g·r mover loads, less the first (part of the initial
// fill) and one per later phase (the carried mover), plus (g−1)(c−1)
// pivot loads and max(r−1, 0) loads of R, equal equation (3) for r ≥ 1
// and for r = 0 (at p = 12, 13 and c = 4: 23 and 27).
//
// With balanced sweeps every phase has (c−1)² pivot buckets to defer
// (FillOrder finds the deferrals), against a sweep of about
// (c−1)(g−1)/2 + r swaps: enough to hide nearly every swap while p is at
// most about 2(c−1)² (c ≥ 9 everywhere up to p = 128), and about
// 2(c−1)²/p of them beyond.

// tournamentStates returns the tournament sequence for (p, c), or nil
// where it has fewer than two groups (p < 2(c−1)) or c < 3.
func tournamentStates(p, c int) [][]int {
	k := c - 1
	if c < 3 || p < 2*k {
		return nil
	}
	g := p / k
	group := make([]int, p) // group of each partition; −1 for the rest
	members := make([][]int, g)
	for x := range p {
		group[x] = -1
		if x < g*k {
			group[x] = x / k
			members[x/k] = append(members[x/k], x)
		}
	}
	rest := make([]int, 0, k)
	for x := g * k; x < p; x++ {
		rest = append(rest, x)
	}
	sweeps := func(i, j int) bool { // group i sweeps group j
		d := (j - i + g) % g
		if g%2 == 1 {
			return d >= 1 && d <= g/2
		}
		return (d >= 1 && d < g/2) || (d == g/2 && i < g/2)
	}
	cov := make([]bool, p*p)
	var buf []int
	var states [][]int
	load := func(x int, evictable func(y int) bool, prefer func(y int) bool) {
		if len(buf) == c {
			v := -1
			for i, y := range buf {
				if evictable(y) && (v < 0 || (prefer(y) && !prefer(buf[v]))) {
					v = i
				}
			}
			buf[v] = x
		} else {
			buf = append(buf, x)
		}
		if len(buf) < c {
			return
		}
		for _, a := range buf {
			for _, b := range buf {
				cov[a*p+b] = true
			}
		}
		states = append(states, append([]int(nil), buf...))
	}
	needs := func(m, i int) bool { // m has a pair with group i left to cover
		for _, q := range members[i] {
			if !cov[m*p+q] {
				return true
			}
		}
		return false
	}
	// moversOf lists the partitions phase i still has to sweep, not yet
	// resident, with the last one a partition phase i+1 sweeps too (one of
	// R where there is one).
	moversOf := func(i int) []int {
		var ms []int
		add := func(m int) {
			if !containsInt(buf, m) && needs(m, i) {
				ms = append(ms, m)
			}
		}
		for d := 1; d < g; d++ {
			if j := (i + d) % g; sweeps(i, j) {
				for _, m := range members[j] {
					add(m)
				}
			}
		}
		for _, m := range rest {
			add(m)
		}
		if i+1 < g {
			last := -1
			for idx, m := range ms {
				if group[m] < 0 || sweeps(i+1, group[m]) {
					last = idx
				}
			}
			if last >= 0 {
				m := ms[last]
				ms = append(append(ms[:last:last], ms[last+1:]...), m)
			}
		}
		return ms
	}
	for i := range g {
		pivot := func(y int) bool { return group[y] == i }
		for _, q := range members[i] {
			if containsInt(buf, q) {
				continue
			}
			// Evict a partition phase i does not need, the old pivots first.
			load(q, func(y int) bool { return !pivot(y) && !(needs(y, i) && (group[y] < 0 || sweeps(i, group[y]))) },
				func(y int) bool { return i > 0 && group[y] == i-1 })
		}
		for _, m := range moversOf(i) {
			load(m, func(y int) bool { return !pivot(y) }, func(y int) bool { return !needs(y, i) })
		}
	}
	// R's members meet each other; then anything left (nothing, where
	// TestTournamentStatesAreBETAsSwaps looked).
	for _, x := range rest {
		open := false
		for _, y := range rest {
			open = open || (y != x && !cov[x*p+y])
		}
		if open && !containsInt(buf, x) {
			load(x, func(y int) bool { return group[y] >= 0 }, func(int) bool { return true })
		}
	}
	for a := range p {
		for b := a + 1; b < p; b++ {
			if cov[a*p+b] {
				continue
			}
			for _, x := range []int{a, b} {
				if !containsInt(buf, x) {
					o := a + b - x
					load(x, func(y int) bool { return y != o }, func(int) bool { return true })
				}
			}
		}
	}
	return states
}

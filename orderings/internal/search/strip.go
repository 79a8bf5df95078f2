package search

// stripSearch is a depth-first search for a state sequence with at most
// maxSwaps swaps that covers every pair and whose swaps evict the
// partition loaded last at most maxNewest times: the shape of a sequence
// whose swaps can almost all be prefetched (the pair the newest partition
// makes with a partition that stays is there to overlap the next load).
// The first state is {0 … c−1}; partitions never resident so far are
// interchangeable, so only the lowest of them is loaded; moves are tried
// by most new pairs first. Each complete sequence is passed to accept,
// which decides (by replaying it) whether the search stops there. It gives
// up after maxNodes nodes and returns nil then, or when the space is
// exhausted; the second result is the nodes expanded.
//
// It is a heuristic for the small (p, c) where the cyclic construction
// does not exist, not a proof: a sequence that evicts the newest partition
// can still be prefetched through a deferred bucket, and a sequence that
// never does may still miss (orderings.FillOrder and Belady decide).
func stripSearch(p, c, maxSwaps, maxNewest int, maxNodes int64, accept func([][]int) bool) ([][]int, int64) {
	if c < 3 || p <= c {
		return nil, 0
	}
	total := p*(p-1)/2 - c*(c-1)/2
	waste := maxSwaps*(c-1) - total // new-pair slots the swaps may leave unused
	if waste < 0 {
		return nil, 0
	}
	cov := make([]bool, p*p)
	unc := make([]int, p)
	for x := range unc {
		unc[x] = p - 1
	}
	buf := make([]int, c)
	inBuf := make([]bool, p)
	for i := range buf {
		buf[i] = i
		inBuf[i] = true
	}
	for i := range c {
		for j := i + 1; j < c; j++ {
			cov[i*p+j], cov[j*p+i] = true, true
			unc[i]--
			unc[j]--
		}
	}
	left := total
	states := [][]int{append([]int(nil), buf...)}
	var nodes int64
	var found [][]int
	type move struct{ slot, x, gain int }
	var dfs func(newest, wasted, newestEvictions, fresh int) bool
	dfs = func(newest, wasted, newestEvictions, fresh int) bool {
		if left == 0 {
			if accept(states) {
				found = append([][]int(nil), states...)
				return true
			}
			return false
		}
		g := len(states) - 1
		if g == maxSwaps || nodes >= maxNodes {
			return false
		}
		nodes++
		live := 0
		for x := range p {
			if !inBuf[x] && unc[x] > 0 {
				live++
			}
		}
		if live > maxSwaps-g {
			return false
		}
		var moves []move
		for x := range p {
			if inBuf[x] || unc[x] == 0 || (unc[x] == p-1 && x > fresh) {
				continue
			}
			for i := range buf {
				if i == newest && newestEvictions >= maxNewest {
					continue
				}
				gain := 0
				for j, r := range buf {
					if j != i && !cov[x*p+r] {
						gain++
					}
				}
				if gain == 0 || wasted+(c-1-gain) > waste {
					continue
				}
				moves = append(moves, move{i, x, gain})
			}
		}
		// Most new pairs first; then a dead victim; then not the newest.
		key := func(m move) int {
			k := m.gain * 4
			if unc[buf[m.slot]] == 0 {
				k += 2
			}
			if m.slot != newest {
				k++
			}
			return k
		}
		for a := 1; a < len(moves); a++ {
			for b := a; b > 0 && key(moves[b]) > key(moves[b-1]); b-- {
				moves[b], moves[b-1] = moves[b-1], moves[b]
			}
		}
		for _, m := range moves {
			v := buf[m.slot]
			var added []int
			for j, r := range buf {
				if j != m.slot && !cov[m.x*p+r] {
					cov[m.x*p+r], cov[r*p+m.x] = true, true
					unc[m.x]--
					unc[r]--
					left--
					added = append(added, r)
				}
			}
			buf[m.slot], inBuf[v], inBuf[m.x] = m.x, false, true
			states = append(states, append([]int(nil), buf...))
			ne := newestEvictions
			if m.slot == newest {
				ne++
			}
			nf := fresh
			if m.x == fresh {
				nf++
			}
			if dfs(m.slot, wasted+c-1-m.gain, ne, nf) {
				return true
			}
			states = states[:len(states)-1]
			buf[m.slot], inBuf[v], inBuf[m.x] = v, true, false
			for _, r := range added {
				cov[m.x*p+r], cov[r*p+m.x] = false, false
				unc[m.x]++
				unc[r]++
				left++
			}
			if nodes >= maxNodes {
				return false
			}
		}
		return false
	}
	dfs(-1, 0, 0, c)
	return found, nodes
}

// stripMoves is the inverse of orderings' stripStates: the swaps from the
// first state as (slot, partition loaded).
func stripMoves(states [][]int) []int {
	var out []int
	for i := 1; i < len(states); i++ {
		for s := range states[i] {
			if states[i][s] != states[i-1][s] {
				out = append(out, s, states[i][s])
			}
		}
	}
	return out
}

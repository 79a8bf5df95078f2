package orderings

import "math/bits"

// legendCStates generalises Legend's pivot/mover idea (Legend §4,
// Algorithm 1) to a buffer of c ≥ 4: c − 2 slots hold pivots and two hold
// movers. A pivot stays until every pair it is in has been covered; the
// movers slide, each swap evicting the older mover, so the partition just
// loaded is never the next victim (Legend Theorem 1, property 1) and the
// buckets it adds with the pivots can run while the next load is in
// flight. When a resident partition other than the newest is dead (all
// its pairs covered) it is evicted instead (the one loaded earliest),
// which turns the older mover into a pivot. The partition loaded is the one that
// covers the most new pairs with the partitions that stay; ties go to the
// one covering the most new pairs with the pivots (Legend's "pivot's column
// first"), then to the one with the fewest uncovered pairs left (so that
// partitions close to done are finished and do not strand a pivot), then
// to the lowest id. Only partitions with an uncovered pair are loaded, so
// the sequence ends; a state can still cover nothing new when no such
// partition pairs with a resident one (rare: once in p = 64, c = 4).
//
// For c = 3 the published algorithm is used as is (legendStates), so the
// c = 3 output of legend-c is the legend ordering's.
func legendCStates(p, c int) [][]int {
	if c == 3 {
		return legendStates(p)
	}
	return fanStates(p, c, false, false)
}

// fanStates is the pivot/mover sequence of legendCStates for any c ≥ 3.
// With warnsdorff set, a further tie-break (after the new pairs with the
// pivots) prefers the partition with the fewest uncovered pairs to the
// non-resident partitions that still need a pivot, the rule Warnsdorff
// gave for Hamiltonian paths: the movers then trace a path through the
// pivots' remaining partners that does not strand one. It costs O(p²/64)
// per candidate that ties on the new pairs. With flexible set, a swap whose
// best load covers fewer than c-1 new pairs may retire a live pivot
// instead of the older mover, when that covers more (the pivot comes back
// later as a mover); this pays off for the smallest buffers only.
func fanStates(p, c int, warnsdorff, flexible bool) [][]int {
	cov := make([]bool, p*p)
	unc := make([]int, p) // uncovered pairs per partition
	for x := range unc {
		unc[x] = p - 1
	}
	left := p * (p - 1) / 2
	buf := make([]int, c)
	inBuf := make([]bool, p)
	age := make([]int, c) // when each slot was loaded
	for i := range buf {
		buf[i], age[i] = i, i
		inBuf[i] = true
	}
	// Warnsdorff's sets as bit rows: covered pairs per partition, and the
	// non-resident partitions that still need a pivot.
	words := (p + 63) / 64
	covBits := make([]uint64, p*words)
	needBits := make([]uint64, words)
	var states [][]int
	mark := func() {
		for i, a := range buf {
			for _, b := range buf[i+1:] {
				if !cov[a*p+b] {
					cov[a*p+b], cov[b*p+a] = true, true
					covBits[a*words+b/64] |= 1 << (b % 64)
					covBits[b*words+a/64] |= 1 << (a % 64)
					unc[a]--
					unc[b]--
					left--
				}
			}
		}
		states = append(states, append([]int(nil), buf...))
	}
	mark()
	for tick := c; left > 0; tick++ {
		newest := 0
		for i := range buf {
			if age[i] > age[newest] {
				newest = i
			}
		}
		victim := -1
		for i := range buf { // a dead partition other than the newest
			if i != newest && unc[buf[i]] == 0 && (victim < 0 || age[i] < age[victim]) {
				victim = i
			}
		}
		if victim < 0 { // else the older mover: the second newest slot
			for i := range buf {
				if i != newest && (victim < 0 || age[i] > age[victim]) {
					victim = i
				}
			}
		}
		pick := func(victim int) (best, bestPrimary, bestRest int) {
			if warnsdorff {
				clear(needBits)
				for z := range p {
					if inBuf[z] {
						continue
					}
					for i, y := range buf {
						if i != victim && i != newest && !cov[z*p+y] {
							needBits[z/64] |= 1 << (z % 64)
							break
						}
					}
				}
			}
			// The key is lexicographic: new pairs, new pairs with the pivots,
			// then (Warnsdorff) fewest stranding pairs, then fewest uncovered
			// pairs; the stranding count is only computed for contenders.
			best, bestPrimary, bestRest = None, -1, -1
			for x := range p {
				if unc[x] == 0 || inBuf[x] {
					continue
				}
				gain, pivotGain := 0, 0
				for i, y := range buf {
					if i != victim && !cov[x*p+y] {
						gain++
						if i != newest {
							pivotGain++
						}
					}
				}
				primary := gain*(c+1) + pivotGain
				if primary < bestPrimary {
					continue
				}
				strand := 0
				if warnsdorff {
					row := covBits[x*words : (x+1)*words]
					for w, m := range needBits {
						strand += bits.OnesCount64(m &^ row[w])
					}
				}
				rest := (p-1-strand)*p + (p - 1 - unc[x])
				if primary > bestPrimary || rest > bestRest {
					best, bestPrimary, bestRest = x, primary, rest
				}
			}
			return best, bestPrimary, bestRest
		}
		best, primary, _ := pick(victim)
		if flexible && primary/(c+1) < c-1 {
			// No partition covers a full c-1 new pairs with the movers
			// sliding: try retiring a live pivot early instead.
			for i := range buf {
				if i == newest || i == victim {
					continue
				}
				if b, pr, _ := pick(i); b != None && pr/(c+1) > primary/(c+1) {
					best, primary, victim = b, pr, i
				}
			}
		}
		inBuf[buf[victim]], inBuf[best] = false, true
		buf[victim], age[victim] = best, tick
		mark()
	}
	return states
}

// legendCOrder is legend-c: legendCStates turned into buckets with Legend
// Algorithm 2's rule (the new buckets touching the next victim first).
func legendCOrder(p, c int, _ int64) ([]Bucket, [][]int, error) {
	if c < 3 {
		return nil, nil, notApplicable("needs c ≥ 3 (a pivot and two movers), got c = %d", c)
	}
	if p <= c {
		states := [][]int{allPartitions(p)}
		return statesToOrder(p, states, nil, nil), states, nil
	}
	states := legendCStates(p, c)
	return statesToOrder(p, states, nextVictim(states), nil), states, nil
}

func allPartitions(p int) []int {
	out := make([]int, p)
	for i := range out {
		out[i] = i
	}
	return out
}

// nextVictim is Legend Algorithm 2's rule for a state sequence: the
// partition of state i that state i+1 no longer holds (None for the last).
func nextVictim(states [][]int) func(i int) int {
	return func(i int) int {
		if i+1 >= len(states) {
			return None
		}
		for _, x := range states[i] {
			if !containsInt(states[i+1], x) {
				return x
			}
		}
		return None
	}
}

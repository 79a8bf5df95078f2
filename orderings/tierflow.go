package orderings

import "fmt"

// tierflowOrder is tierflow's own ordering: at most BETA's swaps at every
// (p, c), and as many prefetchable swaps as its candidates allow. It
// builds up to nine candidates, replays each under Belady, drops those
// with more swaps than BETA (Marius eq. 3) and keeps the best by (share of
// prefetchable swaps ≥ PrefetchTarget, fewest swaps, most prefetchable
// swaps, candidate order):
//
//   - legend-c (c ≥ 3): c − 2 pivots and two sliding movers with Legend
//     Algorithm 2's within-state order; the partition just loaded is never
//     the next victim, so the buckets it adds with the pivots fill the
//     window of the next load.
//   - the same pivot/mover sequence with Warnsdorff's tie-break (fanStates,
//     p ≤ fanWarnsdorffMaxP): fewer stranded pivots, so fewer swaps; with
//     legend-c it wins for buffers above about p/14, often with fewer
//     swaps than BETA. For c ≤ flexibleMaxC also its flexible variant,
//     which may retire a pivot early.
//   - the searched sequence (stripStates, tables.go), where stripTable
//     has one: for the smallest pairs (every c = 3 miss of the other
//     candidates, p = 10 … 20, and c = 4 at p = 14 … 18) a depth-first
//     search found a state sequence within BETA's swaps that rarely
//     evicts the newest partition and reaches PrefetchTarget.
//   - the cyclic sequence (cyclicStates, tables.go; internal/cyclic),
//     where cyclicTable has one: a window of c sliding over step patterns
//     of Z_n, k-radius-sequence style, whose window sums split the
//     differences of Z_n, so every swap but a few covers c − 1 new pairs
//     and none evicts the partition loaded last. The search for the
//     patterns runs offline; the table holds the 212 pairs p ≤ 128 where
//     tierflow preferred it to its other candidates when it was
//     generated, with BETA's swaps or fewer (at p = 128, c = 3: 4,064
//     swaps, the lower bound is 4,063, BETA 4,094).
//   - the split construction (splitStates, tables.go), where splitTable
//     has one: the same cyclic sequences, found offline by another search
//     (exhaustive over single and pinned steps, with random patterns, and
//     a pattern search with a larger budget) where the cyclic search ran
//     out of nodes; splitTable holds pairs with c = 4 … 6.
//   - the tournament sequence (tournamentStates, tournament.go): BETA's
//     pivots and sweeps, its pivot groups oriented as a regular
//     tournament so that every sweep is about half of BETA's first;
//     exactly BETA's swaps, and every sweep short enough for its pivots'
//     buckets to hide it while p is up to about 2(c−1)².
//   - BETA's states (Marius Algorithm 3): the same swaps as BETA.
//   - for p ≤ optimalCandidateP, an optimal state sequence from the exact
//     search (OptimalSwaps): fewer swaps than BETA wherever BETA is not
//     optimal.
//
// Every candidate but legend-c is a state sequence, turned into buckets by
// FillOrder (fill.go): Legend's rule (the buckets touching the next victim
// first) with every bucket free to run in any state that holds both its
// partitions, assigned by a maximum matching so that as many swaps as the
// states allow have a bucket to overlap. In a BETA or tournament sweep
// every new bucket of a state touches the mover evicted next, and only
// the pivots' buckets, deferred, can hide those swaps.
//
// Where none of the candidates reaches PrefetchTarget within BETA's swaps
// (4 ≤ c ≤ 8, p beyond about 2(c−1)²; testdata/tierflow_prefetch_misses.txt
// lists the 188 pairs for p ≤ 128, REPRODUCE.md "tierflow's targets" says
// why) tierflow is mostly the tournament sequence, else a cyclic sequence
// short of the target with fewer swaps.
//
// The staging buffer: the Plan's windows are what a system without one
// (Legend, PrefetchDepth 0) can overlap; with a staging buffer (Marius's
// lookahead block) a load may also start before its window, so the extra
// windows matter less there (see REPRODUCE.md, "does the ordering matter
// in time?").
func tierflowOrder(p, c int, _ int64) ([]Bucket, [][]int, error) {
	cands, err := TierflowCandidates(p, c)
	if err != nil {
		return nil, nil, err
	}
	best, _, err := BestCandidate(p, c, cands)
	if err != nil {
		return nil, nil, err
	}
	return best.Order, best.States, nil
}

// Candidate is one of tierflow's candidate orders: the construction it
// comes from (Source: "legend-c", "fan", "fan-flexible", "strip",
// "cyclic", "split", "tournament", "beta", "optimal"), its bucket order,
// and the state sequence the order was filled from (nil for legend-c).
type Candidate struct {
	Source string
	Order  []Bucket
	States [][]int
}

// TierflowCandidates builds tierflow's candidates for (p, c) in the order
// it prefers them on a tie (see tierflowOrder). The stored tables' are
// there only where a table has an entry for (p, c); the table generator
// (internal/gentables) leaves one source out to see what the others
// reach.
func TierflowCandidates(p, c int) ([]Candidate, error) {
	var cands []Candidate
	if c >= 3 {
		order, states, err := legendCOrder(p, c, 0)
		if err != nil {
			return nil, err
		}
		cands = append(cands, Candidate{Source: "legend-c", Order: order, States: states})
	}
	// Every other candidate is a state sequence, turned into buckets by
	// FillOrder.
	type seq struct {
		source string
		states [][]int
	}
	var seqs []seq
	if c >= 3 && p > c && p <= fanWarnsdorffMaxP {
		seqs = append(seqs, seq{"fan", fanStates(p, c, true, false)})
		// The flexible variant (a live pivot may retire early) only pays
		// off for the smallest buffers.
		if c <= flexibleMaxC {
			seqs = append(seqs, seq{"fan-flexible", fanStates(p, c, true, true)})
		}
	}
	seqs = append(seqs, seq{"strip", stripStates(p, c)}, seq{"cyclic", cyclicStates(p, c)}, seq{"split", splitStates(p, c)},
		seq{"tournament", tournamentStates(p, c)}, seq{"beta", betaStates(p, c, nil)})
	if p <= optimalCandidateP {
		res, err := OptimalSwaps(p, c, 0)
		if err != nil {
			return nil, err
		}
		seqs = append(seqs, seq{"optimal", res.States})
	}
	for _, sq := range seqs {
		if sq.states != nil {
			cands = append(cands, Candidate{Source: sq.source, Order: FillOrder(p, c, sq.states), States: sq.states})
		}
	}
	return cands, nil
}

// BestCandidate replays each candidate under Belady and returns the one
// tierflow keeps: within BETA's swaps (Marius eq. 3), preferred by
// TierflowPrefers, the first of equals; with its counts.
func BestCandidate(p, c int, cands []Candidate) (Candidate, Counts, error) {
	var best Candidate
	var bestCounts Counts
	found := false
	for _, cd := range cands {
		s, err := Replay(p, c, cd.Order, Belady)
		if err != nil {
			return Candidate{}, Counts{}, err
		}
		if s.Counts.Swaps > BETASwaps(p, c) {
			continue
		}
		if !found || TierflowPrefers(s.Counts, bestCounts) {
			best, bestCounts, found = cd, s.Counts, true
		}
	}
	if !found { // BETA's own states always qualify
		return Candidate{}, Counts{}, fmt.Errorf("no candidate within BETA's %d swaps", BETASwaps(p, c))
	}
	return best, bestCounts, nil
}

// fanWarnsdorffMaxP is the largest p for which tierflow tries the
// pivot/mover sequence with Warnsdorff's rule (O(p⁴/c) to build).
const fanWarnsdorffMaxP = 128

// flexibleMaxC is the largest c for which tierflow also tries the
// flexible pivot/mover sequence.
const flexibleMaxC = 5

// optimalCandidateP is the largest p for which tierflow runs the exact
// search (every c takes under 10 ms there).
const optimalCandidateP = 9

// PrefetchTarget is the share of swaps tierflow aims to make prefetchable.
const PrefetchTarget = 0.95

// MeetsPrefetchTarget reports whether at least PrefetchTarget of the
// swaps are prefetchable (true when there are none).
func (c Counts) MeetsPrefetchTarget() bool {
	return float64(c.PrefetchableSwaps) >= PrefetchTarget*float64(c.Swaps)
}

// TierflowPrefers reports whether tierflow prefers a candidate with counts
// a to one with counts b: meeting PrefetchTarget first, then fewer swaps,
// then more prefetchable swaps.
func TierflowPrefers(a, b Counts) bool {
	ga, gb := a.MeetsPrefetchTarget(), b.MeetsPrefetchTarget()
	switch {
	case ga != gb:
		return ga
	case a.Swaps != b.Swaps:
		return a.Swaps < b.Swaps
	}
	return a.PrefetchableSwaps > b.PrefetchableSwaps
}

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
	return tierflowOrderWithout(p, c, storedTables{})
}

// storedTables names stored tables (tables.go) tierflow leaves out.
type storedTables struct{ strip, cyclic, split bool }

// tierflowOrderWithout is tierflowOrder without the candidates of the
// stored tables in skip.
func tierflowOrderWithout(p, c int, skip storedTables) ([]Bucket, [][]int, error) {
	type cand struct {
		order  []Bucket
		states [][]int
		counts Counts
	}
	var best *cand
	consider := func(order []Bucket, states [][]int) error {
		s, err := Replay(p, c, order, Belady)
		if err != nil {
			return err
		}
		if s.Counts.Swaps > BETASwaps(p, c) {
			return nil
		}
		cd := &cand{order: order, states: states, counts: s.Counts}
		if best == nil || TierflowPrefers(cd.counts, best.counts) {
			best = cd
		}
		return nil
	}
	if c >= 3 {
		order, states, err := legendCOrder(p, c, 0)
		if err != nil {
			return nil, nil, err
		}
		if err := consider(order, states); err != nil {
			return nil, nil, err
		}
	}
	// Every other candidate is a state sequence, turned into buckets by
	// FillOrder.
	var seqs [][][]int
	if c >= 3 && p > c && p <= fanWarnsdorffMaxP {
		// The flexible variant (a live pivot may retire early) only pays
		// off for the smallest buffers.
		for _, flexible := range []bool{false, true} {
			if flexible && c > flexibleMaxC {
				break
			}
			seqs = append(seqs, fanStates(p, c, true, flexible))
		}
	}
	if !skip.strip {
		seqs = append(seqs, stripStates(p, c))
	}
	if !skip.cyclic {
		seqs = append(seqs, cyclicStates(p, c))
	}
	if !skip.split {
		seqs = append(seqs, splitStates(p, c))
	}
	seqs = append(seqs, tournamentStates(p, c), betaStates(p, c, nil))
	if p <= optimalCandidateP {
		res, err := OptimalSwaps(p, c, 0)
		if err != nil {
			return nil, nil, err
		}
		seqs = append(seqs, res.States)
	}
	for _, states := range seqs {
		if states == nil {
			continue
		}
		if err := consider(FillOrder(p, c, states), states); err != nil {
			return nil, nil, err
		}
	}
	if best == nil { // BETA's own states always qualify
		return nil, nil, fmt.Errorf("no candidate within BETA's %d swaps", BETASwaps(p, c))
	}
	return best.order, best.states, nil
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

// TierflowWithout builds tierflow's Plan for (p, c) as Build does (under
// Belady) but without the candidates of the named stored tables ("strip",
// "cyclic", "split"; tables.go): what its other candidates reach. The
// table generator (internal/gentables) searches where that misses
// PrefetchTarget.
func TierflowWithout(p, c int, tables ...string) (*Plan, error) {
	var skip storedTables
	for _, t := range tables {
		switch t {
		case "strip":
			skip.strip = true
		case "cyclic":
			skip.cyclic = true
		case "split":
			skip.split = true
		default:
			return nil, fmt.Errorf("unknown stored table %q (want strip, cyclic or split)", t)
		}
	}
	spec, err := Lookup("tierflow")
	if err != nil {
		return nil, err
	}
	spec.gen = func(p, c int, _ int64) ([]Bucket, [][]int, error) {
		return tierflowOrderWithout(p, c, skip)
	}
	return spec.build(p, c, Belady, 0)
}

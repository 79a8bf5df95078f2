package search

import (
	"math/rand/v2"
	"slices"

	"github.com/tierflow/tierflow/orderings/internal/cyclic"
)

// The split search: a second way to find cyclic constructions
// (orderings/internal/cyclic), for the pairs where cyclicCandidates'
// randomised pattern search runs out of nodes. A block of one step s covers the differences
// {s, 2s, …, k·s} of Z_n (up to sign), a pinned block with a group of q
// extra partitions {s, …, (k−q)·s}, and a block with a pattern of r ≥ k+1
// steps its r·k window sums; a pattern of 2 … k steps repeats its total
// and is never used. Single and pinned steps are few per difference (the
// smallest difference not yet covered is j·s for some j ≤ k), so an exact
// cover by them alone is a small exhaustive search (splitSingles); a few
// patterns drawn at random (seeded) cover part of the differences first
// where single steps alone cannot (cyclicSplits).

// splitSingles searches, exhaustively up to maxNodes nodes, for steps
// that split the differences marked in need exactly: one step per group
// of pins (group i of pins[i] extra partitions, a step s whose set is
// {s, …, (k−pins[i])·s}; none for a group of k) and any number of single
// steps (sets {s, …, k·s}), every step coprime to n. The smallest
// uncovered difference is covered next, by each step that can cover it
// in turn (groups of equal size in their order). Each split found is
// passed to yield (pinSteps[i] for group i, 0 for a group of k) until it
// returns false. complete reports whether the search space was exhausted
// (every split was yielded) rather than cut at maxNodes or by yield.
func splitSingles(n, k int, need []bool, pins []int, maxNodes int, yield func(pinSteps, singles []int) bool) (nodes int, complete bool) {
	h := (n - 1) / 2
	if n < 3 || n%2 == 0 || len(need) != h+1 {
		return 0, true
	}
	cnt := 0
	for d := 1; d <= h; d++ {
		if need[d] {
			cnt++
		}
	}
	pinned := 0
	for _, q := range pins {
		if q < 1 || q > k {
			return 0, true
		}
		pinned += k - q
	}
	if cnt < pinned || (cnt-pinned)%k != 0 {
		return 0, true
	}
	// sets[L][s]: the differences {s, …, L·s}, nil if they repeat or s
	// is not coprime to n.
	sets := make([][][]int, k+1)
	for L := 1; L <= k; L++ {
		sets[L] = make([][]int, h+1)
		for s := 1; s <= h; s++ {
			if gcdInt(s, n) != 1 {
				continue
			}
			var ds []int
			ok := true
			for j := 1; j <= L && ok; j++ {
				d := normDiff(j*s, n)
				ok = d != 0 && !slices.Contains(ds, d)
				ds = append(ds, d)
			}
			if ok {
				sets[L][s] = ds
			}
		}
	}
	// cover[d]: the (s, j) with j·s = ±d.
	type sj struct{ s, j int }
	cover := make([][]sj, h+1)
	for s := 1; s <= h; s++ {
		if gcdInt(s, n) != 1 {
			continue
		}
		for j := 1; j <= k; j++ {
			d := normDiff(j*s, n)
			if d != 0 {
				cover[d] = append(cover[d], sj{s, j})
			}
		}
	}
	used := make([]bool, h+1)
	for d := 1; d <= h; d++ {
		used[d] = !need[d]
	}
	pinSteps := make([]int, len(pins))
	var singles []int
	fits := func(ds []int) bool {
		for _, d := range ds {
			if used[d] {
				return false
			}
		}
		return true
	}
	mark := func(ds []int, v bool) {
		for _, d := range ds {
			used[d] = v
		}
	}
	stopped := false
	var dfs func(from int) bool // false: stop
	dfs = func(from int) bool {
		nodes++
		if nodes > maxNodes {
			stopped = true
			return false
		}
		d := from
		for d <= h && used[d] {
			d++
		}
		if d > h {
			for i, q := range pins {
				if q < k && pinSteps[i] == 0 {
					return true
				}
			}
			if !yield(pinSteps, singles) {
				stopped = true
				return false
			}
			return true
		}
		for _, o := range cover[d] {
			// A pinned group, the first unplaced one of each size.
			for i, q := range pins {
				if q == k || pinSteps[i] != 0 || o.j > k-q {
					continue
				}
				first := true
				for i2 := 0; i2 < i; i2++ {
					if pins[i2] == q && pinSteps[i2] == 0 {
						first = false
					}
				}
				if !first {
					continue
				}
				ds := sets[k-q][o.s]
				if ds == nil || !fits(ds) {
					continue
				}
				mark(ds, true)
				pinSteps[i] = o.s
				if !dfs(d + 1) {
					return false
				}
				pinSteps[i] = 0
				mark(ds, false)
			}
			ds := sets[k][o.s]
			if ds == nil || !fits(ds) {
				continue
			}
			mark(ds, true)
			singles = append(singles, o.s)
			if !dfs(d + 1) {
				return false
			}
			singles = singles[:len(singles)-1]
			mark(ds, false)
		}
		return true
	}
	dfs(1)
	return nodes, !stopped
}

// randomPattern draws a step pattern of r ≥ k+1 steps over Z_n whose r·k
// cyclic window sums are distinct differences marked in avail, with a
// total coprime to n: a randomised depth-first search of at most
// maxNodes nodes. It returns the pattern and its window sums, or nil.
func randomPattern(n, k, r int, avail []bool, rng *rand.Rand, maxNodes int) ([]int, []int) {
	if r < k+1 {
		return nil, nil
	}
	s := make([]int, 0, r)
	var sums []int
	nodes := 0
	free := func(d int, pending []int) bool {
		return d != 0 && d < len(avail) && avail[d] && !slices.Contains(sums, d) && !slices.Contains(pending, d)
	}
	var dfs func() bool
	dfs = func() bool {
		nodes++
		if nodes > maxNodes {
			return false
		}
		if len(s) == r {
			wrap, fit := wrapSums(s, k, n, nil, free)
			if !fit {
				return false
			}
			sums = append(sums, wrap...)
			return true
		}
		start := rng.IntN(n - 1)
		for t := range n - 1 {
			v := 1 + (start+t)%(n-1)
			s = append(s, v)
			if add, ok := stepSums(s, k, n, free); ok {
				sums = append(sums, add...)
				if dfs() {
					return true
				}
				sums = sums[:len(sums)-len(add)]
			}
			s = s[:len(s)-1]
			if nodes > maxNodes {
				return false
			}
		}
		return false
	}
	if !dfs() {
		return nil, nil
	}
	return append([]int(nil), s...), sums
}

// cyclicSplits searches the cyclic constructions for (p, c) by splits.
// For every n = p − m odd (m ≤ maxExtra) and every way to split the m
// extra partitions into at most maxGroups pinned groups (compositions,
// each group of 1 … c−1) whose differences leave a multiple of c−1, it
// runs splitSingles on all the differences of Z_n (at most maxNodes
// nodes), then draws patterns: draws times one or two patterns of
// c … c+2 steps at random (randomPattern, seeded by p, c, m, the groups
// and the draw) with distinct window sums, each followed by splitSingles
// on the differences they leave (at most drawNodes nodes; no draws where
// the pinned blocks leave fewer than c·(c−1) differences, too few for any
// pattern, so the draws cannot split them). Each
// construction found is passed to yield until it returns false (then it
// returns false). For every (n, groups) where splitSingles on all the
// differences ran to completion without being stopped, exhausted gets
// (n, groups): every split by single and pinned steps alone was yielded.
func cyclicSplits(p, c, maxExtra, maxGroups, maxNodes, draws, drawNodes int, yield func(cyclic.Plan) bool, exhausted func(n int, pins []int)) bool {
	if c < 3 {
		return true
	}
	k := c - 1
	for _, opt := range splitOptions(p, c, maxExtra, maxGroups) {
		n, m, pins := opt.N, p-opt.N, opt.Pins
		stop := false
		emit := func(pats [][]int) func(pinSteps, singles []int) bool {
			return func(pinSteps, singles []int) bool {
				stop = !yield(splitPlan(n, pins, pinSteps, singles, pats))
				return !stop
			}
		}
		_, complete := splitSingles(n, k, allDiffs(n), pins, maxNodes, emit(nil))
		if stop {
			return false
		}
		if complete {
			exhausted(n, pins)
		}
		seed := uint64(p)<<32 | uint64(c)<<16 | uint64(m)
		for _, q := range pins {
			seed = seed*31 + uint64(q)
		}
		rng := newSplitRand(seed)
		pinned := 0
		for _, q := range pins {
			pinned += k - q
		}
		if (k+1)*k > (n-1)/2-pinned {
			// No room for a pattern's (k+1)·k window sums next to the
			// pinned blocks: no draw could give a split.
			continue
		}
		for d := range draws {
			avail := allDiffs(n)
			var pats [][]int
			for np := 1 + d%2; np > 0; np-- {
				pat, sums := randomPattern(n, k, k+1+rng.IntN(3), avail, rng, 200)
				if pat == nil {
					break
				}
				for _, x := range sums {
					avail[x] = false
				}
				pats = append(pats, pat)
			}
			if len(pats) == 0 {
				continue
			}
			splitSingles(n, k, avail, pins, drawNodes, emit(pats))
			if stop {
				return false
			}
		}
	}
	return true
}

// splitPlan is the cyclic construction of a split: Z_n, the pinned
// groups' blocks (step pinSteps[i], any for a group of c−1), the single
// steps' blocks and the patterns, in that order.
func splitPlan(n int, pins, pinSteps, singles []int, pats [][]int) cyclic.Plan {
	pl := cyclic.Plan{N: n, Pins: append([]int(nil), pins...)}
	for _, s := range pinSteps {
		if s == 0 {
			s = 1 // a group of c−1: a BETA sweep, any step
		}
		pl.Blocks = append(pl.Blocks, []int{s})
	}
	pl.Blocks = append(pl.Blocks, stepBlocks(singles)...)
	for _, pat := range pats {
		pl.Blocks = append(pl.Blocks, append([]int(nil), pat...))
	}
	return pl
}

// splitOption is one (n, groups) of the split search: Z_n with the
// p − n extra partitions in pinned groups of Pins[i] each.
type splitOption struct {
	N    int
	Pins []int
}

// splitOptions lists the (n, groups) cyclicSplits searches for (p, c):
// n = p − m odd with m ≤ maxExtra and n ≥ 2c − 1, the m extra partitions
// in at most maxGroups groups of 1 … c−1 (compositions, in order), whose
// pinned blocks leave a multiple of c−1 of the (n−1)/2 differences.
func splitOptions(p, c, maxExtra, maxGroups int) []splitOption {
	if c < 3 {
		return nil
	}
	k := c - 1
	var out []splitOption
	for m := 0; m <= maxExtra; m++ {
		n := p - m
		if n%2 == 0 || n < 2*k+1 {
			continue
		}
		h := (n - 1) / 2
		comps := [][]int{nil}
		if m > 0 {
			comps = compositions(m, k, maxGroups)
		}
		for _, pins := range comps {
			pinned := 0
			for _, q := range pins {
				pinned += k - q
			}
			if h < pinned || (h-pinned)%k != 0 {
				continue
			}
			out = append(out, splitOption{N: n, Pins: pins})
		}
	}
	return out
}

// newSplitRand is the split search's pattern draws' generator.
func newSplitRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

package search

import (
	"slices"

	"github.com/tierflow/tierflow/orderings/internal/cyclic"
)

// The search for cyclic constructions (orderings/internal/cyclic): the
// steps whose window sums split the differences of Z_n (cyclicSteps,
// cyclicPattern, cyclicPatterns), tried for every way to pin the extra
// partitions (cyclicCandidates). CyclicTable runs it for the pairs where
// tierflow's other candidates miss PrefetchTarget and writes what it
// finds to orderings/cyclic_table.go, so that building a Plan does not
// search.

// cyclicSteps finds steps s₁, s₂, … coprime to n whose multiple sets
// {s, 2s, …, k·s} (differences up to sign mod n) partition 1 … (n−1)/2;
// with first > 0 the first set has first multiples instead of k. It gives
// up (nil) after maxNodes backtracking nodes.
func cyclicSteps(n, k, first int, maxNodes int) []int {
	h := (n - 1) / 2
	if n < 3 || n%2 == 0 || k < 1 || (first > 0 && (h-first)%k != 0) || (first == 0 && h%k != 0) {
		return nil
	}
	norm := func(x int) int {
		x %= n
		if x > n-x {
			x = n - x
		}
		return x
	}
	used := make([]bool, h+1)
	var out []int
	nodes := 0
	var rec func(size int) bool
	rec = func(size int) bool {
		nodes++
		if nodes > maxNodes {
			return false
		}
		d := 0 // the smallest uncovered difference must be some j·s
		for x := 1; x <= h; x++ {
			if !used[x] {
				d = x
				break
			}
		}
		if d == 0 {
			return true
		}
		set := make([]int, 0, size)
		for j := 1; j <= size; j++ {
			for s := 1; s <= h; s++ {
				if gcdInt(s, n) != 1 || norm(j*s) != d {
					continue
				}
				set = set[:0]
				ok := true
				for i := 1; i <= size && ok; i++ {
					m := norm(i * s)
					if m == 0 || used[m] || slices.Contains(set, m) {
						ok = false
					}
					set = append(set, m)
				}
				if !ok {
					continue
				}
				for _, m := range set {
					used[m] = true
				}
				out = append(out, s)
				if rec(k) {
					return true
				}
				out = out[:len(out)-1]
				for _, m := range set {
					used[m] = false
				}
				if nodes > maxNodes {
					return false
				}
			}
		}
		return false
	}
	size := k
	if first > 0 {
		size = first
	}
	if !rec(size) {
		return nil
	}
	return out
}

func gcdInt(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// cyclicMaxNodes bounds the step search per (p, c).
const cyclicMaxNodes = 20000

// cyclicCandidates searches the cyclic constructions for (p, c), passing
// each to yield until it returns false. For every m = 0 … c+1 with
// n = p − m odd, the m extra partitions n … p−1 are split into up to
// three groups; each group is pinned in the buffer through a block of one
// step s over Z_n, whose window is that much shorter (its differences
// s … (c−1−q)s for a group of q; none when q = c−1, a BETA sweep), so it
// meets every partition of Z_n once, and the group after it at the
// junction. The differences left are split either into single steps
// (cyclicSteps, no or one group) or into step patterns (cyclicPattern,
// one pattern, then cyclicPatterns, up to four blocks), the pattern
// searches sharing maxNodes nodes in all. Pairs the construction misses (extra
// partitions of groups that never meet) are covered at the end.
func cyclicCandidates(p, c, maxNodes int, yield func(cyclic.Plan) bool) {
	if c < 3 {
		return
	}
	k := c - 1
	left := maxNodes
	// patterns splits need into one pattern, else into up to four.
	patterns := func(n int, need []bool) [][]int {
		if left <= 0 {
			return nil
		}
		pat, used := cyclicPattern(n, k, need, left/2+1)
		left -= used
		if pat != nil {
			return [][]int{pat}
		}
		pats, used := cyclicPatterns(n, k, need, max(left/2, 1), 4, 0)
		left -= used
		return pats
	}
	for m := 0; m <= k+2; m++ {
		n := p - m
		if n%2 == 0 || n < c+2 {
			continue
		}
		if m == 0 {
			if steps := cyclicSteps(n, k, 0, cyclicMaxNodes); steps != nil {
				if !yield(cyclic.Plan{N: n, Blocks: stepBlocks(steps)}) {
					return
				}
			} else if pats := patterns(n, allDiffs(n)); pats != nil {
				if !yield(cyclic.Plan{N: n, Blocks: pats}) {
					return
				}
			}
			continue
		}
		if m < k {
			if steps := cyclicSteps(n, k, k-m, cyclicMaxNodes); steps != nil {
				if !yield(cyclic.Plan{N: n, Pins: []int{m}, Blocks: stepBlocks(steps)}) {
					return
				}
				continue
			}
		}
		for _, pins := range compositions(m, k, 3) {
			steps, need, ok := pinnedSteps(n, k, pins)
			if !ok {
				continue
			}
			if pats := patterns(n, need); pats != nil {
				if !yield(cyclic.Plan{N: n, Pins: pins, Blocks: append(stepBlocks(steps), pats...)}) {
					return
				}
			}
		}
	}
}

// compositions lists the ways to write m as an ordered sum of at most
// maxParts parts of 1 … maxPart each.
func compositions(m, maxPart, maxParts int) [][]int {
	var out [][]int
	var rec func(left int, cur []int)
	rec = func(left int, cur []int) {
		if left == 0 {
			out = append(out, append([]int(nil), cur...))
			return
		}
		if len(cur) == maxParts {
			return
		}
		for q := 1; q <= min(left, maxPart); q++ {
			rec(left-q, append(cur, q))
		}
	}
	rec(m, nil)
	return out
}

// pinnedSteps picks, for pinned blocks of the given group sizes, the
// smallest steps coprime to n whose differences s … (k−q)s are distinct
// and returns them with the differences left to cover.
func pinnedSteps(n, k int, pins []int) ([]int, []bool, bool) {
	need := allDiffs(n)
	h := (n - 1) / 2
	var steps []int
	for _, q := range pins {
		found := false
		for s := 1; s <= h && !found; s++ {
			if gcdInt(s, n) != 1 {
				continue
			}
			var ds []int
			ok := true
			for j := 1; j <= k-q && ok; j++ {
				d := normDiff(j*s, n)
				ok = d != 0 && need[d] && !slices.Contains(ds, d)
				ds = append(ds, d)
			}
			if !ok {
				continue
			}
			for _, d := range ds {
				need[d] = false
			}
			steps, found = append(steps, s), true
		}
		if !found {
			return nil, nil, false
		}
	}
	return steps, need, true
}

func stepBlocks(steps []int) [][]int {
	out := make([][]int, len(steps))
	for i, s := range steps {
		out[i] = []int{s}
	}
	return out
}

func allDiffs(n int) []bool {
	need := make([]bool, (n-1)/2+1)
	for d := 1; d < len(need); d++ {
		need[d] = true
	}
	return need
}

// stepSums are the window sums of lengths 1 … k that end at the last
// step of s (as differences up to sign), each accepted by fits(d, the
// sums so far), or false when one is not: what adding that step adds.
func stepSums(s []int, k, n int, fits func(d int, pending []int) bool) ([]int, bool) {
	var add []int
	sum := 0
	for j := 0; j < k && j < len(s); j++ {
		sum += s[len(s)-1-j]
		d := normDiff(sum, n)
		if !fits(d, add) {
			return nil, false
		}
		add = append(add, d)
	}
	return add, true
}

// wrapSums closes a cyclic step pattern s over Z_n: it returns dst with
// the window sums of lengths 1 … k that wrap around the pattern's end
// appended (as differences up to sign), each accepted by fits(d, the
// wrapped sums so far), or false when one is not or when the pattern's
// total is not coprime to n (repeating s would not visit every partition).
func wrapSums(s []int, k, n int, dst []int, fits func(d int, pending []int) bool) ([]int, bool) {
	r := len(s)
	tot := 0
	for _, x := range s {
		tot += x
	}
	if gcdInt(normDiff(tot, n), n) != 1 {
		return dst, false
	}
	start := len(dst)
	for i := max(0, r-k+1); i < r; i++ {
		sum := 0
		for j := 0; j < k; j++ {
			sum += s[(i+j)%r]
			if i+j < r {
				continue
			}
			d := normDiff(sum, n)
			if !fits(d, dst[start:]) {
				return dst, false
			}
			dst = append(dst, d)
		}
	}
	return dst, true
}

// normDiff is x mod n taken up to sign, in 0 … n/2.
func normDiff(x, n int) int {
	x %= n
	if x < 0 {
		x += n
	}
	return min(x, n-x)
}

package orderings

// The cyclic ordering: a sliding window over arithmetic progressions of
// Z_n, after the constructions of k-radius sequences (Jaromczyk and Lonc,
// "Sequences of radius k", 2004; Blackburn and McKee, "Constructing
// k-radius sequences", 2012).
//
// A block with step s (gcd(s, n) = 1) is the sequence x_i = a + i·s,
// i = 0 … n+k−1, wrapping around to repeat its first k partitions. Sliding
// a window of k+1 = c partitions over it (each load evicts the partition
// loaded earliest) covers every pair at distance j ≤ k, i.e. every pair
// {x, x ± j·s}: the k differences s, 2s, …, ks (taken up to sign) each
// once around the cycle. If the steps of the blocks split the differences
// 1 … (n−1)/2 into such sets exactly, the blocks together cover K_n with
// c−1 new pairs per swap except at the junctions, close to Marius eq. 2.
// With p = n + m (m ≤ c−2) the m extra partitions are pinned in the
// buffer during a first block whose window is m shorter (differences
// s … (c−1−m)s): they meet every partition of Z_n, and each other, once.
//
// Every swap evicts the partition loaded earliest, never the one loaded
// last (c ≥ 3), so the pair the newest partition makes with the others
// that stay is always there to overlap the next load: close to every
// swap is prefetchable.

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
					if m == 0 || used[m] || containsInt(set, m) {
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

// cyclicPlan is one cyclic construction for (p, c): the blocks of steps
// over Z_N, the first one pinned when p > N.
type cyclicPlan struct {
	N      int
	Blocks [][]int
}

// cyclicStates returns the states of the cyclic candidate for (p, c)
// from cyclicTable, or nil where the table has none.
func cyclicStates(p, c int) [][]int {
	pl, ok := cyclicTable[[2]int{p, c}]
	if !ok {
		return nil
	}
	return cyclicSequence(p, c, pl.N, pl.Blocks)
}

// cyclicCandidates searches the cyclic constructions for (p, c), passing
// each to yield until it returns false: for every m = 0 … c−1 with
// n = p − m odd, the m extra partitions n … p−1 are pinned in the buffer
// through a first block with one step s₀, whose window over Z_n is m
// shorter (its differences s₀ … (c−1−m)s₀; none when m = c−1, which makes
// it a BETA sweep), so each meets every partition of Z_n, and the others,
// once. The differences left are split either into single steps
// (cyclicSteps) or into one step pattern (cyclicPattern, at most maxNodes
// nodes per try).
func cyclicCandidates(p, c, maxNodes int, yield func(cyclicPlan) bool) {
	if c < 3 {
		return
	}
	k := c - 1
	for m := 0; m <= k; m++ {
		n := p - m
		if n%2 == 0 || n < c+2 {
			continue
		}
		if m == 0 {
			if steps := cyclicSteps(n, k, 0, cyclicMaxNodes); steps != nil {
				if !yield(cyclicPlan{n, stepBlocks(steps)}) {
					return
				}
			} else if pat := cyclicPattern(n, k, allDiffs(n), maxNodes); pat != nil {
				if !yield(cyclicPlan{n, [][]int{pat}}) {
					return
				}
			}
			continue
		}
		if m < k {
			if steps := cyclicSteps(n, k, k-m, cyclicMaxNodes); steps != nil {
				if !yield(cyclicPlan{n, stepBlocks(steps)}) {
					return
				}
				continue
			}
		}
		// A first step s₀ whose multiples leave a set the pattern search
		// can split.
		h := (n - 1) / 2
		for s0 := 1; s0 <= min(h, cyclicFirstSteps); s0++ {
			if gcdInt(s0, n) != 1 {
				continue
			}
			need := allDiffs(n)
			ok := true
			for j := 1; j <= k-m && ok; j++ {
				d := normDiff(j*s0, n)
				ok = need[d]
				need[d] = false
			}
			if !ok {
				continue
			}
			if pat := cyclicPattern(n, k, need, maxNodes); pat != nil {
				if !yield(cyclicPlan{n, [][]int{{s0}, pat}}) {
					return
				}
				break
			}
			if m == k {
				break // s₀ covers no difference: one try is enough
			}
		}
	}
}

// cyclicFirstSteps bounds the first steps tried with pinned partitions.
const cyclicFirstSteps = 2

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

// normDiff is x mod n taken up to sign, in 0 … n/2.
func normDiff(x, n int) int {
	x %= n
	if x < 0 {
		x += n
	}
	return min(x, n-x)
}

// cyclicSequence slides the window over the blocks: block b repeats its
// step pattern until it is back at its start (n·len(pattern) steps) and
// then takes the window's length of steps more, so that the windows that
// wrap around are covered too. The first block is the pinned one when
// p > n.
func cyclicSequence(p, c, n int, blocks [][]int) [][]int {
	m := p - n
	// The load sequence; pinned marks loads during the first block when
	// there are extra partitions.
	var seq []int
	var pinned, junction []bool
	for x := n; x < p; x++ {
		seq, pinned, junction = append(seq, x), append(pinned, true), append(junction, false)
	}
	cur := 0
	for b, pat := range blocks {
		wrap := c - 1
		pin := false
		if b == 0 && m > 0 {
			wrap, pin = c-1-m, true
		}
		x := cur
		for i := 0; i < n*len(pat)+wrap; i++ {
			if i > 0 {
				x = (x + pat[(i-1)%len(pat)]) % n
			}
			if i == 0 && b > 0 {
				continue // the block starts where the last one ended
			}
			seq = append(seq, x)
			pinned = append(pinned, pin)
			junction = append(junction, b > 0 && i == 1)
		}
		cur = seq[len(seq)-1]
	}
	buf := make([]int, 0, c)
	loaded := make([]int, p) // when each resident was loaded
	var states [][]int
	for t, x := range seq {
		if containsInt(buf, x) {
			continue
		}
		if len(buf) < c {
			buf = append(buf, x)
			loaded[x] = t
			if len(buf) == c {
				states = append(states, append([]int(nil), buf...))
			}
			continue
		}
		// The earliest loaded, the extra ones excepted while pinned; at a
		// junction the second earliest: the partition loaded last pairs
		// anew only with the earliest (its pairs with the others were
		// covered at the start of the block), so that pair must stay to
		// overlap this load.
		o, o2 := -1, -1
		for i, y := range buf {
			if y >= n && pinned[t] {
				continue
			}
			switch {
			case o < 0 || loaded[y] < loaded[buf[o]]:
				o, o2 = i, o
			case o2 < 0 || loaded[y] < loaded[buf[o2]]:
				o2 = i
			}
		}
		if junction[t] && o2 >= 0 {
			o = o2
		}
		buf[o] = x
		loaded[x] = t
		states = append(states, append([]int(nil), buf...))
	}
	return states
}

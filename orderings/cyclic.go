package orderings

// The cyclic construction: a window sliding over arithmetic progressions
// of Z_n, after the constructions of k-radius sequences (Jaromczyk and
// Lonc, "Sequences of radius k", 2004; Blackburn and McKee, "Constructing
// k-radius sequences", 2012).
//
// A block with step pattern s_0 … s_{r−1} is the sequence x_0 = a,
// x_{i+1} = x_i + s_{i mod r} over Z_n, n·r steps long (back at a when the
// pattern's total D is coprime to n) plus k = c−1 more, so that it wraps
// around. Sliding a window of c partitions over it (each load evicts the
// partition loaded earliest) covers every pair at distance j ≤ k in the
// sequence: for each start i mod r and length j the whole difference
// class {x, x ± (s_i + … + s_{i+j−1})}, n pairs, once. If the r·k window
// sums of the blocks are exactly the differences 1 … (n−1)/2 up to sign,
// the blocks together cover K_n with c−1 new pairs per swap except at the
// junctions between blocks, close to Marius eq. 2 and below BETA's eq. 3.
// A one-step block s covers {s, 2s, …, ks}.
//
// With p = n + m, the m extra partitions are split into up to three
// groups, each pinned in the buffer through a one-step block of its own
// whose window is that much shorter: they meet every partition of Z_n
// once, and the next group at the junction. Pairs still missing (groups
// that do not meet) are covered one load at a time at the end.
//
// Every swap evicts the partition loaded earliest, never the one loaded
// last (unless a group of c−1 is pinned, a BETA sweep), so the pair the
// newest partition makes with the others that stay is always there to
// overlap the next load: close to every swap is prefetchable.
//
// Finding the steps is a search (cyclicSteps, cyclicPattern,
// cyclicPatterns). It runs offline, in TestCyclicTable with -cyclic-gen,
// and its results for the pairs where tierflow's other candidates miss
// PrefetchTarget are in cyclicTable (cyclic_table.go), so that building a
// Plan does not search.

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

// cyclicPlan is one cyclic construction for (p, c) over Z_N: the blocks
// of steps, of which the first len(Pins) are pinned blocks, block i with
// Pins[i] of the p − N extra partitions pinned in the buffer through it.
type cyclicPlan struct {
	N      int
	Pins   []int
	Blocks [][]int
}

// cyclicStates returns the states of the cyclic candidate for (p, c)
// from cyclicTable, or nil where the table has none.
func cyclicStates(p, c int) [][]int {
	pl, ok := cyclicTable[[2]int{p, c}]
	if !ok {
		return nil
	}
	return cyclicSequence(p, c, pl)
}

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
func cyclicCandidates(p, c, maxNodes int, yield func(cyclicPlan) bool) {
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
				if !yield(cyclicPlan{N: n, Blocks: stepBlocks(steps)}) {
					return
				}
			} else if pats := patterns(n, allDiffs(n)); pats != nil {
				if !yield(cyclicPlan{N: n, Blocks: pats}) {
					return
				}
			}
			continue
		}
		if m < k {
			if steps := cyclicSteps(n, k, k-m, cyclicMaxNodes); steps != nil {
				if !yield(cyclicPlan{N: n, Pins: []int{m}, Blocks: stepBlocks(steps)}) {
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
				if !yield(cyclicPlan{N: n, Pins: pins, Blocks: append(stepBlocks(steps), pats...)}) {
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
				ok = d != 0 && need[d] && !containsInt(ds, d)
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

// normDiff is x mod n taken up to sign, in 0 … n/2.
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
// wrap around are covered too. A pinned block first loads its group of
// extra partitions, which then stay until the block ends. Each load
// evicts the partition loaded earliest that is not pinned, except that a
// load of extra partitions keeps the previous group's (so the groups
// meet) and the first load of a block that follows an unpinned one keeps
// the earliest (see below). Pairs still uncovered at the end are covered
// one load at a time.
func cyclicSequence(p, c int, pl cyclicPlan) [][]int {
	n := pl.N
	group := make([]int, p) // pinned group of each extra partition
	var seq, pinGroup []int // the loads, and the group pinned at each
	var junction []bool
	x0 := n
	cur := 0
	for b, pat := range pl.Blocks {
		g := -1
		wrap := c - 1
		if b < len(pl.Pins) {
			g = b
			wrap -= pl.Pins[b]
			for range pl.Pins[b] {
				group[x0] = g
				seq, pinGroup, junction = append(seq, x0), append(pinGroup, g), append(junction, false)
				x0++
			}
		}
		x := cur
		for i := 0; i < n*len(pat)+wrap; i++ {
			if i > 0 {
				x = (x + pat[(i-1)%len(pat)]) % n
			}
			seq, pinGroup = append(seq, x), append(pinGroup, g)
			junction = append(junction, i == 1 && b > len(pl.Pins))
		}
		cur = seq[len(seq)-1]
	}
	buf := make([]int, 0, c)
	loaded := make([]int, p) // when each resident was loaded
	cov := make([]bool, p*p)
	var states [][]int
	push := func() {
		for i, a := range buf {
			for _, b := range buf[i+1:] {
				cov[a*p+b], cov[b*p+a] = true, true
			}
		}
		states = append(states, append([]int(nil), buf...))
	}
	load := func(t, x int, evict func(y int) bool, second bool) {
		loaded[x] = t
		if len(buf) < c {
			buf = append(buf, x)
			if len(buf) == c {
				push()
			}
			return
		}
		// The earliest loaded that may go; at a junction the second
		// earliest: the partition loaded last pairs anew only with the
		// earliest (its pairs with the others were covered at the start
		// of the block), so that pair must stay to overlap this load.
		o, o2 := -1, -1
		for i, y := range buf {
			if y == x || !evict(y) {
				continue
			}
			switch {
			case o < 0 || loaded[y] < loaded[buf[o]]:
				o, o2 = i, o
			case o2 < 0 || loaded[y] < loaded[buf[o2]]:
				o2 = i
			}
		}
		if second && o2 >= 0 {
			o = o2
		}
		buf[o] = x
		push()
	}
	for t, x := range seq {
		if containsInt(buf, x) {
			continue
		}
		g := pinGroup[t]
		pinnedNow := func(y int) bool { return y >= n && group[y] == g && g >= 0 }
		if x >= n { // keep the extras: the groups must meet
			keep := func(y int) bool { return y < n }
			has := false
			for _, y := range buf {
				has = has || keep(y)
			}
			if has {
				load(t, x, keep, false)
				continue
			}
		}
		load(t, x, func(y int) bool { return !pinnedNow(y) }, junction[t])
	}
	// Cover what is left, one load at a time: a partner of a resident if
	// possible.
	t := len(seq)
	for {
		a, b := -1, -1
		for x := 0; x < p && a < 0; x++ {
			for y := x + 1; y < p; y++ {
				if !cov[x*p+y] {
					a, b = x, y
					if containsInt(buf, y) {
						a, b = y, x
					}
					break
				}
			}
		}
		if a < 0 {
			return states
		}
		for _, x := range []int{a, b} {
			if !containsInt(buf, x) {
				keep := a
				if x == a {
					keep = b
				}
				load(t, x, func(y int) bool { return y != keep }, false)
				t++
			}
		}
	}
}

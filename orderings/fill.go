package orderings

import "sort"

// The fill order: how tierflow turns a buffer-state sequence into a
// bucket order that hides as many swaps as the states allow.
//
// A swap from state S_i to S_{i+1} evicts v_i and loads u_{i+1}; it is
// prefetchable when some bucket runs after v_i's last use and before
// u_{i+1}'s first, that is a bucket (a, b) with a and b in S_i \ {v_i}
// placed after every bucket of v_i in state i. A bucket may run in any
// state that holds both its partitions, not only the first (its home),
// so the best bucket order for fixed states is a maximum matching of
// swaps to buckets: swap i may take bucket (a, b) when a, b ∈ S_i \ {v_i}.
// Where the partition loaded last is evicted next (a BETA sweep), the
// state's own new buckets all touch the victim and only a bucket deferred
// from earlier (two pivots that stay) can fill the window; the matching
// finds the most such deferrals there are.
//
// Two restrictions keep the bucket order replaying, under Belady, to the
// states it was built from:
//
//   - Anchors. One home bucket of each state touching the partition it
//     loaded stays at home (the one the fewest swaps could use), so that
//     each load is still needed where the states put it.
//   - Liveness. A bucket may fill swap i only if both its partitions are
//     live there: each has a home bucket in a later state of the same stay
//     in the buffer. Deferring a bucket of a partition with nothing left
//     to do would move that partition's next use, and Belady, which
//     evicts the partition used furthest in the future, would then pick a
//     different victim among the idle ones (in a pivot refresh, several
//     are), typically one whose last use is the bucket just before the
//     load: a window of zero.
//
// Within state i the order is: the buckets touching v_i, then the others,
// then the bucket matched to swap i. Belady may still evict differently
// where the states' victim is not the partition used furthest in the
// future (ties among idle partitions, or states not built for Belady), so
// fillOrder replays the order and, while the replayed states differ from
// the ones it was built from, builds again from the replayed states,
// keeping the best order (fewest swaps, then most prefetchable) of a few
// rounds.
//
// Two choices serve time rather than the count, which does not see them:
// of the maximum matchings the greedy pass prefers one that moves few
// buckets out of the windows they already sit in (a window's length is
// how much compute hides the load), and the first state starts with a
// bucket of one partition and then needs the fill's partitions one at a
// time, so training starts when the first has arrived (staggerFill). In
// the simulator, at the sweep's best configuration (p=8, c=4, Marius on
// p3.2xlarge) the two together are the difference between 528.9 s and
// 511.7 s for the same states (the stagger alone: 517.4 s).

// fillRounds bounds fillOrder's rebuilds from replayed states.
const fillRounds = 4

// fillOrder turns states (each one swap from the last after the first,
// which holds the full buffer) into a bucket order for a buffer of c
// partitions: every bucket of the p×p grid whose partitions share a state
// is emitted once.
func fillOrder(p, c int, states [][]int) []Bucket {
	best := matchedOrder(p, states)
	bs, err := Replay(p, c, best, Belady)
	if err != nil {
		return best
	}
	cur := best
	for range fillRounds {
		st := replayStates(c, bs.Loads)
		if sameStates(st, states) {
			break
		}
		states = st
		cur = matchedOrder(p, states)
		s, err := Replay(p, c, cur, Belady)
		if err != nil {
			break
		}
		if s.Counts.Swaps < bs.Counts.Swaps || (s.Counts.Swaps == bs.Counts.Swaps && s.Counts.PrefetchableSwaps > bs.Counts.PrefetchableSwaps) {
			best, bs = cur, s
		}
	}
	return best
}

// replayStates returns the buffer states a replay passes through: the
// buffer once it first holds c partitions (or at the end, if it never
// does), then after each swap.
func replayStates(c int, loads []Load) [][]int {
	buf := make([]int, c)
	for i := range buf {
		buf[i] = None
	}
	var states [][]int
	filled := 0
	for _, l := range loads {
		buf[l.Slot] = l.Partition
		if l.Swap || filled+1 == c {
			states = append(states, append([]int(nil), buf...))
		}
		if !l.Swap {
			filled++
		}
	}
	if filled < c {
		var st []int
		for _, x := range buf {
			if x != None {
				st = append(st, x)
			}
		}
		states = append(states, st)
	}
	return states
}

// sameStates reports whether two state sequences hold the same sets in
// the same order.
func sameStates(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for _, x := range a[i] {
			if !containsInt(b[i], x) {
				return false
			}
		}
	}
	return true
}

// matchedOrder is one round of fillOrder: home buckets, anchors, a
// maximum matching of swaps to live buckets, and the order within each
// state. Swap i may take a bucket of two partitions of S_i \ {v_i} that
// are both live there; a greedy pass takes a free one, by tier (see
// below) and then by the end of its partitions' current stay together
// (earliest deadline first), then augmenting paths (Kuhn) run over the
// swaps left until a pass over all of them finds none, which makes the
// matching maximum.
func matchedOrder(p int, states [][]int) []Bucket {
	ns := len(states)
	victim := nextVictim(states)
	vict := make([]int, ns)
	for i := range vict {
		vict[i] = victim(i)
	}
	// Home: the first state holding both partitions of a bucket. Pairs of
	// partitions already together in the previous state were homed there.
	in := make([]bool, p) // membership of the previous state
	home := make([]int32, p*p)
	for i := range home {
		home[i] = -1
	}
	homed := make([][]int32, ns)
	for i, st := range states {
		for _, a := range st {
			for _, b := range st {
				if home[a*p+b] >= 0 || (in[a] && in[b]) {
					continue
				}
				home[a*p+b] = int32(i)
				homed[i] = append(homed[i], int32(a*p+b))
			}
		}
		if i > 0 {
			for _, x := range states[i-1] {
				in[x] = false
			}
		}
		for _, x := range st {
			in[x] = true
		}
	}
	// Per state and slot, scanning backwards: the state in which the
	// partition's stay ends (its first absence), and the latest state of
	// the stay, at or after this one, holding a home bucket of it (the
	// partition is live in state i while that is after i).
	end := make([]int32, p)
	last := make([]int32, p)
	stayEnd := make([][]int32, ns)
	lastHome := make([][]int32, ns)
	for i := ns - 1; i >= 0; i-- {
		st := states[i]
		for _, x := range st {
			if i == ns-1 || !containsInt(states[i+1], x) {
				end[x], last[x] = int32(i+1), -1
			}
		}
		for _, b := range homed[i] {
			for _, x := range [2]int32{b / int32(p), b % int32(p)} {
				if last[x] < 0 {
					last[x] = int32(i)
				}
			}
		}
		stayEnd[i] = make([]int32, len(st))
		lastHome[i] = make([]int32, len(st))
		for j, x := range st {
			stayEnd[i][j], lastHome[i][j] = end[x], last[x]
		}
	}
	// deadline is the last swap of the current stay that slots jx, jy of
	// state i can fill together.
	deadline := func(i, jx, jy int) int32 {
		return min(min(stayEnd[i][jx], stayEnd[i][jy])-2, lastHome[i][jx]-1, lastHome[i][jy]-1)
	}
	// Anchors: of the home buckets of state i touching the partition it
	// loaded, the one that can fill the fewest swaps stays at home.
	anchor := make([]bool, p*p)
	for i := 1; i < ns; i++ {
		st := states[i]
		ju := -1
		for j, x := range st {
			if !containsInt(states[i-1], x) {
				ju = j
			}
		}
		if ju < 0 {
			continue
		}
		best, bestN := -1, int32(0)
		for j, x := range st {
			for _, b := range [2]int{st[ju]*p + x, x*p + st[ju]} {
				if home[b] != int32(i) {
					continue
				}
				if n := max(deadline(i, ju, j)-int32(i)+1, 0); best < 0 || n < bestN {
					best, bestN = b, n
				}
			}
		}
		if best >= 0 {
			anchor[best] = true
		}
	}
	// eligible passes swap i's buckets to f until it returns true.
	eligible := func(i int, f func(b, jx, jy int) bool) bool {
		v, st := vict[i], states[i]
		if v == None {
			return false
		}
		for jx, x := range st {
			if x == v || lastHome[i][jx] <= int32(i) {
				continue
			}
			for jy, y := range st {
				if y == v || lastHome[i][jy] <= int32(i) || anchor[x*p+y] {
					continue
				}
				if f(x*p+y, jx, jy) {
					return true
				}
			}
		}
		return false
	}
	owner := make([]int32, p*p)
	for i := range owner {
		owner[i] = -1
	}
	mate := make([]int32, ns)
	// The greedy pass takes, in this order, a home bucket of the swap's own
	// state (it does not move), a bucket that touched its home state's
	// victim (it hid nothing there), then any other; each by deadline.
	// Moving a bucket out of its home state's window shortens that window,
	// which the count of prefetchable swaps does not see but time does.
	tier := func(i, b int) int {
		h := int(home[b])
		switch v := vict[h]; {
		case h == i:
			return 0
		case b/p == v || b%p == v:
			return 1
		}
		return 2
	}
	for i := range ns {
		mate[i] = -1
		pick, pickT, pickD := -1, 0, int32(0)
		eligible(i, func(b, jx, jy int) bool {
			if owner[b] >= 0 {
				return false
			}
			t, d := tier(i, b), deadline(i, jx, jy)
			if pick < 0 || t < pickT || (t == pickT && d < pickD) {
				pick, pickT, pickD = b, t, d
			}
			return false
		})
		if pick >= 0 {
			owner[pick], mate[i] = int32(i), int32(pick)
		}
	}
	seen := make([]int32, p*p)
	stamp := int32(0)
	var augment func(i int) bool
	augment = func(i int) bool {
		return eligible(i, func(b, _, _ int) bool {
			if seen[b] == stamp {
				return false
			}
			seen[b] = stamp
			if owner[b] < 0 || augment(int(owner[b])) {
				owner[b], mate[i] = int32(i), int32(b)
				return true
			}
			return false
		})
	}
	for grew := true; grew; {
		grew = false
		stamp++
		for i := range ns {
			if mate[i] < 0 && vict[i] != None && augment(i) {
				grew = true
			}
		}
	}
	// Each bucket runs in the state of the swap it fills, else at home.
	assigned := make([][]int32, ns)
	for i := range ns {
		for _, b := range homed[i] {
			s := i
			if owner[b] >= 0 {
				s = int(owner[b])
			}
			assigned[s] = append(assigned[s], b)
		}
	}
	order := make([]Bucket, 0, p*p)
	var rest []Bucket
	for i := range ns {
		v := vict[i]
		rest = rest[:0]
		for _, b := range assigned[i] {
			if b == mate[i] {
				continue
			}
			bk := Bucket{int(b) / p, int(b) % p}
			if bk.Src == v || bk.Dst == v {
				order = append(order, bk)
			} else {
				rest = append(rest, bk)
			}
		}
		order = append(order, rest...)
		if i == 0 {
			staggerFill(order, states[0], v)
		}
		if b := mate[i]; b >= 0 {
			order = append(order, Bucket{int(b) / p, int(b) % p})
		}
	}
	return order
}

// staggerFill orders the first state's buckets (the victim's, then the
// others; the bucket matched to its swap comes after them and is not
// passed) so that the initial fill is needed one partition at a time and
// training starts once the first has arrived: a bucket of one partition
// first (the victim's own where it is still there), then each section by
// the later of its partitions' arrivals.
func staggerFill(order []Bucket, st []int, v int) {
	start := -1
	for k, b := range order {
		if b.Src == b.Dst && (start < 0 || b.Src == v) {
			start = k
		}
	}
	first := v
	if start >= 0 {
		first = order[start].Src
		b := order[start]
		copy(order[1:start+1], order[:start])
		order[0] = b
		order = order[1:]
	}
	rank := func(x int) int {
		switch x {
		case first:
			return 0
		case v:
			return 1
		}
		return 2 + slotOf(st, x)
	}
	key := func(b Bucket) int { return max(rank(b.Src), rank(b.Dst)) }
	touch := 0
	for touch < len(order) && (order[touch].Src == v || order[touch].Dst == v) {
		touch++
	}
	for _, sec := range [][]Bucket{order[:touch], order[touch:]} {
		sort.SliceStable(sec, func(a, b int) bool { return key(sec[a]) < key(sec[b]) })
	}
}

// slotOf returns the index of x in st, or −1.
func slotOf(st []int, x int) int {
	for j, y := range st {
		if y == x {
			return j
		}
	}
	return -1
}

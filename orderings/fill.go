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
// FillOrder replays the order and, while the replayed states differ from
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

// fillRounds bounds FillOrder's rebuilds from replayed states.
const fillRounds = 4

// FillOrder turns states (each one swap from the last after the first,
// which holds the full buffer) into tierflow's bucket order for a buffer
// of c partitions (see above): every bucket of the p×p grid whose
// partitions share a state is emitted once.
func FillOrder(p, c int, states [][]int) []Bucket {
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

// matchedOrder is one round of FillOrder: home buckets, anchors, a
// maximum matching of swaps to live buckets, and the order within each
// state. Swap i may take a bucket of two partitions of S_i \ {v_i} that
// are both live there; a greedy pass takes a free one, by tier (see
// greedyMatch) and then by the end of its partitions' current stay
// together (earliest deadline first), then augmenting paths (Kuhn) run
// over the swaps left until a pass over all of them finds none, which
// makes the matching maximum.
func matchedOrder(p int, states [][]int) []Bucket {
	m := newMatching(p, states)
	m.findHomes()
	m.findStays()
	m.pickAnchors()
	m.greedyMatch()
	m.augmentMatch()
	return m.order()
}

// matching is one round of matchedOrder over states; buckets are indexed
// a·p + b.
type matching struct {
	p      int
	states [][]int
	vict   []int // the partition swap i evicts (v_i), or None
	// home[b] is the first state holding both partitions of bucket b and
	// homed[i] the buckets whose home is state i.
	home  []int32
	homed [][]int32
	// Per state and slot: the state in which the partition's stay ends
	// (its first absence), and the latest state of the stay, at or after
	// this one, holding a home bucket of it (the partition is live in
	// state i while that is after i).
	stayEnd, lastHome [][]int32
	anchor            []bool  // buckets that stay at home
	owner             []int32 // the swap each bucket fills, or −1
	mate              []int32 // the bucket each swap takes, or −1
}

func newMatching(p int, states [][]int) *matching {
	m := &matching{p: p, states: states, vict: make([]int, len(states))}
	victim := nextVictim(states)
	for i := range m.vict {
		m.vict[i] = victim(i)
	}
	return m
}

// findHomes sets home and homed. Pairs of partitions already together in
// the previous state were homed there.
func (m *matching) findHomes() {
	p, ns := m.p, len(m.states)
	in := make([]bool, p) // membership of the previous state
	m.home = make([]int32, p*p)
	for i := range m.home {
		m.home[i] = -1
	}
	m.homed = make([][]int32, ns)
	for i, st := range m.states {
		for _, a := range st {
			for _, b := range st {
				if m.home[a*p+b] >= 0 || (in[a] && in[b]) {
					continue
				}
				m.home[a*p+b] = int32(i)
				m.homed[i] = append(m.homed[i], int32(a*p+b))
			}
		}
		if i > 0 {
			for _, x := range m.states[i-1] {
				in[x] = false
			}
		}
		for _, x := range st {
			in[x] = true
		}
	}
}

// findStays sets stayEnd and lastHome, scanning the states backwards.
func (m *matching) findStays() {
	p, ns := m.p, len(m.states)
	end := make([]int32, p)
	last := make([]int32, p)
	m.stayEnd = make([][]int32, ns)
	m.lastHome = make([][]int32, ns)
	for i := ns - 1; i >= 0; i-- {
		st := m.states[i]
		for _, x := range st {
			if i == ns-1 || !containsInt(m.states[i+1], x) {
				end[x], last[x] = int32(i+1), -1
			}
		}
		for _, b := range m.homed[i] {
			for _, x := range [2]int32{b / int32(p), b % int32(p)} {
				if last[x] < 0 {
					last[x] = int32(i)
				}
			}
		}
		m.stayEnd[i] = make([]int32, len(st))
		m.lastHome[i] = make([]int32, len(st))
		for j, x := range st {
			m.stayEnd[i][j], m.lastHome[i][j] = end[x], last[x]
		}
	}
}

// deadline is the last swap of the current stay that slots jx, jy of
// state i can fill together.
func (m *matching) deadline(i, jx, jy int) int32 {
	se, lh := m.stayEnd[i], m.lastHome[i]
	return min(min(se[jx], se[jy])-2, lh[jx]-1, lh[jy]-1)
}

// pickAnchors sets anchor: of the home buckets of state i touching the
// partition it loaded, the one that can fill the fewest swaps stays at
// home.
func (m *matching) pickAnchors() {
	p := m.p
	m.anchor = make([]bool, p*p)
	for i := 1; i < len(m.states); i++ {
		st := m.states[i]
		ju := -1
		for j, x := range st {
			if !containsInt(m.states[i-1], x) {
				ju = j
			}
		}
		if ju < 0 {
			continue
		}
		best, bestN := -1, int32(0)
		for j, x := range st {
			for _, b := range [2]int{st[ju]*p + x, x*p + st[ju]} {
				if m.home[b] != int32(i) {
					continue
				}
				if n := max(m.deadline(i, ju, j)-int32(i)+1, 0); best < 0 || n < bestN {
					best, bestN = b, n
				}
			}
		}
		if best >= 0 {
			m.anchor[best] = true
		}
	}
}

// eligible passes swap i's buckets to f until it returns true.
func (m *matching) eligible(i int, f func(b, jx, jy int) bool) bool {
	p, v, st, lh := m.p, m.vict[i], m.states[i], m.lastHome[i]
	if v == None {
		return false
	}
	for jx, x := range st {
		if x == v || lh[jx] <= int32(i) {
			continue
		}
		for jy, y := range st {
			if y == v || lh[jy] <= int32(i) || m.anchor[x*p+y] {
				continue
			}
			if f(x*p+y, jx, jy) {
				return true
			}
		}
	}
	return false
}

// tier ranks bucket b for swap i in the greedy pass: a home bucket of the
// swap's own state (it does not move), a bucket that touched its home
// state's victim (it hid nothing there), then any other. Moving a bucket
// out of its home state's window shortens that window, which the count
// of prefetchable swaps does not see but time does.
func (m *matching) tier(i, b int) int {
	h := int(m.home[b])
	switch v := m.vict[h]; {
	case h == i:
		return 0
	case b/m.p == v || b%m.p == v:
		return 1
	}
	return 2
}

// greedyMatch gives each swap in turn the free eligible bucket of the
// lowest tier, then the earliest deadline.
func (m *matching) greedyMatch() {
	p, ns := m.p, len(m.states)
	m.owner = make([]int32, p*p)
	for i := range m.owner {
		m.owner[i] = -1
	}
	m.mate = make([]int32, ns)
	for i := range ns {
		m.mate[i] = -1
		pick, pickT, pickD := -1, 0, int32(0)
		m.eligible(i, func(b, jx, jy int) bool {
			if m.owner[b] >= 0 {
				return false
			}
			t, d := m.tier(i, b), m.deadline(i, jx, jy)
			if pick < 0 || t < pickT || (t == pickT && d < pickD) {
				pick, pickT, pickD = b, t, d
			}
			return false
		})
		if pick >= 0 {
			m.owner[pick], m.mate[i] = int32(i), int32(pick)
		}
	}
}

// augmentMatch runs augmenting paths (Kuhn) from the unmatched swaps
// until a pass over all of them finds none: the matching is then maximum.
func (m *matching) augmentMatch() {
	seen := make([]int32, m.p*m.p)
	stamp := int32(0)
	var augment func(i int) bool
	augment = func(i int) bool {
		return m.eligible(i, func(b, _, _ int) bool {
			if seen[b] == stamp {
				return false
			}
			seen[b] = stamp
			if m.owner[b] < 0 || augment(int(m.owner[b])) {
				m.owner[b], m.mate[i] = int32(i), int32(b)
				return true
			}
			return false
		})
	}
	for grew := true; grew; {
		grew = false
		stamp++
		for i := range m.states {
			if m.mate[i] < 0 && m.vict[i] != None && augment(i) {
				grew = true
			}
		}
	}
}

// order emits the buckets: each runs in the state of the swap it fills,
// else at home; within state i the buckets touching v_i, then the others,
// then the bucket matched to swap i (the first state's staggered by
// staggerFill).
func (m *matching) order() []Bucket {
	p, ns := m.p, len(m.states)
	assigned := make([][]int32, ns)
	for i := range ns {
		for _, b := range m.homed[i] {
			s := i
			if m.owner[b] >= 0 {
				s = int(m.owner[b])
			}
			assigned[s] = append(assigned[s], b)
		}
	}
	order := make([]Bucket, 0, p*p)
	var rest []Bucket
	for i := range ns {
		v := m.vict[i]
		rest = rest[:0]
		for _, b := range assigned[i] {
			if b == m.mate[i] {
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
			staggerFill(order, m.states[0], v)
		}
		if b := m.mate[i]; b >= 0 {
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

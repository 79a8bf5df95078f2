package orderings

import (
	"fmt"
	"math/bits"
	"sort"
)

// The exact minimum number of swaps over all bucket orders.
//
// Reduction. Replaying any bucket order under any eviction policy loads one
// partition at a time, so after the free initial fill the buffer passes
// through a sequence of full states S0, S1, …, ST in which S(t+1) is S(t)
// with one partition evicted and one loaded, and T is the swap count. A
// bucket (a,b) can only run while both a and b are resident, so every pair
// {a,b} (and every diagonal bucket, whose partition is in some pair when
// p ≥ 2) lies inside some S(t). Conversely, a sequence of full states with
// one swap per step whose union of pairs is all p(p-1)/2 pairs yields an
// order (Marius Algorithm 4: emit each state's not yet emitted buckets)
// that this very state sequence executes with T swaps, and Belady, optimal
// for a fixed order, needs at most T. So the minimum over orders of the
// Belady swap count equals the shortest such state sequence; swapping one
// partition per step loses nothing because a replay never does anything
// else, and a step that swapped several partitions at once would count as
// that many swaps. The first state is any c partitions (the fill is free,
// and relabelling makes it {0…c-1}).
//
// Search. IDA* over (resident set, covered pairs), one swap per edge:
//   - h = max(⌈uncovered pairs ÷ (c-1)⌉, number of non-resident partitions
//     with an uncovered pair): each swap covers pairs of the loaded
//     partition with the c-1 others only (Marius eq. 2's argument), and a
//     partition not resident with an uncovered pair must be loaded at least
//     once. Both are admissible.
//   - A resident partition whose pairs are all covered is dead: evicting a
//     dead partition dominates evicting a live one (any continuation from
//     the other state can be followed with the live partition standing in
//     for the dead one, and a later load of it skipped), so when one exists
//     only the lowest dead partition is evicted, and a dead partition is
//     never loaded.
//   - Partitions never resident so far are interchangeable: only the
//     lowest of them is loaded.
//   - A transposition table keeps, per (live residents, covered pairs),
//     the best lower bound on the swaps still needed that an exhausted
//     subtree has proved (bound − g + 1), across iterations.
//
// Certificate. The result carries an optimal state sequence (replayed by
// the caller through Build's Plan validation) and the node counts of every
// iteration; the iteration at bound optimum−1 finished without a solution,
// which, with the admissible h and the dominance rules above, proves that
// no sequence of optimum−1 swaps exists. Where the optimum equals the root
// bound, the bound itself is the proof.

// MaxOptimalP is the largest p the exact search accepts: resident sets are
// 16-bit masks and the covered pairs a 128-bit one (p = 16 has 120 pairs).
// Whether it finishes is another matter: p ≤ 11 takes seconds.
const MaxOptimalP = 16

// pset is a set of partition pairs, bit k of the 128.
type pset [2]uint64

func (a pset) or(b pset) pset     { return pset{a[0] | b[0], a[1] | b[1]} }
func (a pset) and(b pset) pset    { return pset{a[0] & b[0], a[1] & b[1]} }
func (a pset) andNot(b pset) pset { return pset{a[0] &^ b[0], a[1] &^ b[1]} }
func (a pset) empty() bool        { return a[0]|a[1] == 0 }
func (a pset) count() int         { return bits.OnesCount64(a[0]) + bits.OnesCount64(a[1]) }

func pairBit(k int) pset {
	var m pset
	m[k/64] = 1 << (k % 64)
	return m
}

// SearchIteration is one IDA* iteration: the swap bound tried and the nodes
// expanded under it.
type SearchIteration struct {
	Bound int   `json:"bound"`
	Nodes int64 `json:"nodes"`
	Found bool  `json:"found"`
}

// OptimalResult is the outcome of the exact search for (P, C).
type OptimalResult struct {
	P int `json:"p"`
	C int `json:"c"`
	// Swaps is the proven minimum number of swaps over all bucket orders.
	Swaps int `json:"swaps"`
	// RootBound is the search's admissible bound at the initial state (at
	// least Marius eq. 2).
	RootBound int `json:"root_bound"`
	// States is an optimal buffer-state sequence, len(States) = Swaps+1.
	States [][]int `json:"states"`
	// Iterations lists every IDA* iteration; all but the last ended without
	// a solution.
	Iterations []SearchIteration `json:"iterations"`
	// Nodes is the total of the iterations' nodes.
	Nodes int64 `json:"nodes"`
}

// ErrSearchLimit is returned when the search expands more nodes than
// allowed before proving the optimum.
var ErrSearchLimit = fmt.Errorf("exact search: node limit reached")

type optKey struct {
	live uint16
	cov  pset
}

type optSearch struct {
	p, c     int
	full     pset
	pairOf   [][]pset // pairOf[x][y]: the bit of pair {x,y}
	incident []pset   // all pairs of x
	cover    [][]pset // cover[x][S]: pairs of x with the partitions in S
	tt       map[optKey]int
	ttLimit  int
	nodes    int64
	maxNodes int64
	limitHit bool
	path     []uint16
	solution []uint16
}

// OptimalSwaps runs the exact search for (p, c), 2 ≤ c ≤ p ≤ MaxOptimalP,
// expanding at most maxNodes nodes (0: no limit).
func OptimalSwaps(p, c int, maxNodes int64) (OptimalResult, error) {
	if err := CheckPC(p, c); err != nil {
		return OptimalResult{}, err
	}
	if p > MaxOptimalP {
		return OptimalResult{}, fmt.Errorf("exact search: p = %d exceeds %d", p, MaxOptimalP)
	}
	s := newOptSearch(p, c, maxNodes)
	start := uint16(1)<<c - 1
	cov := s.within(start)
	alive, _ := s.status(cov)
	res := OptimalResult{P: p, C: c, RootBound: s.h(start, cov, alive)}
	for bound := res.RootBound; ; bound++ {
		before := s.nodes
		s.path = append(s.path[:0], start)
		found := s.dfs(start, cov, 0, bound)
		it := SearchIteration{Bound: bound, Nodes: s.nodes - before, Found: found}
		res.Iterations = append(res.Iterations, it)
		res.Nodes = s.nodes
		if s.limitHit {
			return res, fmt.Errorf("%w: %d nodes at bound %d for p=%d c=%d", ErrSearchLimit, s.nodes, bound, p, c)
		}
		if found {
			res.Swaps = bound
			for _, st := range s.solution {
				res.States = append(res.States, maskMembers(st))
			}
			return res, nil
		}
	}
}

func newOptSearch(p, c int, maxNodes int64) *optSearch {
	s := &optSearch{p: p, c: c, maxNodes: maxNodes, tt: map[optKey]int{}, ttLimit: 1 << 22}
	s.pairOf = make([][]pset, p)
	s.incident = make([]pset, p)
	k := 0
	for x := range p {
		s.pairOf[x] = make([]pset, p)
	}
	for x := 0; x < p; x++ {
		for y := x + 1; y < p; y++ {
			s.pairOf[x][y] = pairBit(k)
			s.pairOf[y][x] = pairBit(k)
			s.incident[x] = s.incident[x].or(pairBit(k))
			s.incident[y] = s.incident[y].or(pairBit(k))
			s.full = s.full.or(pairBit(k))
			k++
		}
	}
	s.cover = make([][]pset, p)
	for x := range p {
		s.cover[x] = make([]pset, 1<<p)
		for set := 1; set < 1<<p; set++ {
			y := bits.TrailingZeros(uint(set))
			s.cover[x][set] = s.cover[x][set&(set-1)].or(s.pairOf[x][y])
		}
	}
	return s
}

// within returns the pairs inside the set.
func (s *optSearch) within(set uint16) pset {
	var m pset
	for x := range s.p {
		if set&(1<<x) != 0 {
			m = m.or(s.cover[x][set])
		}
	}
	return m
}

// status returns the partitions with an uncovered pair (alive) and those
// with a covered one (touched).
func (s *optSearch) status(cov pset) (alive, touched uint16) {
	for x := range s.p {
		if !s.incident[x].andNot(cov).empty() {
			alive |= 1 << x
		}
		if !s.incident[x].and(cov).empty() {
			touched |= 1 << x
		}
	}
	return alive, touched
}

// h is the admissible bound on the swaps still needed.
func (s *optSearch) h(set uint16, cov pset, alive uint16) int {
	u := s.full.andNot(cov).count()
	if u == 0 {
		return 0
	}
	h1 := (u + s.c - 2) / (s.c - 1)
	h2 := bits.OnesCount16(alive &^ set)
	return max(h1, h2)
}

type optMove struct {
	next uint16
	cov  pset
	gain int
}

func (s *optSearch) dfs(set uint16, cov pset, g, bound int) bool {
	if cov == s.full {
		s.solution = append([]uint16(nil), s.path...)
		return true
	}
	alive, touched := s.status(cov)
	key := optKey{live: set & alive, cov: cov}
	h := s.h(set, cov, alive)
	if v, ok := s.tt[key]; ok && v > h {
		h = v
	}
	if g+h > bound {
		return false
	}
	if s.maxNodes > 0 && s.nodes >= s.maxNodes {
		s.limitHit = true
		return false
	}
	s.nodes++
	// Victims: the lowest dead resident if there is one, else every resident.
	victims := set
	if dead := set &^ alive; dead != 0 {
		victims = dead & -dead
	}
	// Loads: live non-residents; of the never-touched ones only the lowest.
	loads := alive &^ set
	if fresh := loads &^ touched; fresh != 0 {
		loads = loads&^fresh | fresh&-fresh
	}
	var moves [64]optMove
	n := 0
	for l := loads; l != 0; l &= l - 1 {
		x := bits.TrailingZeros16(l)
		for v := victims; v != 0; v &= v - 1 {
			y := bits.TrailingZeros16(v)
			rest := set &^ (1 << y)
			nc := cov.or(s.cover[x][rest])
			moves[n] = optMove{next: rest | 1<<x, cov: nc, gain: nc.andNot(cov).count()}
			n++
		}
	}
	ms := moves[:n]
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].gain > ms[j].gain })
	for _, m := range ms {
		s.path = append(s.path, m.next)
		if s.dfs(m.next, m.cov, g+1, bound) {
			return true
		}
		s.path = s.path[:len(s.path)-1]
		if s.limitHit {
			return false
		}
	}
	// Exhausted: nothing within bound from here.
	if len(s.tt) < s.ttLimit || s.tt[key] > 0 {
		if need := bound - g + 1; need > s.tt[key] {
			s.tt[key] = need
		}
	}
	return false
}

func maskMembers(m uint16) []int {
	var out []int
	for ; m != 0; m &= m - 1 {
		out = append(out, bits.TrailingZeros16(m))
	}
	return out
}

// Plan replays the result's states (Marius Algorithm 4's order) under
// Belady and returns the validated Plan; it fails unless the replay needs
// exactly Swaps swaps. It is the checkable half of the certificate.
func (r OptimalResult) Plan() (*Plan, error) {
	if len(r.States) != r.Swaps+1 {
		return nil, fmt.Errorf("optimal p=%d c=%d: %d states for %d swaps", r.P, r.C, len(r.States), r.Swaps)
	}
	order := statesToOrder(r.P, r.States, nil, nil)
	s, err := Replay(r.P, r.C, order, Belady)
	if err != nil {
		return nil, fmt.Errorf("optimal p=%d c=%d: %w", r.P, r.C, err)
	}
	pl := &Plan{Ordering: "optimal", Policy: string(Belady), P: r.P, C: r.C, Buckets: order, States: r.States,
		Loads: s.Loads, FinalResident: s.FinalResident, Counts: s.Counts}
	if err := pl.Validate(); err != nil {
		return nil, fmt.Errorf("optimal p=%d c=%d: %w", r.P, r.C, err)
	}
	if s.Counts.Swaps != r.Swaps {
		return nil, fmt.Errorf("optimal p=%d c=%d: the replay needs %d swaps, the search claims %d", r.P, r.C, s.Counts.Swaps, r.Swaps)
	}
	return pl, nil
}

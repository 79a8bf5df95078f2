// Package cyclic builds the state sequences of the cyclic construction
// from a stored Plan: orderings replays them as a tierflow candidate and
// the offline search (orderings/internal/search) finds the Plans.
package cyclic

import "slices"

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

// Plan is one cyclic construction for (p, c) over Z_N: the blocks of
// steps, of which the first len(Pins) are pinned blocks, block i with
// Pins[i] of the p − N extra partitions pinned in the buffer through it.
type Plan struct {
	N      int
	Pins   []int
	Blocks [][]int
}

// Sequence slides the window over the blocks: block b repeats its
// step pattern until it is back at its start (n·len(pattern) steps) and
// then takes the window's length of steps more, so that the windows that
// wrap around are covered too. A pinned block first loads its group of
// extra partitions, which then stay until the block ends. Each load
// evicts the partition loaded earliest that is not pinned, except that a
// load of extra partitions keeps the previous group's (so the groups
// meet) and the first load of a block that follows an unpinned one keeps
// the earliest (see below). Pairs still uncovered at the end are covered
// one load at a time.
func Sequence(p, c int, pl Plan) [][]int {
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
		if slices.Contains(buf, x) {
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
					if slices.Contains(buf, y) {
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
			if !slices.Contains(buf, x) {
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

package search

import (
	"math/rand/v2"
	"slices"
)

// cyclicPattern searches for a step pattern s_0 … s_{r−1} over Z_n (n
// odd) whose cyclic window sums of lengths 1 … k, taken as differences up
// to sign, are exactly the differences marked in need (r·k of them), and
// whose total is coprime to n. A randomised depth-first search with
// restarts, seeded by (n, k) so that the result is deterministic; nil
// after maxNodes nodes in all. It also returns the nodes used.
func cyclicPattern(n, k int, need []bool, maxNodes int) ([]int, int) {
	h := (n - 1) / 2
	cnt := 0
	for d := 1; d <= h; d++ {
		if need[d] {
			cnt++
		}
	}
	if cnt == 0 || cnt%k != 0 {
		return nil, 0
	}
	r := cnt / k
	rng := rand.New(rand.NewPCG(uint64(n), uint64(k)))
	used := make([]bool, h+1)
	s := make([]int, 0, r)
	var strides []int
	for st := 1; st < n-1; st++ {
		if gcdInt(st, n-1) == 1 {
			strides = append(strides, st)
		}
	}
	nodes := 0
	tmp := make([]int, 0, k*k)
	// sums appends the window sums that end at the last step of s.
	sums := func(dst []int) ([]int, bool) {
		i := len(s) - 1
		sum := 0
		for j := 0; j < k && i-j >= 0; j++ {
			sum += s[i-j]
			d := normDiff(sum, n)
			if d == 0 || !need[d] || used[d] || slices.Contains(dst, d) {
				return dst, false
			}
			dst = append(dst, d)
		}
		return dst, true
	}
	closure := func() bool {
		var ok bool
		tmp, ok = wrapSums(s, k, n, tmp[:0], func(d int, pending []int) bool {
			return d != 0 && need[d] && !used[d] && !slices.Contains(pending, d)
		})
		return ok
	}
	var dfs func(budget int) bool
	dfs = func(budget int) bool {
		nodes++
		if nodes > budget {
			return false
		}
		if len(s) == r {
			return closure()
		}
		// Candidates in a random rotation of 1 … n−1 with a random stride
		// coprime to n−1: cheap, and different at every node.
		start, stride := rng.IntN(n-1), strides[rng.IntN(len(strides))]
		for t := range n - 1 {
			v := 1 + (start+t*stride)%(n-1)
			if d := normDiff(v, n); !need[d] || used[d] {
				continue
			}
			s = append(s, v)
			var add []int
			var ok bool
			add, ok = sums(nil)
			if ok {
				for _, d := range add {
					used[d] = true
				}
				if dfs(budget) {
					return true
				}
				for _, d := range add {
					used[d] = false
				}
			}
			s = s[:len(s)-1]
			if nodes > budget {
				return false
			}
		}
		return false
	}
	for restart := 1; nodes < maxNodes; restart++ {
		budget := min(maxNodes, nodes+2000*restart)
		s = s[:0]
		clear(used)
		if dfs(budget) {
			return s, nodes
		}
	}
	return nil, nodes
}

// cyclicPatterns searches for step patterns over Z_n (n odd), at most
// maxBlocks of them, whose cyclic window sums of lengths 1 … k, taken as
// differences up to sign, are together exactly the differences marked in
// need, each pattern's total coprime to n (so that repeating it n times
// visits every partition once per step of the pattern); up to maxDups
// window sums may repeat a difference (cyclicCandidates allows none). A single-step
// pattern s is the set {s, 2s, …, ks}. A randomised depth-first search
// with restarts: each node extends the current pattern by a step or, when
// its wrap-around sums fit, closes it and starts the next; seeded by
// (n, k), so the result is deterministic. nil after maxNodes nodes in all;
// it also returns the nodes used.
func cyclicPatterns(n, k int, need []bool, maxNodes, maxBlocks, maxDups int) ([][]int, int) {
	h := (n - 1) / 2
	cnt := 0
	for d := 1; d <= h; d++ {
		if need[d] {
			cnt++
		}
	}
	if cnt == 0 || (cnt+maxDups)/k*k < cnt {
		return nil, 0
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(k)))
	var strides []int
	for st := 1; st < n-1; st++ {
		if gcdInt(st, n-1) == 1 {
			strides = append(strides, st)
		}
	}
	used := make([]int, h+1)
	covered, dups := 0, 0
	var done [][]int
	var s []int
	nodes := 0
	// ok reports whether d may be one more window sum, pending ones
	// included: a new difference, or a repeat while repeats are left.
	ok := func(d int, pending []int) bool {
		if d == 0 {
			return false
		}
		if need[d] && used[d] == 0 && !slices.Contains(pending, d) {
			return true
		}
		rep := 0
		for i, e := range pending {
			if !need[e] || used[e] > 0 || slices.Contains(pending[:i], e) {
				rep++
			}
		}
		return dups+rep < maxDups
	}
	// sums returns the window sums that end at the last step of s.
	sums := func() ([]int, bool) {
		var out []int
		i := len(s) - 1
		sum := 0
		for j := 0; j < k && i-j >= 0; j++ {
			sum += s[i-j]
			d := normDiff(sum, n)
			if !ok(d, out) {
				return nil, false
			}
			out = append(out, d)
		}
		return out, true
	}
	// closure returns the wrap-around window sums of s, if they fit.
	closure := func() ([]int, bool) {
		out, fit := wrapSums(s, k, n, nil, ok)
		if !fit {
			return nil, false
		}
		return out, true
	}
	mark := func(ds []int, v bool) {
		if v {
			for _, d := range ds {
				if need[d] && used[d] == 0 {
					covered++
				} else {
					dups++
				}
				used[d]++
			}
			return
		}
		for i := len(ds) - 1; i >= 0; i-- {
			d := ds[i]
			used[d]--
			if need[d] && used[d] == 0 {
				covered--
			} else {
				dups--
			}
		}
	}
	var dfs func(budget int) bool
	dfs = func(budget int) bool {
		nodes++
		if nodes > budget {
			return false
		}
		if len(s) > 0 {
			if ds, fit := closure(); fit {
				mark(ds, true)
				if covered == cnt {
					done = append(done, append([]int(nil), s...))
					return true
				}
				if len(done)+1 < maxBlocks {
					saved := s
					done = append(done, append([]int(nil), s...))
					s = nil
					if dfs(budget) {
						return true
					}
					s = saved
					done = done[:len(done)-1]
				}
				mark(ds, false)
			}
		}
		if covered+dups+min(len(s)+1, k) > cnt+maxDups {
			return false
		}
		start, stride := rng.IntN(n-1), strides[rng.IntN(len(strides))]
		for t := range n - 1 {
			v := 1 + (start+t*stride)%(n-1)
			if d := normDiff(v, n); d == 0 || (!ok(d, nil)) {
				continue
			}
			s = append(s, v)
			if ds, fit := sums(); fit {
				mark(ds, true)
				if dfs(budget) {
					return true
				}
				mark(ds, false)
			}
			s = s[:len(s)-1]
			if nodes > budget {
				return false
			}
		}
		return false
	}
	for restart := 1; nodes < maxNodes; restart++ {
		budget := min(maxNodes, nodes+2000*restart)
		s, done = nil, nil
		clear(used)
		covered, dups = 0, 0
		if dfs(budget) {
			return done, nodes
		}
	}
	return nil, nodes
}

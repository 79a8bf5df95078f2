package orderings

import (
	"fmt"
	"math"
	"strings"
)

// Policy is a buffer eviction policy applied when replaying a bucket order.
type Policy string

// The eviction policies. Every policy never evicts a partition the current
// bucket needs, and breaks ties towards the lowest partition id.
const (
	// Belady evicts the resident partition whose next use is furthest in the
	// future (optimal for a known order; Marius §4.2).
	Belady Policy = "belady"
	// LRU evicts the least recently used resident partition.
	LRU Policy = "lru"
	// FIFO evicts the partition that was loaded first.
	FIFO Policy = "fifo"
)

// Policies lists the policies in display order.
var Policies = []Policy{Belady, LRU, FIFO}

// ParsePolicy returns the policy with the given name.
func ParsePolicy(name string) (Policy, error) {
	for _, p := range Policies {
		if string(p) == name {
			return p, nil
		}
	}
	names := make([]string, len(Policies))
	for i, p := range Policies {
		names[i] = string(p)
	}
	return "", fmt.Errorf("unknown policy %q (want one of %s)", name, strings.Join(names, ", "))
}

// Schedule is the outcome of replaying an order: the loads, the partitions
// left resident, and the counts.
type Schedule struct {
	Loads         []Load
	FinalResident []int
	Counts        Counts
}

// Replay executes order on a buffer of c partitions under policy and
// returns the load schedule. order must hold buckets with partitions in
// [0,p); it need not be complete (validation is Plan.Validate's job), which
// lets callers replay prefixes and arbitrary sequences.
func Replay(p, c int, order []Bucket, policy Policy) (Schedule, error) {
	if err := CheckPC(p, c); err != nil {
		return Schedule{}, err
	}
	switch policy {
	case Belady, LRU, FIFO:
	default:
		return Schedule{}, fmt.Errorf("unknown policy %q", policy)
	}
	for k, b := range order {
		if b.Src < 0 || b.Src >= p || b.Dst < 0 || b.Dst >= p {
			return Schedule{}, fmt.Errorf("bucket %d %v is outside %d×%d", k, b, p, p)
		}
	}
	n := len(order)
	// Belady needs, for every bucket, the next bucket index at which its
	// source and destination are used again (n when never).
	var nextSrc, nextDst []int32
	if policy == Belady {
		if n >= math.MaxInt32 {
			return Schedule{}, fmt.Errorf("order of %d buckets is too long", n)
		}
		nextSrc = make([]int32, n)
		nextDst = make([]int32, n)
		last := make([]int32, p)
		for i := range last {
			last[i] = int32(n)
		}
		for k := n - 1; k >= 0; k-- {
			b := order[k]
			nextSrc[k] = last[b.Src]
			nextDst[k] = last[b.Dst]
			last[b.Src], last[b.Dst] = int32(k), int32(k)
		}
	}

	h := newEvictHeap(p, c)
	slots := make([]int, c)
	for i := range slots {
		slots[i] = None
	}
	where := make([]int, p)
	for i := range where {
		where[i] = None
	}
	lastUse := make([]int, p)
	var s Schedule
	s.Loads = make([]Load, 0, c+n/8)
	filled := 0
	loadSeq := 0

	load := func(x, k, exclude int) {
		l := Load{Partition: x, Evicts: None, NeededAt: k}
		if filled < c {
			for sl := range slots {
				if slots[sl] == None {
					l.Slot = sl
					break
				}
			}
			filled++
		} else {
			victim := h.popExcept(exclude)
			l.Slot = where[victim]
			l.Evicts = victim
			l.IssueAt = lastUse[victim] + 1
			l.Swap = true
			where[victim] = None
			s.Counts.Swaps++
			s.Counts.Writes++
			if l.Window() > 0 {
				s.Counts.PrefetchableSwaps++
			}
		}
		slots[l.Slot] = x
		where[x] = l.Slot
		s.Counts.Loads++
		// Under Belady and LRU the key is set after the bucket runs; the
		// second load of a bucket excludes the first, so the placeholder
		// is never compared against. FIFO keys are fixed at load time:
		// earlier loads are evicted first.
		key := int64(math.MinInt64)
		if policy == FIFO {
			loadSeq++
			key = -int64(loadSeq)
		}
		h.push(x, key)
		s.Loads = append(s.Loads, l)
	}

	for k, b := range order {
		if where[b.Src] == None {
			load(b.Src, k, b.Dst)
		}
		if where[b.Dst] == None {
			load(b.Dst, k, b.Src)
		}
		lastUse[b.Src], lastUse[b.Dst] = k, k
		switch policy {
		case Belady:
			h.update(b.Src, int64(nextSrc[k]))
			h.update(b.Dst, int64(nextDst[k]))
		case LRU:
			h.update(b.Src, -int64(k))
			h.update(b.Dst, -int64(k))
		}
	}
	s.FinalResident = slots
	for _, x := range slots {
		if x != None {
			s.Counts.FinalWrites++
		}
	}
	return s, nil
}

// evictHeap is an indexed max-heap of resident partitions by eviction
// priority: the top is evicted first. Higher key wins; equal keys go to the
// lower partition id.
type evictHeap struct {
	items []int   // partitions
	pos   []int   // index in items, or -1
	key   []int64 // by partition
}

func newEvictHeap(p, c int) *evictHeap {
	h := &evictHeap{items: make([]int, 0, c), pos: make([]int, p), key: make([]int64, p)}
	for i := range h.pos {
		h.pos[i] = -1
	}
	return h
}

func (h *evictHeap) before(a, b int) bool {
	ka, kb := h.key[a], h.key[b]
	if ka != kb {
		return ka > kb
	}
	return a < b
}

func (h *evictHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i]] = i
	h.pos[h.items[j]] = j
}

func (h *evictHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.before(h.items[i], h.items[parent]) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

func (h *evictHeap) down(i int) {
	n := len(h.items)
	for {
		best := i
		if l := 2*i + 1; l < n && h.before(h.items[l], h.items[best]) {
			best = l
		}
		if r := 2*i + 2; r < n && h.before(h.items[r], h.items[best]) {
			best = r
		}
		if best == i {
			return
		}
		h.swap(i, best)
		i = best
	}
}

func (h *evictHeap) push(x int, key int64) {
	h.key[x] = key
	h.pos[x] = len(h.items)
	h.items = append(h.items, x)
	h.up(len(h.items) - 1)
}

func (h *evictHeap) update(x int, key int64) {
	h.key[x] = key
	i := h.pos[x]
	h.up(i)
	h.down(h.pos[x])
}

func (h *evictHeap) remove(i int) int {
	x := h.items[i]
	last := len(h.items) - 1
	h.swap(i, last)
	h.items = h.items[:last]
	h.pos[x] = -1
	if i < last {
		y := h.items[i]
		h.up(i)
		h.down(h.pos[y])
	}
	return x
}

// popExcept removes and returns the top partition other than except. The
// heap holds at least two partitions whenever it is called (c ≥ 2 and the
// buffer is full).
func (h *evictHeap) popExcept(except int) int {
	if h.items[0] != except {
		return h.remove(0)
	}
	best := 1
	if len(h.items) > 2 && h.before(h.items[2], h.items[1]) {
		best = 2
	}
	return h.remove(best)
}

package orderings

// The Plan's derived views: the rules every interpreter of a Plan (the
// simulator, the CPU engine, the GPU engine) needs to execute its load
// schedule. They are written here, once, so that no interpreter re-derives
// them.

// Arrivals returns, for every bucket position k, how many loads (counted in
// Plan order) must have arrived before bucket k may run: the loads whose
// NeededAt ≤ k. Loads are installed in Plan order, so bucket k runs once
// the first Arrivals()[k] loads are in their slots.
func (pl *Plan) Arrivals() []int {
	need := make([]int, len(pl.Buckets))
	j := 0
	for k := range pl.Buckets {
		for j < len(pl.Loads) && pl.Loads[j].NeededAt <= k {
			j++
		}
		need[k] = j
	}
	return need
}

// SlotFree reports whether the slot the load goes into is free once the
// first completed buckets are done: the partition it evicts has had its
// last use (or the slot was empty).
func (l Load) SlotFree(completed int) bool { return completed >= l.IssueAt }

// MayIssue reports whether the load may be issued once the first completed
// buckets are done. With prefetch, a load may be issued as soon as a buffer
// can take it (the interpreter decides whether that is its slot or a
// staging buffer); without prefetch, only when every bucket before the one
// that needs it is done (on demand).
func (l Load) MayIssue(completed int, prefetch bool) bool {
	return prefetch || completed >= l.NeededAt
}

package orderings

import "github.com/tierflow/tierflow/orderings/internal/cyclic"

// The stored tables: state sequences the offline searches
// (orderings/internal/search) found where tierflow's other candidates miss
// PrefetchTarget, so that building a Plan does not search. gen.go says how
// they are regenerated.
//
//   - stripTable (strip_table.go): for the smallest pairs (every c = 3 miss
//     of the other candidates, p = 10 … 20, and c = 4 at p = 14 … 18), the
//     swaps of a sequence found by a depth-first search over states.
//   - cyclicTable (cyclic_table.go): cyclic constructions (a window of c
//     sliding over step patterns of Z_n, orderings/internal/cyclic) found
//     by the randomised pattern search.
//   - splitTable (split_table.go): the same constructions, found by the
//     split search where the pattern search ran out of nodes.

// cyclicPlan is a stored cyclic construction (cyclic.Plan; a type of this
// package so that the tables' unkeyed literals stay vet-clean).
type cyclicPlan cyclic.Plan

// stripStates returns the states of the searched sequence for (p, c) from
// stripTable, or nil where it has none. A table entry lists the swaps as
// (slot, partition loaded) from the first state {0 … c−1}.
func stripStates(p, c int) [][]int {
	moves, ok := stripTable[[2]int{p, c}]
	if !ok {
		return nil
	}
	buf := allPartitions(c)
	states := [][]int{append([]int(nil), buf...)}
	for i := 0; i+1 < len(moves); i += 2 {
		buf[moves[i]] = moves[i+1]
		states = append(states, append([]int(nil), buf...))
	}
	return states
}

// cyclicStates returns the states of the cyclic candidate for (p, c)
// from cyclicTable, or nil where the table has none.
func cyclicStates(p, c int) [][]int {
	pl, ok := cyclicTable[[2]int{p, c}]
	if !ok {
		return nil
	}
	return cyclic.Sequence(p, c, cyclic.Plan(pl))
}

// splitStates returns the states of the cyclic construction splitTable
// holds for (p, c), or nil where it has none.
func splitStates(p, c int) [][]int {
	pl, ok := splitTable[[2]int{p, c}]
	if !ok {
		return nil
	}
	return cyclic.Sequence(p, c, cyclic.Plan(pl))
}

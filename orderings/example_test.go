package orderings_test

import (
	"fmt"

	"github.com/tierflow/tierflow/orderings"
)

// Build a BETA Plan for 8 partitions with 3 in memory and read its counts
// against Marius's lower bound.
func ExampleBuild() {
	pl, err := orderings.Build("beta", 8, 3, orderings.Belady, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(pl.Buckets), "buckets")
	fmt.Println("swaps:", pl.Counts.Swaps, "lower bound:", orderings.LowerBound(8, 3))
	fmt.Println("loads before bucket 0:", pl.Arrivals()[0]) // (0,0) needs partition 0 only
	// Output:
	// 64 buckets
	// swaps: 14 lower bound: 13
	// loads before bucket 0: 1
}

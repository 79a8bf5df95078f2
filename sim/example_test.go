package sim_test

import (
	"fmt"

	"github.com/tierflow/tierflow/sim"
)

// Simulate one Marius epoch on the paper's machine, as `simulate` does.
func ExampleRequest_Predict() {
	out, err := sim.Request{System: "marius", Device: "p3.2xlarge", Dataset: "freebase86m", Dim: 100,
		P: 32, C: 8, Orderings: "beta"}.Predict()
	if err != nil {
		panic(err)
	}
	r := out.Results[0]
	fmt.Printf("%s: %d swaps (lower bound %d), epoch %.1f min\n", r.Ordering, r.Swaps, out.LowerBoundSwaps, r.EpochSeconds/60)
	// Output:
	// beta: 78 swaps (lower bound 67), epoch 12.9 min
}

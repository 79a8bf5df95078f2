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

// A batch that does not fit the GPU memory left to it is split into the
// fewest micro-batches that do, and the rows they gather twice are moved
// and timed.
func ExampleRequest_Predict_microBatches() {
	out, err := sim.Request{System: "marius", Device: "p3.2xlarge", Dataset: "freebase86m", Dim: 800,
		P: 32, C: 8, Orderings: "beta", GPUMemory: "2GB"}.Predict()
	if err != nil {
		panic(err)
	}
	r := out.Results[0]
	fmt.Printf("%d micro-batches of at most %.2f GB; %.1f GB more moved per epoch\n", r.MicroBatches, sim.GB(r.BatchPeakBytes), sim.GB(r.ExtraTransferBytes))
	// Output:
	// 2 micro-batches of at most 1.77 GB; 40.1 GB more moved per epoch
}

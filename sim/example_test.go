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

// A user's own graph replaces the dataset preset: its node count sizes
// the partitions and its buckets (here: every edge in bucket (0, 0))
// are the edges trained.
func ExampleGraph() {
	g := &sim.Graph{Name: "my-graph", Nodes: 1_000_000, Relations: 1, TrainEdges: 5_000_000, Dim: 64,
		Count: func(ps []int) ([]sim.Histogram, error) {
			out := make([]sim.Histogram, len(ps))
			for k, p := range ps {
				h := sim.Histogram{P: p, Edges: make([][]int64, p)}
				for i := range h.Edges {
					h.Edges[i] = make([]int64, p)
				}
				h.Edges[0][0] = 5_000_000
				out[k] = h
			}
			return out, nil
		}}
	out, err := sim.Request{System: "marius", Device: "p3.2xlarge", P: 16, C: 4, Orderings: "beta", Graph: g}.Predict()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d nodes, %d train edges, partition %d bytes, %d batches\n",
		out.Dataset, out.Nodes, out.TrainEdges, out.PartitionBytes, out.Results[0].Batches)
	// Output:
	// my-graph: 1000000 nodes, 5000000 train edges, partition 32000000 bytes, 100 batches
}

// On a device whose rates carry their measured spread, an epoch is
// predicted as its median and the range the spread allows.
func ExampleRunRange() {
	sc, _, err := sim.Request{System: "marius", Device: "p3.2xlarge", Dataset: "freebase86m", Dim: 100,
		P: 32, C: 8, Orderings: "beta"}.Assemble()
	if err != nil {
		panic(err)
	}
	sc.Ordering = "beta"
	// The disk measured between 340 and 440 MB/s each way, 440 to 560
	// MB/s both at once.
	for key, r := range map[string][2]float64{"disk.read": {340e6, 440e6}, "disk.write": {340e6, 440e6}, "disk.combined": {440e6, 560e6}} {
		if err := sc.Profile.SetSpread(key, r[0], r[1]); err != nil {
			panic(err)
		}
	}
	cfg, err := sc.Config()
	if err != nil {
		panic(err)
	}
	rep, r, err := sim.RunRange(cfg)
	if err != nil {
		panic(err)
	}
	fmt.Printf("epoch %s min\n", r.Text(rep.EpochSeconds, 60, 1))
	// Output:
	// epoch 12.9 (11.6–14.7) min
}

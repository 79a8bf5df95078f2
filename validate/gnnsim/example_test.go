package gnnsim_test

import (
	"fmt"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/split"
	"github.com/tierflow/tierflow/validate/gnnsim"
)

// Cora's 140 training nodes in one batch on Betty's machine, whole and
// split into 2 and 4 micro-batches by range: each split gathers rows
// twice that the whole batch gathers once, and needs less memory.
func ExamplePredict() {
	g, err := data.Generate("cora", 1, 1)
	if err != nil {
		panic(err)
	}
	betty, err := devices.Preset("betty-rtx6000")
	if err != nil {
		panic(err)
	}
	w := gnnsim.Workload{Graph: g, Model: "sage-mean", Layers: 2, Hidden: 64, Fanouts: []int{10, 25}, Batch: len(g.Train), Seed: 1}
	pred, err := gnnsim.Predict(w, betty, gnnsim.Settings{K: []int{1, 2, 4}, Method: split.Range})
	if err != nil {
		panic(err)
	}
	whole := pred.Rows[0]
	for _, r := range pred.Rows {
		fmt.Printf("K=%d: %d micro-batches, %d input rows (%d redundant), peak below the whole batch's: %v\n",
			r.K, r.MicroBatches, r.MicroInputRows, r.RedundantRows, r.K == 1 || r.PeakBytes < whole.PeakBytes)
	}
	// Output:
	// K=1: 1 micro-batches, 1249 input rows (0 redundant), peak below the whole batch's: true
	// K=2: 2 micro-batches, 1653 input rows (404 redundant), peak below the whole batch's: true
	// K=4: 4 micro-batches, 2090 input rows (841 redundant), peak below the whole batch's: true
}

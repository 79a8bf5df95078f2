package gnn_test

import (
	"fmt"

	"github.com/tierflow/tierflow/realrun/gnn"
	"github.com/tierflow/tierflow/realrun/gnn/data"
)

// ExampleTrain trains a two-layer GraphSAGE (mean aggregator) on a
// generated graph with Cora's shape, held in memory (no work
// directory), and compares its test accuracy with the share of the
// largest class.
func ExampleTrain() {
	g, err := data.Generate("cora", 1, 1)
	if err != nil {
		panic(err)
	}
	o := gnn.Defaults
	o.Graph = g
	o.Model, o.Hidden, o.Epochs, o.Workers = "sage-mean", 32, 6, 2
	res, err := gnn.Train(o)
	if err != nil {
		panic(err)
	}
	largest := make([]int, len(g.Classes))
	for _, v := range g.Test {
		largest[g.Y[v]]++
	}
	most := 0
	for _, n := range largest {
		most = max(most, n)
	}
	fmt.Printf("%s: %d epochs, %d parameters\n", res.Settings.Model, len(res.Epochs), res.Params)
	fmt.Println("test accuracy above the largest class's share:", *res.Summary.FinalTestAcc > float64(most)/float64(len(g.Test)))
	// Output:
	// sage-mean: 6 epochs, 92199 parameters
	// test accuracy above the largest class's share: true
}

package split_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/split"
)

// Example splits a two-layer batch of 64 training nodes of a generated
// Cora-shaped graph into 4 micro-batches of contiguous output positions
// (split.REG, the default, would run METIS) and builds each one's
// blocks: together they compute the batch's 64 outputs, gathering some
// input rows more than once.
func Example() {
	g, err := data.Generate("cora", 1, 1)
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b := block.NewSampler(g, []int{5, 10}).Sample(g.Train[:64], rng)
	parts, err := split.Split(b, 4, split.Range, 1)
	if err != nil {
		panic(err)
	}
	bd := split.NewBuilder()
	var mb *block.Batch
	sum := 0
	for i, p := range parts {
		mb = bd.Micro(b, p, mb) // reuses mb's slices
		fmt.Printf("micro-batch %d: outputs %d–%d, %d blocks, fewer inputs than the batch: %v\n",
			i, p[0], p[len(p)-1], len(mb.Blocks), len(mb.Input()) < len(b.Input()))
		sum += len(mb.Input())
	}
	s := split.Measure(b, parts)
	fmt.Println("redundant rows are the micro-batches' inputs less the batch's:", s.Redundant == sum-len(b.Input()))
	// Output:
	// micro-batch 0: outputs 0–15, 2 blocks, fewer inputs than the batch: true
	// micro-batch 1: outputs 16–31, 2 blocks, fewer inputs than the batch: true
	// micro-batch 2: outputs 32–47, 2 blocks, fewer inputs than the batch: true
	// micro-batch 3: outputs 48–63, 2 blocks, fewer inputs than the batch: true
	// redundant rows are the micro-batches' inputs less the batch's: true
}

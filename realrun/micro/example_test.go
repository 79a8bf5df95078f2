package micro_test

import (
	"fmt"

	"github.com/tierflow/tierflow/realrun/micro"
	"github.com/tierflow/tierflow/workload"
)

// Split a batch of two chunks (edges 0–1 and 2–3, each chunk sharing two
// negatives) in two: range and REG keep each chunk and its negatives
// together; random scatters them.
func ExampleSplit() {
	b := micro.Batch{
		Src: []int64{1, 1, 5, 5}, Dst: []int64{2, 3, 6, 7}, Rel: []int32{0, 0, 0, 0},
		Chunk: []int32{0, 0, 1, 1}, Neg: [][]int64{{10, 11}, {12, 13}},
	}
	ix := micro.NewIndex(b, false)
	for _, m := range micro.Methods {
		parts, err := micro.Split(b, ix, 2, m, 4)
		if err != nil {
			panic(err)
		}
		st := ix.Measure(b, parts, workload.Dot, 8, 1)
		fmt.Printf("%s: %v, %d duplicated rows\n", m, parts, st.DuplicatedRows)
	}
	// Output:
	// reg: [[0 1] [2 3]], 0 duplicated rows
	// range: [[0 1] [2 3]], 0 duplicated rows
	// random: [[1 2] [0 3]], 6 duplicated rows
}

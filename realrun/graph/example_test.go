package graph_test

import (
	"fmt"
	"strings"

	"github.com/tierflow/tierflow/realrun/graph"
)

// A CSV with a header line and quoted ids, read with the default Format;
// the test edges are read with the training ids, an unseen one left out.
func ExampleParse() {
	train := "subject,predicate,object\n\"Washington, D.C.\",capital of,USA\nParis,capital of,France\n"
	test := "subject,predicate,object\nParis,capital of,USA\nBerlin,capital of,Germany\n"
	nodes, rels := graph.NewIDs(), graph.NewIDs()
	emit := func(src, rel, dst int64) error {
		fmt.Printf("%s -[%s]-> %s\n", nodes.Name(src), rels.Name(rel), nodes.Name(dst))
		return nil
	}
	info, err := graph.Parse(strings.NewReader(train), "train.csv", graph.Format{}, nodes, rels, emit)
	fmt.Println(info.Delimiter, info.Header, err)
	nodes.Freeze()
	rels.Freeze()
	info, err = graph.Parse(strings.NewReader(test), "test.csv", graph.Format{}, nodes, rels, emit)
	fmt.Println(info.Edges, "kept,", info.UnseenNode, "left out:", err)
	// Output:
	// Washington, D.C. -[capital of]-> USA
	// Paris -[capital of]-> France
	// comma [subject predicate object] <nil>
	// Paris -[capital of]-> USA
	// 1 kept, 1 left out: <nil>
}

package query_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/query"
)

// A trained work directory answers by the nodes' and relations' input
// names: the nearest nodes of a node, and link-prediction queries.
func ExampleNeighbors() {
	dir, _ := os.MkdirTemp("", "query-example-*")
	defer os.RemoveAll(dir)
	var edges strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&edges, "city%02d\tin\tcountry%d\ncountry%d\tborders\tcountry%d\n", i, i%6, i%6, (i+1)%6)
	}
	o := job.Defaults
	o.Edges, o.Workdir = filepath.Join(dir, "kg.tsv"), filepath.Join(dir, "work")
	os.WriteFile(o.Edges, []byte(edges.String()), 0o644)
	o.Model, o.Dim, o.Epochs, o.P, o.C, o.Workers, o.Eval = "complex", 8, 1, 2, 2, 1, "none"
	if _, err := job.Train(o, nil, false, io.Discard); err != nil {
		fmt.Println(err)
		return
	}

	res, err := query.Neighbors(query.Options{Workdir: o.Workdir, K: 3}, []string{"city07"}, query.Cos, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	a := res.Answers[0]
	fmt.Println(a.Query, len(a.Hits), "nearest by", res.Metric, "of", res.Nodes, "nodes; itself among them:", a.Hits[0].Node == "city07")

	qs, _ := query.ParseQueries(strings.NewReader("city07\tin\t?\ncity07\tin\tcountry1\n"), "queries.tsv")
	res, err = query.Predict(query.Options{Workdir: o.Workdir, K: 2}, qs)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Answers[0].Query, "→", len(res.Answers[0].Hits), "tails ranked by the", res.Model, "score")
	fmt.Println(res.Answers[1].Query, "→ a raw rank among", res.Answers[1].Candidates, "tails")
	_, err = query.Neighbors(query.Options{Workdir: o.Workdir}, []string{"atlantis"}, query.Cos, "")
	fmt.Println(strings.Replace(err.Error(), o.Workdir, "WORKDIR", 1))
	// Output:
	// city07 3 nearest by cos of 66 nodes; itself among them: false
	// city07 in ? → 2 tails ranked by the complex score
	// city07 in country1 → a raw rank among 66 tails
	// unknown node "atlantis": not in WORKDIR/ids.tsv
}

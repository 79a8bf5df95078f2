// Command examplegraph writes the worked example of docs/tutorial.md: a knowledge graph of a
// few million edges as a user brings one — tab-separated files with a header
// line, node and relation names that contain spaces, and validation and test
// files that name nodes the training file never mentions.
//
//	examplegraph [--scale F] [--nodes N] [--relations R] [--seed S] [--unseen K] DIR
//
// writes DIR/train.tsv, DIR/valid.tsv and DIR/test.tsv. The edges are
// the generator's (graph.Generate: a degree-corrected block model with
// planted communities, so that a model has something to learn) with
// Freebase86m's edge count at --scale (0.01: 3.4M edges) on --nodes nodes
// and --relations relations (100,000 and 20 by default: about 30 edges a
// node and 150,000 a relation, so that a few epochs learn the planted
// structure; few enough nodes for filtered ranking against every
// node), split 90/5/5 by a seeded draw; K test edges then join a known
// node to one that appears nowhere else. Everything follows from the
// seed.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tierflow/tierflow/realrun/graph"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "examplegraph:", err)
		os.Exit(2)
	}
}

// Words make the names: a node is "<first> <last> <number>", a relation
// "<verb> <noun>" with its number, so that every name holds spaces and no
// two are equal.
var (
	firsts = []string{"Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Frances", "John", "Leslie", "Radia", "Ken", "Margaret"}
	lasts  = []string{"Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Knuth", "Allen", "McCarthy", "Lamport", "Perlman", "Thompson", "Hamilton"}
	verbs  = []string{"works with", "cites", "lives in", "part of", "studied at", "wrote", "advised", "member of"}
)

func nodeName(i int64) string {
	return fmt.Sprintf("%s %s %d", firsts[i%int64(len(firsts))], lasts[(i/int64(len(firsts)))%int64(len(lasts))], i)
}

func relName(r int64) string { return fmt.Sprintf("%s %d", verbs[r%int64(len(verbs))], r) }

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("examplegraph", flag.ContinueOnError)
	scale := fs.Float64("scale", 0.01, "share of Freebase86m's edges (0.01: 3.4M)")
	seed := fs.Int64("seed", 1, "seed of the edges and of the split")
	unseen := fs.Int("unseen", 100, "test edges whose tail appears in no other file")
	nodes := fs.Int64("nodes", 100_000, "nodes (0: the scaled preset's)")
	relations := fs.Int("relations", 20, "relations (0: the scaled preset's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: examplegraph [--scale F] [--nodes N] [--relations R] [--seed S] [--unseen K] DIR")
	}
	dir := fs.Arg(0)
	pr, err := graph.LookupPreset("freebase86m")
	if err != nil {
		return err
	}
	if pr, err = pr.Scaled(*scale); err != nil {
		return err
	}
	if *nodes > 0 {
		pr.Nodes = *nodes
	}
	if *relations > 0 {
		pr.Relations = *relations
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names := []string{"train.tsv", "valid.tsv", "test.tsv"}
	var files [3]*os.File
	var ws [3]*bufio.Writer
	for i, n := range names {
		if files[i], err = os.Create(filepath.Join(dir, n)); err != nil {
			return err
		}
		defer files[i].Close()
		ws[i] = bufio.NewWriterSize(files[i], 1<<20)
		fmt.Fprintln(ws[i], "head\trelation\ttail")
	}
	var counts [3]int64
	split := graph.NewSplitter(*seed, 0.05, 0.05)
	var last int64
	err = graph.Generate(pr, *seed, func(src, rel, dst int64) error {
		sp := split.Next()
		counts[sp]++
		last = src
		_, err := fmt.Fprintf(ws[sp], "%s\t%s\t%s\n", nodeName(src), relName(rel), nodeName(dst))
		return err
	})
	if err != nil {
		return err
	}
	for k := 0; k < *unseen; k++ {
		fmt.Fprintf(ws[graph.Test], "%s\t%s\tnobody %d\n", nodeName(last), relName(int64(k%pr.Relations)), k)
		counts[graph.Test]++
	}
	for i := range ws {
		if err := ws[i].Flush(); err != nil {
			return err
		}
		if err := files[i].Close(); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "examplegraph: %s's edges at scale %g: %d nodes, %d relations; %d / %d / %d train / valid / test edges (%d test edges name an unseen node) in %s\n",
		pr.Name, *scale, pr.Nodes, pr.Relations, counts[0], counts[1], counts[2], *unseen, dir)
	return nil
}

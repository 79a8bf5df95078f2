// Command gnngraph writes a node-classification graph in the layout
// realrun gnn and the PyTorch comparison read (data.WriteFiles: edges.tsv,
// nodes.txt, features.npy, labels.tsv, train.txt, valid.txt, test.txt):
//
//	gnngraph wordnet [--wordnet SRC] [--seed N] DIR
//	gnngraph generate NAME [--scale F] [--seed N] DIR
//
// wordnet makes data.WordNet's graph from Debian's WordNet database (SRC,
// /usr/share/wordnet by default, or $TIERFLOW_WORDNET); generate makes a
// graph with the shape of one of Betty's Table 4 datasets (cora, pubmed,
// reddit, ogbn-arxiv, ogbn-products) at --scale (0: the preset's default
// scale). It prints one summary line: nodes, edges, features, classes,
// split sizes, and the nearest-centroid test accuracy on raw and on
// neighbour-averaged features (data.CentroidAccuracy: the graph's signal).
// Bad input exits with status 2 and one line on stderr.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/realrun/gnn/data"
)

const usage = "usage: gnngraph wordnet [--wordnet SRC] [--seed N] DIR | gnngraph generate NAME [--scale F] [--seed N] DIR"

func main() {
	os.Exit(cli.Exit(os.Stderr, "gnngraph", run(os.Args[1:], os.Stdout)))
}

// parse parses flags wherever they are among the positional arguments
// and returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			msg := err.Error()
			if rest, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
				return nil, cli.Usagef("unknown flag --%s; %s", strings.TrimLeft(rest, "-"), usage)
			}
			return nil, cli.Usagef("%s", strings.Replace(msg, "flag -", "flag --", 1))
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func run(args []string, stdout io.Writer) error {
	err := generate(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, usage)
	}
	return err
}

func generate(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return cli.Usagef("%s", usage)
	}
	fs := flag.NewFlagSet("gnngraph "+args[0], flag.ContinueOnError)
	seed := fs.Uint64("seed", 1, "seed of the graph and its splits")
	var (
		g   *data.Graph
		dir string
		src = "/usr/share/wordnet"
	)
	if d := os.Getenv("TIERFLOW_WORDNET"); d != "" {
		src = d
	}
	start := time.Now()
	switch args[0] {
	case "wordnet":
		fs.StringVar(&src, "wordnet", src, "WordNet database directory")
		pos, err := parse(fs, args[1:])
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return cli.Usagef("%s", usage)
		}
		dir = pos[0]
		if g, err = data.WordNet(src, *seed); err != nil {
			return &cli.UsageError{Msg: err.Error(), Err: err}
		}
	case "generate":
		scale := fs.Float64("scale", 0, "share of the dataset's nodes and edges, in (0, 1]; 0: the preset's default")
		pos, err := parse(fs, args[1:])
		if err != nil {
			return err
		}
		if len(pos) != 2 {
			return cli.Usagef("%s", usage)
		}
		if math.IsNaN(*scale) || *scale < 0 || *scale > 1 {
			return cli.Usagef("--scale %v: want 0 < F ≤ 1 (0: the preset's default)", *scale)
		}
		dir = pos[1]
		if g, err = data.Generate(pos[0], *scale, *seed); err != nil {
			return &cli.UsageError{Msg: err.Error(), Err: err}
		}
	default:
		return cli.Usagef("unknown subcommand %q; %s", args[0], usage)
	}
	if err := data.WriteFiles(g, dir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "gnngraph: %s: %d nodes, %d undirected edges (%d neighbour entries), %d features, %d classes, train/valid/test %d/%d/%d; nearest-centroid test accuracy %.3f raw, %.3f neighbour-averaged; %.1fs\n",
		dir, g.N(), g.Edges()/2, g.Edges(), g.F, len(g.Classes), len(g.Train), len(g.Valid), len(g.Test),
		data.CentroidAccuracy(g, false), data.CentroidAccuracy(g, true), time.Since(start).Seconds())
	return nil
}

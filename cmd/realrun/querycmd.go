package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/query"
)

// `realrun neighbors WORKDIR NODE…` and `realrun predict WORKDIR --queries
// FILE`: answers from a trained work directory (realrun/query).

// queryMemoryHelp is --memory's help, for neighbors and predict.
const queryMemoryHelp = "memory budget, e.g. 2GB (default: a quarter of this machine's memory, at least 2 GiB, as --eval-memory); it must hold one partition plus the query rows and top-k lists (with --index hnsw: every embedding), and partitions are streamed through it"

// queryFlags are the flags neighbors and predict share.
type queryFlags struct {
	o      query.Options
	memory string
	index  string
}

func (q *queryFlags) register(fs *flag.FlagSet) {
	checkpointFlag(fs, &q.o.Checkpoint)
	fs.IntVar(&q.o.K, "k", query.DefaultK, "answers per query")
	fs.StringVar(&q.memory, "memory", "", queryMemoryHelp)
	fs.StringVar(&q.index, "index", string(query.Exact), "exact (every node scored, partitions streamed once, out of core) or hnsw (an approximate nearest-neighbour index, built in memory from every embedding, seeded; its candidates rescored exactly)")
	fs.IntVar(&q.o.EfSearch, "ef", query.DefaultEfSearch, "with --index hnsw: the search's candidate list (more: higher recall, slower)")
	fs.Int64Var(&q.o.Seed, "seed", 1, "with --index hnsw: seed of the index's random levels")
	fs.IntVar(&q.o.Workers, "workers", runtime.NumCPU(), "scoring goroutines")
	cli.MachineDefault(fs, "workers", cpusDefault)
}

// options checks the shared flags and returns the library's fields.
func (q *queryFlags) options(dir string) (query.Options, error) {
	o := q.o
	o.Workdir, o.MemoryName = dir, "--memory"
	switch {
	case o.K < 1:
		return o, cli.Usagef("--k %d: must be at least 1", o.K)
	case o.Workers < 1:
		return o, cli.Usagef("--workers %d: must be at least 1", o.Workers)
	case o.EfSearch < 1:
		return o, cli.Usagef("--ef %d: must be at least 1", o.EfSearch)
	}
	idx, err := query.ParseIndex(q.index)
	if err != nil {
		return o, cli.Usagef("--index: %w", err)
	}
	o.Index = idx
	if q.memory != "" {
		b, err := devices.ParseBytes(q.memory)
		if err != nil {
			return o, cli.Usagef("--memory: %w", err)
		}
		if b <= 0 {
			return o, cli.Usagef("--memory %s: must be positive", q.memory)
		}
		o.Memory = int64(b)
	}
	return o, nil
}

// splitArgs separates the positional arguments (nodes) from the flags
// and their values, so that flags may follow the nodes; after "--" every
// argument is positional.
func splitArgs(fs *flag.FlagSet, args []string) (pos, flags []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(pos, args[i+1:]...), flags
		case len(a) > 1 && a[0] == '-':
			flags = append(flags, a)
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			f := fs.Lookup(name)
			if f == nil || hasValue || i+1 == len(args) {
				continue
			}
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
				i++
				flags = append(flags, args[i])
			}
		default:
			pos = append(pos, a)
		}
	}
	return pos, flags
}

// queryColumns are the table and CSV columns of neighbors and predict;
// the score's head names the metric.
func queryColumns(metric query.Metric) plots.Columns {
	head := map[query.Metric]string{query.Cos: "cos", query.Dot: "dot", query.L2: "l2 distance", query.Score: "score"}[metric]
	return plots.Columns{
		{Field: "Query", Head: "query"},
		{Field: "Rank", Head: "rank"},
		{Field: "Node", Head: "node"},
		{Field: "Score", Head: head, Prec: 4, CSVPrec: 6},
	}
}

// printAnswers prints a query result in the chosen format; note is the
// human table's last line, if any.
func printAnswers(stdout io.Writer, format cli.Format, res *query.Result, note string) error {
	switch format {
	case cli.JSON:
		return cli.PrintJSON(stdout, res)
	case cli.CSV:
		return queryColumns(res.Metric).CSV(res.Rows()).CSV(stdout)
	}
	if err := queryColumns(res.Metric).Human(res.Rows()).Render(stdout); err != nil {
		return err
	}
	search := "exact search"
	if res.Index == query.HNSW {
		search = fmt.Sprintf("hnsw index (approximate; built in %.1f s)", res.IndexSeconds)
	}
	fmt.Fprintf(stdout, "%s: %s d=%d, %d nodes, %s; %s, %.1f s\n", res.Workdir, res.Model, res.Dim, res.Nodes, res.Checkpoint, search, res.Seconds)
	fmt.Fprintf(stdout, "memory: at most %.1f MB of the %.1f MB budget (--memory); the embeddings alone are %.1f MB\n",
		float64(res.MemoryBytes)/1e6, float64(res.MemoryBudget)/1e6, float64(res.Nodes)*float64(res.Dim)*4/1e6)
	if note != "" {
		fmt.Fprintln(stdout, note)
	}
	return nil
}

func neighborsMain(args []string, stdout, stderr io.Writer) error {
	var q queryFlags
	var metric, relation string
	fs := newFlagSet(prog + " neighbors")
	q.register(fs)
	fs.StringVar(&metric, "metric", string(query.Cos), "cos (cosine similarity), dot (dot product) or l2 (Euclidean distance)")
	fs.StringVar(&relation, "relation", "", "rank the best tails of (NODE, `R`, ?) under the work directory's score function instead (R by its name in relations.tsv)")
	cli.SetHelp(fs, cli.Help{
		Usage:   "realrun neighbors WORKDIR NODE… [flags]",
		Summary: "Prints, for each node named (by its input name, as in the work directory's ids.tsv), its k nearest nodes by --metric, itself excluded, or with --relation its k best tails under the trained score function; the current checkpoint (or its best: --checkpoint best) is read out of core within --memory.",
		Groups: []cli.FlagGroup{
			{Title: "Search", Flags: []string{"checkpoint", "k", "metric", "relation", "index", "ef", "seed", "memory", "workers"}},
			{Title: "Output", Flags: []string{"json", "csv"}},
		},
		Examples: []string{
			"realrun neighbors /tmp/wn dog.n.02084071 car.n.02958343     # 10 nearest by cosine",
			"realrun neighbors /tmp/wn dog.n.02084071 --relation _hypernym --k 5",
			"realrun neighbors /tmp/wn dog.n.02084071 --metric l2 --memory 3MB --csv",
		},
	})
	format, nodes, err := parseQueryArgs(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(nodes) == 0 {
		return cli.Usagef("realrun neighbors: give the work directory first: realrun neighbors WORKDIR NODE… [flags]")
	}
	dir, nodes := nodes[0], nodes[1:]
	if len(nodes) == 0 {
		return cli.Usagef("realrun neighbors: name at least one node after the work directory: realrun neighbors WORKDIR NODE… [flags]")
	}
	m, err := query.ParseMetric(metric)
	if err != nil {
		return cli.Usagef("--metric: %w", err)
	}
	if relation != "" && flagSet(fs, "metric") {
		return cli.Usagef("--metric %s and --relation: a relation ranks by the model's score, not by a metric", metric)
	}
	o, err := q.options(dir)
	if err != nil {
		return err
	}
	stop, why, done := stopEvalOnSignal("neighbors", stderr)
	defer done()
	o.Stop = stop
	res, err := query.Neighbors(o, nodes, m, relation)
	if errors.Is(err, eval.ErrStopped) {
		return searchStopped("neighbors", why)
	} else if err != nil {
		return noBest(err)
	}
	return printAnswers(stdout, format, res, "")
}

func predictMain(args []string, stdout, stderr io.Writer) error {
	var q queryFlags
	var file string
	fs := newFlagSet(prog + " predict")
	q.register(fs)
	fs.StringVar(&file, "queries", "", "query `FILE` (- for standard input): one query a line, head<TAB>relation<TAB>? (best tails), ?<TAB>relation<TAB>tail (best heads) or head<TAB>relation<TAB>tail (its score and raw rank); head tail columns for a graph without relations (dot); tabs or spaces, # comments")
	cli.SetHelp(fs, cli.Help{
		Usage:   "realrun predict WORKDIR --queries FILE [flags]",
		Summary: "Answers link-prediction queries from a trained work directory's current checkpoint (or its best: --checkpoint best) under its score function (the model from the manifest, relation parameters from the checkpoint), out of core within --memory: the k best tails or heads, or a triple's score and its raw rank among all nodes as tails (unfiltered: other known tails count).",
		Groups: []cli.FlagGroup{
			{Title: "Queries", Flags: []string{"queries", "checkpoint", "k", "index", "ef", "seed", "memory", "workers"}},
			{Title: "Output", Flags: []string{"json", "csv"}},
		},
		Examples: []string{
			"printf 'dog.n.02084071\\t_hypernym\\t?\\n?\\t_hypernym\\tcanine.n.02083346\\n' > q.tsv",
			"realrun predict /tmp/wn --queries q.tsv --k 5",
			"realrun predict /tmp/wn --queries q.tsv --json",
		},
	})
	format, pos, err := parseQueryArgs(fs, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return cli.Usagef("realrun predict: give the work directory first: realrun predict WORKDIR --queries FILE [flags]")
	case len(pos) > 1:
		return cli.Usagef("realrun predict: unexpected argument %q (queries come from --queries FILE)", pos[1])
	case file == "":
		return cli.Usagef("realrun predict: --queries FILE is required")
	}
	o, err := q.options(pos[0])
	if err != nil {
		return err
	}
	qs, err := readQueries(file)
	if err != nil {
		return asUsage(err)
	}
	stop, why, done := stopEvalOnSignal("predict", stderr)
	defer done()
	o.Stop = stop
	res, err := query.Predict(o, qs)
	if errors.Is(err, eval.ErrStopped) {
		return searchStopped("predict", why)
	} else if err != nil {
		return noBest(err)
	}
	note := ""
	for _, a := range res.Answers {
		if a.Score != nil {
			note = fmt.Sprintf("rank of a triple: the raw (unfiltered) rank of its tail among all %d nodes as tails of (head, relation, ?); ties count half", res.Nodes)
		}
	}
	return printAnswers(stdout, format, res, note)
}

// parseQueryArgs parses the flags wherever they stand and returns the
// output format and the positional arguments.
func parseQueryArgs(fs *flag.FlagSet, args []string, stdout io.Writer) (cli.Format, []string, error) {
	asJSON := fs.Bool("json", false, "print JSON (every answer with its query, nodes and scores)")
	asCSV := fs.Bool("csv", false, "print CSV (one row per answer)")
	pos, flags := splitArgs(fs, args)
	if err := cli.Parse(fs, flags, stdout); err != nil {
		return cli.Table, nil, err
	}
	format, err := cli.PickFormat(*asJSON, *asCSV)
	return format, pos, err
}

// flagSet reports whether the flag was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// readQueries parses the query file (- for standard input).
func readQueries(path string) ([]query.Question, error) {
	if path == "-" {
		return query.ParseQueries(os.Stdin, "stdin")
	}
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, cli.Usagef("--queries: %w", err)
		}
		return nil, err
	}
	defer f.Close()
	return query.ParseQueries(f, path)
}

// queryMain runs `realrun neighbors` or `realrun predict`.
func queryMain(cmd string, args []string, stdout, stderr io.Writer) error {
	if cmd == "neighbors" {
		return neighborsMain(args, stdout, stderr)
	}
	return predictMain(args, stdout, stderr)
}

// searchStopped is a search ended by a signal: nothing was written (the
// work directory is only read), and the exit status is 128+signal.
func searchStopped(cmd string, why *evalStop) error {
	return &stoppedError{msg: fmt.Sprintf("%s: %s: the search stopped at once, unfinished: no result (nothing was written; the work directory is only read)", cmd, signalName(why.sig)), code: why.code}
}

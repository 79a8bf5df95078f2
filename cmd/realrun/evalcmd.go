package main

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/realrun/job"
)

// `realrun eval WORKDIR` and `realrun export WORKDIR`: a trained work
// directory evaluated or exported without training.

// evalMemoryHelp is --eval-memory's help, for training and realrun eval.
const evalMemoryHelp = "memory budget of evaluation, e.g. 2GB (default: a quarter of this machine's memory, at least 2 GiB); it must hold one partition plus the evaluated edges' rows, queries and known partners, and partitions are streamed through it"

// workdirMain runs `realrun eval` or `realrun export`.
func workdirMain(cmd string, args []string, stdout, stderr io.Writer) error {
	var dir string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		dir, args = args[0], args[1:]
	}
	if cmd == "eval" {
		return evalMain(dir, args, stdout, stderr)
	}
	return exportMain(dir, args, stdout, stderr)
}

// evalColumns are `realrun eval`'s table and CSV columns.
var evalColumns = plots.Columns{
	{Field: "Checkpoint", Head: "checkpoint"},
	{Field: "Quality.Split", Key: "split", Head: "split"},
	{Field: "Quality.Mode", Key: "protocol", Head: "protocol"},
	{Field: "Quality.Edges", Key: "edges", Head: "edges"},
	{Field: "Quality.MRR", Key: "mrr", Head: "MRR", Prec: 3, CSVPrec: 4},
	{Field: "Quality.HitsAt1", Key: "hits_at_1", Head: "Hits@1", Prec: 3, CSVPrec: 4},
	{Field: "Quality.HitsAt3", Key: "hits_at_3", Head: "Hits@3", Prec: 3, CSVPrec: 4},
	{Field: "Quality.HitsAt10", Key: "hits_at_10", Head: "Hits@10", Prec: 3, CSVPrec: 4},
	{Field: "Quality.Baseline", Key: "random_mrr", Head: "random MRR", Prec: 4, CSVPrec: 6},
	{Field: "Quality.Seconds", Key: "eval_seconds", Head: "eval s", Prec: 1, CSVPrec: 3},
}

func evalMain(dir string, args []string, stdout, stderr io.Writer) error {
	o := job.EvalDirOptions{Dir: dir}
	var progress string
	fs := newFlagSet(prog + " eval")
	fs.StringVar(&o.Split, "split", "test", "split to rank: test or valid")
	fs.IntVar(&o.Edges, "eval-edges", job.Defaults.EvalEdges, "edges ranked (a seeded sample of the split when there are more)")
	fs.StringVar(&o.Protocol, "eval-protocol", job.Defaults.EvalProtocol, "filtered (against every node, known edges removed), sampled (1,000 uniform + 1,000 by degree, Marius §5.1) or auto (filtered up to 100,000 nodes)")
	fs.StringVar(&o.Memory, "eval-memory", "", evalMemoryHelp)
	fs.Int64Var(&o.Seed, "seed", -1, "seed of the edge and candidate samples (default: the work directory's data seed, as training's evaluation)")
	fs.IntVar(&o.Workers, "workers", runtime.NumCPU(), "ranking goroutines")
	fs.StringVar(&progress, "progress", "auto", "progress display: auto, bar, lines or none")
	checkpointFlag(fs, &o.Checkpoint)
	cli.SetHelp(fs, cli.Help{
		Usage:   "realrun eval WORKDIR [flags]",
		Summary: "Evaluates a trained work directory's current checkpoint (or its best: --checkpoint best) without training (the model and d from its manifest, relation parameters from the checkpoint), out of core within --eval-memory.",
		Groups: []cli.FlagGroup{
			{Title: "Evaluation", Flags: []string{"checkpoint", "split", "eval-edges", "eval-protocol", "eval-memory", "seed", "workers", "progress"}},
			{Title: "Output", Flags: []string{"json", "csv"}},
		},
		Examples: []string{
			"realrun eval /tmp/kg-work                          # test MRR of the last checkpoint",
			"realrun eval /tmp/kg-work --split valid --eval-memory 256MB --json",
			"realrun eval /tmp/kg-work --checkpoint best           # the epoch with the best validation MRR (trained with --keep best)",
		},
	})
	format, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	if o.Dir == "" {
		return cli.Usagef("realrun eval: give the work directory first: realrun eval WORKDIR [flags]")
	}
	o.Progress = pickEvalProgress(progress, stderr)
	out, err := job.EvaluateDir(o)
	if err != nil {
		return noBest(err)
	}
	switch format {
	case cli.JSON:
		return cli.PrintJSON(stdout, out)
	case cli.CSV:
		return evalColumns.CSV([]job.EvalDirOutput{out}).CSV(stdout)
	}
	if err := evalColumns.Human([]job.EvalDirOutput{out}).Render(stdout); err != nil {
		return err
	}
	q := out.Quality
	fmt.Fprintf(stdout, "%s: %s d=%d, %d nodes; %s ranking of %d %s edges, both sides; filtered and sampled MRRs are not comparable\n",
		out.Workdir, out.Model, out.Dim, out.Nodes, q.Mode, q.Edges, q.Split)
	fmt.Fprintf(stdout, "memory: at most %.1f MB of gathered rows, scores, known partners and partition buffers, within the %.1f MB budget (--eval-memory); the embeddings alone are %.1f MB\n",
		float64(q.MemoryBytes)/1e6, float64(q.MemoryBudget)/1e6, float64(out.Nodes)*float64(out.Dim)*4/1e6)
	return nil
}

// exportOutput is `realrun export`'s result (its --json; one CSV row).
type exportOutput struct {
	Workdir    string `json:"workdir"`
	Checkpoint string `json:"checkpoint"`
	Format     string `json:"format"`
	Out        string `json:"out"`
	Relations  string `json:"relations,omitempty"`
}

var exportColumns = plots.Columns{
	{Field: "Workdir", Head: "work directory"},
	{Field: "Checkpoint", Head: "checkpoint"},
	{Field: "Format", Head: "format"},
	{Field: "Out", Head: "embeddings"},
	{Field: "Relations", Head: "relations"},
}

func exportMain(dir string, args []string, stdout, stderr io.Writer) error {
	var o exportOutput
	var which string
	fs := newFlagSet(prog + " export")
	fs.StringVar(&o.Out, "out", "", "write the node embeddings to `FILE`, in input id order")
	fs.StringVar(&o.Format, "format", "", "npy (float32 nodes × d), tsv (name<TAB>values; names from ids.tsv) or pbg (--out DIR in PyTorch-BigGraph's checkpoint layout, HDF5, relation parameters included; a build with -tags hdf5: make build-hdf5) (default: from --out's extension, else npy)")
	fs.StringVar(&o.Relations, "relations", "", "also write the relation parameters to `FILE` in the same format (tsv rows named from relations.tsv where the work directory has one)")
	checkpointFlag(fs, &which)
	cli.SetHelp(fs, cli.Help{
		Usage:   "realrun export WORKDIR --out FILE [flags]",
		Summary: "Exports a trained work directory's current checkpoint (or its best: --checkpoint best), streaming one partition at a time: node embeddings in input id order, and optionally the relation parameters.",
		Groups: []cli.FlagGroup{
			{Title: "Export", Flags: []string{"out", "format", "relations", "checkpoint"}},
			{Title: "Output", Flags: []string{"json", "csv"}},
		},
		Examples: []string{
			"realrun export /tmp/kg-work --out emb.npy --relations rel.npy",
			"realrun export /tmp/kg-work --out emb.tsv",
			"realrun export /tmp/kg-work --out best.npy --checkpoint best   # the epoch with the best validation MRR",
			"realrun export /tmp/kg-work --out pbg-ckpt --format pbg   # h5py reads it as PyTorch-BigGraph's loader does",
		},
	})
	format, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case dir == "":
		return cli.Usagef("realrun export: give the work directory first: realrun export WORKDIR --out FILE [flags]")
	case o.Out == "":
		return cli.Usagef("realrun export: --out FILE is required")
	}
	o.Workdir = dir
	if o.Format == "" {
		o.Format = map[string]string{".tsv": "tsv", ".txt": "tsv"}[strings.ToLower(filepath.Ext(o.Out))]
		if o.Format == "" {
			o.Format = "npy"
		}
	}
	for _, f := range []struct{ flag, path string }{{"out", o.Out}, {"relations", o.Relations}} {
		if f.path == "" || f.flag == "out" && o.Format == "pbg" { // pbg: a directory, checked by the exporter
			continue
		}
		if err := atomicfile.CheckWritable(f.path); err != nil {
			return cli.Usagef("--%s: %w", f.flag, err)
		}
	}
	switch o.Format {
	case "npy", "tsv", "pbg":
		o.Checkpoint, err = job.ExportCheckpoint(dir, which, o.Out, o.Format, o.Relations, stderr)
	default:
		return cli.Usagef("--format %q: want npy, tsv or pbg", o.Format)
	}
	if err != nil {
		return noBest(err)
	}
	if o.Format != "pbg" { // the pbg exporter said what it wrote
		atomicfile.Announce(stderr, o.Out)
	}
	if o.Relations != "" {
		atomicfile.Announce(stderr, o.Relations)
	}
	switch format {
	case cli.JSON:
		return cli.PrintJSON(stdout, o)
	case cli.CSV:
		return exportColumns.CSV([]exportOutput{o}).CSV(stdout)
	}
	return exportColumns.Human([]exportOutput{o}).Render(stdout)
}

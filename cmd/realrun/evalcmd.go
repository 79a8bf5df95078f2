package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/gnn"
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
	if dir != "" && gnn.IsWorkdir(dir) {
		if cmd == "eval" {
			return cli.Usagef("realrun eval: %s is a GNN work directory: its accuracies are in its training output (realrun gnn … --workdir %s --resume prints them again); realrun export writes its node representations", dir, dir)
		}
		return gnnExportMain(dir, args, stdout, stderr)
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
	{Field: "Quality.Seconds", Key: "eval_seconds", Head: "eval", Seconds: true, CSVPrec: 3},
}

func evalMain(dir string, args []string, stdout, stderr io.Writer) error {
	o := job.EvalDirOptions{Dir: dir}
	var progress string
	fs := newFlagSet(prog + " eval")
	cli.EnumVar(fs, &o.Split, "split", "test", "split to rank: test or valid")
	fs.IntVar(&o.EvalEdges, "eval-edges", 0, "edges ranked, a seeded sample of the split when there are more (default: as many as training ranked, else "+fmt.Sprint(job.Defaults.EvalEdges)+")")
	cli.EnumVar(fs, &o.EvalProtocol, "eval-protocol", "", "filtered (against every node, known edges removed), sampled (1,000 uniform + 1,000 by degree, Marius §5.1) or auto (filtered up to 100,000 nodes) (default: training's, else auto)")
	fs.StringVar(&o.EvalMemory, "eval-memory", "", evalMemoryHelp)
	fs.Int64Var(&o.Seed, "seed", -1, "seed of the edge and candidate samples (default: training's evaluation's, else the work directory's data seed)")
	fs.IntVar(&o.Workers, "workers", runtime.NumCPU(), "ranking goroutines")
	cli.MachineDefault(fs, "workers", cpusDefault)
	cli.EnumVar(fs, &progress, "progress", "auto", "progress display: auto, bar, lines or none")
	checkpointFlag(fs, &o.Checkpoint)
	cli.SetHelp(fs, cli.Help{
		Usage:   "realrun eval WORKDIR [flags]",
		Summary: "Evaluates a trained work directory's current checkpoint (or its best: --checkpoint best) without training (the model and d from its manifest, relation parameters from the checkpoint), out of core within --eval-memory. It ranks with the protocol, edges and seed training evaluated with (recorded in the work directory), so it gives training's figures, unless flags say otherwise. Ctrl-C stops it at once.",
		Groups: []cli.FlagGroup{
			{Title: "Evaluation", Flags: []string{"checkpoint", "split", "eval-edges", "eval-protocol", "eval-memory", "seed", "workers", "progress"}},
			{Title: "Output", Flags: []string{"json", "csv"}},
		},
		Examples: []string{
			"realrun eval /tmp/kg-work                          # test MRR of the last checkpoint, as training ranked it",
			"realrun eval /tmp/kg-work --eval-protocol filtered # against every node, whatever training did",
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
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given["eval-edges"] && o.EvalEdges < 1 {
		return cli.Usagef("--eval-edges %d: must be at least 1", o.EvalEdges)
	}
	if given["eval-protocol"] && o.EvalProtocol == "" {
		return cli.Usagef("--eval-protocol \"\": want auto, filtered or sampled")
	}
	o.Progress = pickEvalProgress(progress, stderr)
	note := noteAutoSampled(stderr)
	o.Chosen = func(c eval.Choice, from string) {
		if from == job.FromDefault && !(given["eval-protocol"] && given["eval-edges"] && given["seed"]) {
			fmt.Fprintf(stderr, "%s eval: %s holds no record of how training evaluated (trained before tierflow kept one, or never evaluated): ranking with training's defaults (--eval-protocol %s --eval-edges %d --seed: the data seed) where not given\n",
				prog, dir, job.Defaults.EvalProtocol, job.Defaults.EvalEdges)
		}
		note(c)
	}
	stop, code, done := stopEvalOnSignal("eval", stderr)
	defer done()
	o.Stop = stop
	out, err := job.EvaluateDir(o)
	if errors.Is(err, eval.ErrStopped) {
		return &stoppedError{msg: fmt.Sprintf("eval: %s: the evaluation stopped at once, unfinished: no result (nothing was written; the work directory is only read)", signalName(code.sig)), code: code.code}
	} else if err != nil {
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
	fmt.Fprintf(stdout, "%s: %s d=%d, %d nodes; %s ranking of %d %s edges, both sides, seed %d (%s); filtered and sampled MRRs are not comparable\n",
		out.Workdir, out.Model, out.Dim, out.Nodes, q.Mode, q.Edges, q.Split, out.Seed, protocolFrom(out))
	fmt.Fprintf(stdout, "memory: at most %.1f MB of gathered rows, scores, known partners and partition buffers, within the %.1f MB budget (--eval-memory); the embeddings alone are %.1f MB\n",
		float64(q.MemoryBytes)/1e6, float64(q.MemoryBudget)/1e6, float64(out.Nodes)*float64(out.Dim)*4/1e6)
	return nil
}

// protocolFrom says where realrun eval's protocol came from.
func protocolFrom(out job.EvalDirOutput) string {
	switch out.ProtocolFrom {
	case job.FromTraining:
		return "the protocol training evaluated with, " + out.Protocol
	case job.FromOptions:
		return "--eval-protocol " + out.Protocol
	}
	return "the default protocol, " + out.Protocol + ": no record of training's"
}

// noteAutoSampled says once, in one line on stderr, that the auto protocol
// chose sampled ranking, why, and what filtered ranking would take.
func noteAutoSampled(stderr io.Writer) func(eval.Choice) {
	var once sync.Once
	return func(c eval.Choice) {
		if !c.Auto || c.Protocol != eval.Sampled {
			return
		}
		once.Do(func() {
			fmt.Fprintf(stderr, "evaluation: sampled ranking, chosen by --eval-protocol auto: %s nodes, over the %s up to which it ranks filtered; --eval-protocol filtered ranks against every node instead, with an --eval-memory of at least %s plus the evaluated edges' known partners (the budget now: %s)\n",
				digits(c.Nodes), digits(c.FilteredMaxNodes), mb(c.FilteredMemory), mb(c.Budget))
		})
	}
}

// digits is n with its thousands grouped: 124,800.
func digits(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// mb is a byte count in MB (10^6 bytes), or GB from 10^9.
func mb(b int64) string {
	if b >= 1e9 {
		return fmt.Sprintf("%.1f GB", float64(b)/1e9)
	}
	return fmt.Sprintf("%.1f MB", float64(b)/1e6)
}

// evalStop is the signal that stopped realrun eval and the exit status it
// asks for.
type evalStop struct {
	sig  os.Signal
	code int
}

// stopEvalOnSignal closes stop on the first SIGINT or SIGTERM, so that
// realrun eval's evaluation stops at once (it only reads) and the command
// exits with 128+signal; a second signal exits at once.
func stopEvalOnSignal(cmd string, stderr io.Writer) (stop <-chan struct{}, why *evalStop, done func()) {
	c, ch := make(chan struct{}), make(chan os.Signal, 2)
	why = &evalStop{}
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		if s, ok := <-ch; ok {
			why.sig, why.code = s, 128+int(s.(syscall.Signal))
			close(c)
			if s, ok := <-ch; ok {
				fmt.Fprintf(stderr, "%s %s: second %s: exiting at once\n", prog, cmd, signalName(s))
				os.Exit(why.code)
			}
		}
	}()
	return c, why, func() { signal.Stop(ch); close(ch) }
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
	cli.EnumVar(fs, &o.Format, "format", "", "npy (float32 nodes × d), tsv (name<TAB>values; names from ids.tsv), csv (name,values; RFC 4180) or pbg (--out DIR in PyTorch-BigGraph's checkpoint layout, HDF5, relation parameters included; a build with -tags hdf5: make build-hdf5) (default: from --out's extension: .npy, .tsv or .txt, .csv)")
	fs.StringVar(&o.Relations, "relations", "", "also write the relation parameters to `FILE` in the same format (tsv rows named from relations.tsv where the work directory has one)")
	checkpointFlag(fs, &which)
	cli.SetHelp(fs, cli.Help{
		Usage:   "realrun export WORKDIR --out FILE [flags]",
		Summary: "Exports a trained work directory's current checkpoint (or its best: --checkpoint best), streaming one partition at a time: node embeddings in input id order, and optionally the relation parameters. A GNN work directory (realrun gnn) exports its node representations instead: realrun export GNN-WORKDIR --help.",
		Groups: []cli.FlagGroup{
			{Title: "Export", Flags: []string{"out", "format", "relations", "checkpoint"}},
			{Title: "Output", Flags: []string{"json", "csv"}},
		},
		Examples: []string{
			"realrun export /tmp/kg-work --out emb.npy --relations rel.npy",
			"realrun export /tmp/kg-work --out emb.tsv             # the format from the extension: .npy, .tsv or .txt, .csv",
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
	given := o.Format
	if o.Format, err = job.ExportFormatOf(o.Out, o.Format, "Out", "Format"); err != nil {
		return asUsage(err)
	}
	if o.Relations != "" && o.Format != "pbg" { // pbg: refused by the exporter
		// The relations are written in the embeddings' format.
		if given != "" {
			_, err = job.ExportFormatOf(o.Relations, o.Format, "Relations", "Format")
		} else if f, ferr := eval.ExportFormat(o.Relations, ""); ferr == nil && f != o.Format {
			err = cli.Usagef("--relations %s: a %s file, but the embeddings (--out %s) are written as %s: name them alike, or give --format", o.Relations, filepath.Ext(o.Relations), o.Out, o.Format)
		}
		if err != nil {
			return asUsage(err)
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
	o.Checkpoint, err = job.ExportCheckpoint(dir, which, o.Out, o.Format, o.Relations, stderr)
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

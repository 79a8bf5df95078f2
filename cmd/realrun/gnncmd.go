package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/realrun/gnn"
	"github.com/tierflow/tierflow/realrun/gnn/split"
	"github.com/tierflow/tierflow/realrun/job"
)

// `realrun gnn`: node classification with a graph neural network
// (realrun/gnn), trained from files in a work directory of its own.

// gnnRules are numberRules with realrun gnn's own: its learning rate has
// no default to stand for with 0.
var gnnRules = func() map[string]cli.Rule {
	r := maps.Clone(numberRules)
	r["lr"] = cli.Positive
	return r
}()

// gnnFlags are realrun gnn's flags beyond gnn.Options.
type gnnFlags struct {
	fanouts, progress string
	seed              int64
	cpuprofile        string
	// microMemory is --micro-batch-memory as given (devices.ParseBytes),
	// microSplit --micro-split.
	microMemory, microSplit string
}

// gnnColumns are realrun gnn's table and CSV columns.
var gnnColumns = plots.Columns{
	{Field: "Epoch", Head: "epoch"},
	{Field: "Loss", Head: "loss", Prec: 4, CSVPrec: 6},
	{Field: "TrainAcc", Head: "train\nacc", Prec: 4, CSVPrec: 6},
	{Field: "ValidAcc", Head: "valid\nacc", Prec: 4, CSVPrec: 6},
	{Field: "TestAcc", Head: "test\nacc", Prec: 4, CSVPrec: 6},
	{Field: "EpochSeconds", Head: "time", Seconds: true, CSVPrec: 3},
	{Field: "SampleSeconds", CSVPrec: 3},
	{Field: "StallSeconds", Head: "stall", Seconds: true, CSVPrec: 3},
	{Field: "ComputeSeconds", CSVPrec: 3},
	{Field: "EvalSeconds", Head: "eval", Seconds: true, CSVPrec: 3},
	{Field: "Batches"},
	{Field: "SampledEdges"},
	{Field: "InputNodes"},
	{Field: "NodesPerSecond", Head: "nodes/s", Prec: 0, CSVPrec: 0},
	{Field: "EdgesPerSecond", CSVPrec: 0},
	{Field: "FLOPs", CSVPrec: 0},
	{Field: "FLOPsPerSecond", Head: "GFLOP/s", Scale: 1e-9, Prec: 1, CSVPrec: 0},
	{Field: "MicroBatches", Head: "micro-\nbatches"},
	{Field: "MaxMicroBatches"},
	{Field: "MicroInputNodes"},
	{Field: "RedundantInputNodes"},
	{Field: "PeakBytes", Head: "peak\nMB", Scale: 1e-6, Prec: 1},
	{Field: "SplitSeconds", CSVPrec: 3},
}

func gnnMain(args []string, stdout, stderr io.Writer) (err error) {
	o := gnn.Defaults
	var f gnnFlags
	fs := flag.NewFlagSet(prog+" gnn", flag.ContinueOnError)
	cli.Rules(fs, gnnRules)
	fs.StringVar(&o.Files.Edges, "edges", "", "the graph's edge `FILE`: src dst per line (src rel dst: the relation is ignored); messages flow both ways unless --directed")
	registerFormatFlags(fs, &o.Files.Format)
	fs.BoolVar(&o.Files.Directed, "directed", false, "messages flow along the edges only (dst reads src)")
	fs.StringVar(&o.Files.Features, "features", "", "node features `FILE`: node<TAB>v1 v2 … (.tsv), or a float32 nodes × F .npy whose rows follow --feature-names")
	fs.StringVar(&o.Files.FeatureNames, "feature-names", "", "with an .npy --features: the node names of its rows, one a line, in order (`FILE`)")
	fs.StringVar(&o.Files.Labels, "labels", "", "node labels `FILE`: node<TAB>label (labels are any names)")
	fs.StringVar(&o.Files.TrainNodes, "train-nodes", "", "training nodes `FILE`, one node name a line")
	fs.StringVar(&o.Files.ValidNodes, "valid-nodes", "", "validation nodes `FILE`, one node name a line")
	fs.StringVar(&o.Files.TestNodes, "test-nodes", "", "test nodes `FILE`, one node name a line")
	fs.BoolVar(&o.Files.Skip, "skip-bad", false, "leave out bad records (lines that do not parse, unknown nodes, …), counted by reason, instead of refusing the input")
	cli.EnumVar(fs, &o.Model, "model", gnn.Defaults.Model, "the model: "+strings.Join(gnn.Models, ", ")+" (mlp: the features alone, no neighbours)")
	fs.IntVar(&o.Layers, "layers", gnn.Defaults.Layers, fmt.Sprintf("layers, 1 to %d", gnn.MaxLayers))
	fs.IntVar(&o.Hidden, "hidden", gnn.Defaults.Hidden, "hidden width (gat: all heads together, a multiple of --heads)")
	fs.IntVar(&o.Heads, "heads", gnn.Defaults.Heads, "gat's attention heads")
	fs.StringVar(&f.fanouts, "fanouts", "", "neighbours sampled per layer, comma-separated, one per layer, the first for the input layer (DGL's order): each a count or full (all of them; 0: none) (default: 10,25 at 2 layers, 10 per layer otherwise; mlp samples none)")
	fs.IntVar(&o.Batch, "batch", gnn.Defaults.Batch, "training (output) nodes per mini-batch")
	fs.Float64Var(&o.Dropout, "dropout", gnn.Defaults.Dropout, "dropout probability between layers, in [0, 1) (0: none)")
	fs.Float64Var(&o.LR, "lr", gnn.Defaults.LR, "Adam's learning rate")
	fs.IntVar(&o.Epochs, "epochs", gnn.Defaults.Epochs, "epochs, in all (a resumed run trains up to it)")
	fs.Int64Var(&f.seed, "seed", int64(gnn.Defaults.Seed), "seed of every random choice: initial parameters, shuffle, neighbour samples, dropout (one stream each)")
	fs.IntVar(&o.Workers, "workers", runtime.NumCPU(), "goroutines the compute splits rows over")
	cli.MachineDefault(fs, "workers", cpusDefault)
	fs.IntVar(&o.EvalEvery, "eval-every", gnn.Defaults.EvalEvery, "evaluate the validation and test accuracy after every N-th epoch (and the last)")
	fs.IntVar(&o.MicroBatches, "micro-batches", 0, "split every batch into `N` micro-batches by its output nodes (a batch with fewer outputs: one each), trained one after another with one Adam step per batch — the same parameters up to float rounding (0 or 1: no split, unless --micro-batch-memory); wins over --micro-batch-memory")
	fs.StringVar(&f.microMemory, "micro-batch-memory", "", "split a batch whose estimated training step needs more than `SIZE` (e.g. 512MB, 2GiB) into the fewest micro-batches that fit, batch by batch (default: no budget)")
	cli.EnumVar(fs, &f.microSplit, "micro-split", string(gnn.Defaults.MicroSplit), "how a batch's output nodes are split into micro-batches: reg (METIS on the graph of the input rows they share, Betty's), range, random or metis (METIS on the batch's edges among them)")
	fs.StringVar(&o.Workdir, "workdir", "", "work `DIR` for the run's settings and a checkpoint after every epoch (default: one per input under the system temp dir)")
	fs.BoolVar(&o.Resume, "resume", false, "continue from the work directory's last checkpoint; refused if it was trained on other inputs or with other settings")
	fs.BoolVar(&o.Overwrite, "overwrite", false, "start over on a work directory that holds a checkpoint (the checkpoint is lost)")
	cli.EnumVar(fs, &f.progress, "progress", "auto", "progress display: auto, bar, lines or none")
	fs.StringVar(&o.SaveBlocks, "save-blocks", "", "write every epoch's sampled training batches to `DIR`/epoch-0001.blocks … (the block file format, for the PyTorch comparison)")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the run (go tool pprof) to `FILE`")
	cli.SetHelp(fs, cli.Help{
		Usage:   "realrun gnn --edges FILE --features FILE --labels FILE --train-nodes FILE [flags]",
		Summary: "Trains a graph neural network for node classification on the CPU — GraphSAGE (mean, pool or LSTM aggregator), GAT, or a features-only MLP — on sampled mini-batches with Adam, and prints the loss and the training, validation and test accuracy of every epoch. The work directory keeps a checkpoint after every epoch (--resume continues it); realrun export WORKDIR writes the final node representations.",
		Groups: []cli.FlagGroup{
			{Title: "The graph", Flags: []string{"edges", "delimiter", "header", "columns", "directed", "features", "feature-names", "labels", "train-nodes", "valid-nodes", "test-nodes", "skip-bad"}},
			{Title: "The model", Flags: []string{"model", "layers", "hidden", "heads", "fanouts", "dropout"}},
			{Title: "Training", Flags: []string{"epochs", "batch", "lr", "seed", "workers", "eval-every"}},
			{Title: "Micro-batches", Flags: []string{"micro-batches", "micro-batch-memory", "micro-split"}},
			{Title: "Run control", Flags: []string{"workdir", "resume", "overwrite", "progress", "cpuprofile"}},
			{Title: "Output", Flags: []string{"json", "csv", "save-blocks"}},
		},
		Examples: []string{
			"realrun gnn --edges g/edges.tsv --features g/features.npy --feature-names g/nodes.txt --labels g/labels.tsv \\",
			"    --train-nodes g/train.txt --valid-nodes g/valid.txt --test-nodes g/test.txt   # GraphSAGE-mean, 2 layers, fanouts 10,25",
			"realrun gnn … --model gat --heads 4 --hidden 256 --epochs 20 --json",
			"realrun gnn … --model mlp                       # the baseline: features alone",
			"realrun gnn … --micro-batch-memory 512MB         # split the batches that need more",
			"realrun gnn … --workdir /tmp/g-sage --resume    # continue a stopped run",
			"realrun export /tmp/g-sage --out repr.npy       # the final node representations (and repr.names.txt)",
		},
	})
	format, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	if err := checkGNNFlags(fs, &o, &f); err != nil {
		return err
	}
	if o.Workdir == "" {
		o.Workdir = gnn.DefaultWorkdir(o.Files)
	}
	if f.cpuprofile != "" {
		stop, perr := startCPUProfile(f.cpuprofile, stderr)
		if perr != nil {
			return perr
		}
		defer func() { err = errors.Join(err, stop()) }()
	}
	o.Log = stderr
	var endProgress func()
	o.Progress, endProgress = pickGNNProgress(f.progress, stderr)
	o.Loaded = func(r *gnn.Result) { fmt.Fprintln(stderr, gnnHeader(r)) }
	stop, code, done := stopGNNOnSignal(args, stderr)
	defer done()
	o.Stop = stop
	res, err := gnn.Train(o)
	endProgress()
	if fe := (*gnn.FieldError)(nil); errors.As(err, &fe) && fe.Field == "micro-batch-memory" {
		fe.Value = f.microMemory // as given
	}
	if se := (*gnn.StopError)(nil); errors.As(err, &se) {
		if res != nil && len(res.Epochs) > 0 {
			if perr := printGNN(stdout, format, res); perr != nil {
				return errors.Join(err, perr)
			}
		}
		return &stoppedError{msg: fmt.Sprintf("gnn: %s: %v; resume with: %s gnn %s", signalName(code.sig), err, prog, resumeArgs(args)), code: code.code}
	} else if err != nil {
		return gnnError(err)
	}
	return printGNN(stdout, format, res)
}

// checkGNNFlags refuses, in one line before any work, flags that are
// missing, contradict each other or cannot be trained with, and fills
// o's fanouts and seed from f.
func checkGNNFlags(fs *flag.FlagSet, o *gnn.Options, f *gnnFlags) error {
	for _, req := range []struct{ flag, v string }{{"edges", o.Files.Edges}, {"features", o.Files.Features}, {"labels", o.Files.Labels}, {"train-nodes", o.Files.TrainNodes}} {
		if req.v == "" {
			return cli.Usagef("realrun gnn: --%s FILE is required (realrun gnn --help)", req.flag)
		}
	}
	if err := o.Files.Format.Check(); err != nil {
		return cli.Usagef("%w", err)
	}
	if f.progress != "auto" && f.progress != "bar" && f.progress != "lines" && f.progress != "none" {
		return cli.Usagef("--progress %q: want auto, bar, lines or none", f.progress)
	}
	if o.Resume && o.Overwrite {
		return cli.Usagef("--overwrite and --resume contradict each other: resume the checkpoint, or start over")
	}
	o.Seed = uint64(f.seed)
	if _, bad := split.ParseMethod(f.microSplit); bad == nil && flagSet(fs, "micro-split") && f.microMemory == "" && o.MicroBatches < 2 {
		return cli.Usagef("--micro-split %s splits nothing without --micro-batches N (2 or more) or --micro-batch-memory SIZE", f.microSplit)
	}
	o.MicroSplit = split.Method(f.microSplit)
	if f.microMemory != "" {
		b, err := devices.ParseBytes(f.microMemory)
		if err != nil {
			return cli.Usagef("--micro-batch-memory: %w", err)
		}
		o.MicroBatchMemory = int64(b)
	}
	if f.fanouts != "" {
		fan, err := gnn.ParseFanouts(f.fanouts)
		if err != nil {
			return cli.Usagef("--fanouts %s: %w", f.fanouts, err)
		}
		if o.Model != "mlp" {
			o.Fanouts = fan
		}
	}
	if err := o.Check(); err != nil {
		return gnnError(err)
	}
	if o.SaveBlocks != "" {
		if fi, err := os.Stat(o.SaveBlocks); err == nil && !fi.IsDir() {
			return cli.Usagef("--save-blocks %s: not a directory", o.SaveBlocks)
		}
	}
	if f.cpuprofile != "" {
		if err := atomicfile.CheckWritable(f.cpuprofile); err != nil {
			return cli.Usagef("--cpuprofile: %w", err)
		}
	}
	return nil
}

// gnnError says the trainer's refusals in the words of realrun gnn's
// flags (exit status 2); other errors pass unchanged.
func gnnError(err error) error {
	var fe *gnn.FieldError
	var we *gnn.WorkdirError
	switch {
	case errors.As(err, &fe):
		return cli.Usagef("--%s", fe.Error())
	case errors.As(err, &we):
		return cli.Usagef("%s", workdirWords(we))
	}
	return asUsage(err)
}

// workdirWords is a refused work directory in realrun gnn's flags, as
// the edge engine says it (workdir.Start).
func workdirWords(e *gnn.WorkdirError) string {
	flags := make([]string, len(e.Diffs))
	for i, d := range e.Diffs {
		flags[i] = "--" + d
	}
	switch e.Kind {
	case gnn.NotWorkdir:
		return fmt.Sprintf("--workdir %s exists and is not a GNN work directory; choose another --workdir", e.Dir)
	case gnn.Locked:
		return fmt.Sprintf("--workdir: %v", e.Err)
	case gnn.HoldsCheckpoint:
		return fmt.Sprintf("--workdir %s holds a checkpoint after epoch %d: --resume continues it, --overwrite starts over (losing it), or choose another --workdir", e.Dir, e.Epoch)
	case gnn.OtherSettings:
		return fmt.Sprintf("--workdir %s holds a checkpoint after epoch %d trained with other settings: %s; --resume with those settings continues it, --overwrite starts over (losing it), or choose another --workdir",
			e.Dir, e.Epoch, strings.Join(flags, ", "))
	case gnn.TooFewEpochs:
		return fmt.Sprintf("--epochs %d: %s is trained through epoch %d; --epochs counts the total, not the epochs to add: ask for more than %d to continue (--epochs %d trains one more), or start over with --overwrite",
			e.Epochs, e.Dir, e.Epoch, e.Epoch, e.Epoch+1)
	}
	return fmt.Sprintf("--workdir %s: %v", e.Dir, e.Err)
}

// gnnHeader is the line on stderr naming the graph and the model before
// training.
func gnnHeader(r *gnn.Result) string {
	g, s := r.Graph, r.Settings
	model := modelWords(s)
	skipped := ""
	if n := sumValues(g.Skipped); n > 0 {
		skipped = fmt.Sprintf(" (%s bad records skipped: %s)", digits(n), skippedWords(g.Skipped))
	}
	return fmt.Sprintf("gnn: %s nodes, %s edges, %s features, %d classes; train %s, valid %s, test %s%s; %s, %s parameters; batch %d%s, lr %g, dropout %g, seed %d, %d workers; work directory %s",
		digits(int64(g.Nodes)), digits(g.Edges), digits(int64(g.Features)), g.Classes, digits(int64(g.Train)), digits(int64(g.Valid)), digits(int64(g.Test)), skipped,
		model, digits(int64(r.Params)), s.Batch, microWords(s), s.LR, s.Dropout, s.Seed, s.Workers, r.Workdir)
}

// microWords says how batches are split: " in 4 micro-batches (reg)",
// " in micro-batches of at most 512MB (reg)"; "" when they are not.
func microWords(s gnn.Settings) string {
	switch {
	case s.MicroBatches > 1:
		return fmt.Sprintf(" in %d micro-batches (%s)", s.MicroBatches, s.MicroSplit)
	case s.MicroBatchMemory > 0:
		return fmt.Sprintf(" in micro-batches of at most %s (%s)", devices.Bytes(s.MicroBatchMemory), s.MicroSplit)
	}
	return ""
}

// modelWords names the model and its shape: "gat, 2 layers, hidden
// 256, 4 heads, fanouts 10,25".
func modelWords(s gnn.Settings) string {
	model := fmt.Sprintf("%s, %d layers, hidden %d", s.Model, s.Layers, s.Hidden)
	if s.Model == "gat" {
		model += fmt.Sprintf(", %d heads", s.Heads)
	}
	if s.Model != "mlp" {
		model += ", fanouts " + s.Fanouts
	}
	return model
}

func sumValues(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// skippedWords lists the skipped records by reason: "3 unknown node, 1
// bad line".
func skippedWords(m map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(parts, ", ")
}

// printGNN prints a run in the chosen format: the table of epochs and a
// summary, the JSON of the whole Result, or one CSV row per epoch.
func printGNN(w io.Writer, format cli.Format, r *gnn.Result) error {
	switch format {
	case cli.JSON:
		return cli.PrintJSON(w, r)
	case cli.CSV:
		return gnnColumns.CSV(r.Epochs).CSV(w)
	}
	cols := gnnColumns
	if !slices.ContainsFunc(r.Epochs, func(e gnn.Epoch) bool { return e.MaxMicroBatches > 1 }) {
		cols = cols.DropHuman("MicroBatches") // no batch split: a column of batch counts
	}
	if err := cols.Human(r.Epochs).Render(w); err != nil {
		return err
	}
	s, g, sum := r.Settings, r.Graph, r.Summary
	model := modelWords(s)
	fmt.Fprintf(w, "%s nodes, %s edges, %s features, %d classes; %s (%s parameters), batch %d, lr %g, dropout %g, seed %d\n",
		digits(int64(g.Nodes)), digits(g.Edges), digits(int64(g.Features)), g.Classes, model, digits(int64(r.Params)), s.Batch, s.LR, s.Dropout, s.Seed)
	var acc []string
	if sum.BestValidAcc != nil {
		a := fmt.Sprintf("best validation accuracy %.4f after epoch %d", *sum.BestValidAcc, sum.BestValidEpoch)
		if sum.TestAccAtBest != nil {
			a += fmt.Sprintf(" (test %.4f)", *sum.TestAccAtBest)
		}
		acc = append(acc, a)
	}
	if sum.FinalTestAcc != nil {
		acc = append(acc, fmt.Sprintf("final test accuracy %.4f", *sum.FinalTestAcc))
	}
	if len(acc) > 0 {
		fmt.Fprintln(w, strings.Join(acc, "; "))
	}
	edges := "" // mlp samples none
	if sum.EdgesPerSecond > 0 {
		edges = fmt.Sprintf(", %s sampled edges/s", digits(int64(sum.EdgesPerSecond)))
	}
	fmt.Fprintf(w, "training %s: %s nodes/s%s, %.1f GFLOP/s in the dense products over compute time; work directory %s (realrun export %s --out FILE writes the node representations)\n",
		plots.Duration(sum.TrainSeconds), digits(int64(sum.NodesPerSecond)), edges, sum.FLOPsPerSecond/1e9, r.Workdir, r.Workdir)
	if line := microSummary(r); line != "" {
		fmt.Fprintln(w, line)
	}
	for _, e := range r.Epochs {
		if e.ValidAcc == nil && e.TestAcc == nil && g.Valid+g.Test > 0 {
			fmt.Fprintf(w, "%s marks an epoch not evaluated (--eval-every %d)\n", plots.Missing, s.EvalEvery)
			break
		}
	}
	return nil
}

// microSummary is the micro-batches of the run's epochs in a line; ""
// when no batch was split.
func microSummary(r *gnn.Result) string {
	var micro, batches, most int
	var redundant, inputs, peak int64
	for _, e := range r.Epochs {
		micro, batches, most = micro+e.MicroBatches, batches+e.Batches, max(most, e.MaxMicroBatches)
		redundant, inputs, peak = redundant+e.RedundantInputNodes, inputs+e.InputNodes, max(peak, e.PeakBytes)
	}
	if most <= 1 {
		return ""
	}
	return fmt.Sprintf("micro-batches (%s): %s for %s batches, up to %d a batch; %s input rows gathered again (%.1f%% more than the batches' %s); largest estimated step %s",
		r.Settings.MicroSplit, digits(int64(micro)), digits(int64(batches)), most, digits(redundant), 100*float64(redundant)/float64(max(inputs, 1)), digits(inputs), approxBytes(peak))
}

// approxBytes is n bytes to three significant digits: "123 MB", "1.23 GB".
func approxBytes(n int64) string {
	d := int64(1)
	for n/d >= 1000 {
		d *= 10
	}
	return devices.Bytes((n + d/2) / d * d).String()
}

// pickGNNProgress follows training in the --progress mode: a bar redrawn
// on a terminal (auto on one), one line per tenth of an epoch otherwise,
// or nothing. end ends a bar's line left open by a stop.
func pickGNNProgress(mode string, w io.Writer) (progress func(gnn.Progress), end func()) {
	if mode == "none" {
		return nil, func() {}
	}
	if mode == "bar" || mode == "auto" && isTerminal(w) {
		open := false
		return func(p gnn.Progress) {
				line := fmt.Sprintf("epoch %d/%d %s %d/%d batches  %.0f nodes/s  loss %.4f", p.Epoch, p.Epochs, bar(p.Batch, p.Batches), p.Batch, p.Batches, p.NodesPerSecond, p.Loss)
				if !p.Final {
					line += "  ETA " + gnnETA(p)
				}
				fmt.Fprintf(w, "\r%-100s", line)
				open = !p.Final
				if p.Final {
					fmt.Fprintln(w)
				}
			}, func() {
				if open {
					fmt.Fprintln(w)
				}
			}
	}
	last := -1
	return func(p gnn.Progress) {
		tenth := p.Batch * 10 / p.Batches
		if tenth == last && !p.Final {
			return
		}
		last = tenth
		if p.Final {
			last = -1
			fmt.Fprintf(w, "epoch %d/%d: %d/%d batches, %.0f nodes/s, loss %.4f\n", p.Epoch, p.Epochs, p.Batch, p.Batches, p.NodesPerSecond, p.Loss)
			return
		}
		fmt.Fprintf(w, "epoch %d/%d: %d/%d batches, %.0f nodes/s, loss %.4f, ETA %s\n", p.Epoch, p.Epochs, p.Batch, p.Batches, p.NodesPerSecond, p.Loss, gnnETA(p))
	}, func() {}
}

// gnnETA is the time left in the epoch at its rate so far.
func gnnETA(p gnn.Progress) string {
	left := time.Duration(p.Seconds / float64(p.Batch) * float64(p.Batches-p.Batch) * float64(time.Second))
	return formatETA(left, p.Batch > 0)
}

// stopGNNOnSignal closes stop on the first SIGINT or SIGTERM, so that
// training stops at the next batch boundary (the work directory keeps
// the last complete epoch's checkpoint) and the command exits with
// 128+signal; a second signal says so in one line and exits at once
// (the checkpoint is replaced atomically: it stays intact).
func stopGNNOnSignal(args []string, stderr io.Writer) (stop <-chan struct{}, why *evalStop, done func()) {
	c, ch := make(chan struct{}), make(chan os.Signal, 2)
	why = &evalStop{}
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		if s, ok := <-ch; ok {
			why.sig, why.code = s, 128+int(s.(syscall.Signal))
			close(c)
			if s, ok := <-ch; ok {
				fmt.Fprintf(stderr, "%s gnn: second %s: exiting at once; the last checkpoint is intact (resume with: %s gnn %s)\n", prog, signalName(s), prog, resumeArgs(args))
				os.Exit(why.code)
			}
		}
	}()
	return c, why, func() { signal.Stop(ch); close(ch) }
}

// gnnExportMain is realrun export on a GNN work directory: the final
// node representations with their names.
func gnnExportMain(dir string, args []string, stdout, stderr io.Writer) error {
	var out, format, names string
	fs := newFlagSet(prog + " export")
	fs.StringVar(&out, "out", "", "write the node representations to `FILE`, in the graph's node order")
	cli.EnumVar(fs, &format, "format", "", "npy (float32 nodes × dim, and the names in --names), tsv (name<TAB>values) or csv (name,values; RFC 4180) (default: from --out's extension: .npy, .tsv or .txt, .csv)")
	fs.StringVar(&names, "names", "", "with npy: the node names `FILE`, one a line, in row order (default: --out's name with .names.txt for .npy)")
	cli.SetHelp(fs, cli.Help{
		Usage:   "realrun export WORKDIR --out FILE [flags]",
		Summary: "Exports a GNN work directory's node representations: the input of the model's last layer for every node, under layer-wise inference with every neighbour, from the checkpoint of its last epoch (the graph is read again from the input files it was trained on, which must be unchanged).",
		Groups: []cli.FlagGroup{
			{Title: "Export", Flags: []string{"out", "format", "names"}},
			{Title: "Output", Flags: []string{"json", "csv"}},
		},
		Examples: []string{
			"realrun export /tmp/g-sage --out repr.npy     # and repr.names.txt",
			"realrun export /tmp/g-sage --out repr.tsv",
		},
	})
	pf, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	if out == "" {
		return cli.Usagef("realrun export: --out FILE is required")
	}
	f, err := job.ExportFormatOf(out, format, "Out", "Format")
	if err != nil {
		return asUsage(err)
	}
	if f == "pbg" {
		return cli.Usagef("--format pbg: %s is a GNN work directory, exported as npy, tsv or csv", dir)
	}
	if names != "" && f != "npy" {
		return cli.Usagef("--names goes with npy (tsv and csv name each row)")
	}
	if f == "npy" && names == "" {
		names = gnn.NamesPath(out)
	}
	for _, p := range []struct{ flag, path string }{{"out", out}, {"names", names}} {
		if p.path == "" {
			continue
		}
		if err := atomicfile.CheckWritable(p.path); err != nil {
			return cli.Usagef("--%s: %w", p.flag, err)
		}
	}
	res, err := gnn.Export(dir, out, f, names)
	if err != nil {
		var we *gnn.WorkdirError
		if errors.As(err, &we) {
			return fmt.Errorf("%s: %w", dir, we.Err)
		}
		return asUsage(err)
	}
	atomicfile.Announce(stderr, out)
	if names != "" {
		atomicfile.Announce(stderr, names)
	}
	switch pf {
	case cli.JSON:
		return cli.PrintJSON(stdout, res)
	case cli.CSV:
		return gnnExportColumns.CSV([]gnn.ExportOutput{res}).CSV(stdout)
	}
	return gnnExportColumns.Human([]gnn.ExportOutput{res}).Render(stdout)
}

var gnnExportColumns = plots.Columns{
	{Field: "Workdir", Head: "work directory"},
	{Field: "Epoch", Head: "epoch"},
	{Field: "Format", Head: "format"},
	{Field: "Out", Head: "representations"},
	{Field: "Names", Head: "names"},
	{Field: "Nodes", Head: "nodes"},
	{Field: "Dim", Head: "dim"},
}

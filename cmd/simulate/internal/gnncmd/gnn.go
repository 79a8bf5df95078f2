// Package gnncmd is simulate gnn: one epoch of GNN training predicted on a
// device (validate/gnnsim), its flags, its output formats and its
// calibration.
package gnncmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/gnn"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/split"
	"github.com/tierflow/tierflow/validate/gnnsim"
)

// name is the flag set's name: the command and its subcommand.
const name = "simulate gnn"

// Output is what simulate gnn prints with --json.
type Output = gnnsim.Prediction

// numberRules is the rule of every numeric flag of simulate gnn, by name
// (cli.Rules; simulate's own are its numberRules).
var numberRules = map[string]cli.Rule{
	"scale": cli.Positive, "layers": cli.Positive, "hidden": cli.Positive, "heads": cli.Positive, "epoch": cli.Positive,
	"batch": cli.Positive, "micro-batches": cli.Positive, "micro-batch-memory": cli.Positive,
	"graph-seed": cli.Any,
	"seed":       cli.Any,
}

// gnnPresetNames are the generated graphs simulate gnn takes.
func gnnPresetNames() []string {
	var names []string
	for _, p := range data.Presets {
		names = append(names, p.Name)
	}
	return names
}

// Main runs `simulate gnn` on args (those after "gnn"): one epoch of GNN
// training predicted on a device, at each micro-batch count asked for or
// at the count its memory forces. Its error is simulate's to print
// (cli.Exit).
func Main(args []string, stdout, stderr io.Writer) error {
	var w gnnsim.Workload
	var s gnnsim.Settings
	var dataset, graphDir, fanouts, ks, mem, method, dev string
	var scale float64
	var graphSeed, seed int64
	var fullBatch bool
	var calPath string
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	cli.Rules(fs, numberRules)
	fs.StringVar(&dataset, "dataset", "ogbn-products", "generated graph: "+strings.Join(gnnPresetNames(), ", ")+" (Betty's Table 4 shapes; realrun/gnn/data.Generate)")
	fs.Float64Var(&scale, "scale", 0, "the generated graph's share of the real one's nodes and edges, in (0, 1] (default: the preset's own: 1, 1, 0.03, 0.1, 0.02)")
	fs.Int64Var(&graphSeed, "graph-seed", 1, "seed of the generated graph")
	fs.StringVar(&graphDir, "graph", "", "predict a realrun gnn run instead: its work `DIR` (gnn.json names the input files and the settings, its micro-batching included; flags given override the settings)")
	cli.EnumVar(fs, &w.Model, "model", gnn.Defaults.Model, "model: "+strings.Join(gnn.Models, ", "))
	fs.IntVar(&w.Layers, "layers", gnn.Defaults.Layers, "layers")
	fs.IntVar(&w.Hidden, "hidden", gnn.Defaults.Hidden, "hidden width (gat: all heads together)")
	fs.IntVar(&w.Heads, "heads", gnn.Defaults.Heads, "gat's attention heads")
	fs.StringVar(&fanouts, "fanouts", "", "neighbours sampled per layer, the first for the input layer, each a count or full (default: 10,25 at 2 layers, 10 per layer otherwise)")
	fs.IntVar(&w.Batch, "batch", gnn.Defaults.Batch, "training (output) nodes per batch")
	fs.BoolVar(&fullBatch, "full-batch", false, "every training node in one batch, as Betty's experiments (instead of --batch)")
	fs.Int64Var(&seed, "seed", int64(gnn.Defaults.Seed), "the run's seed: the shuffle, the neighbour samples and the splits are the run's own")
	fs.IntVar(&w.Epoch, "epoch", 1, "the epoch whose batches are predicted")
	cli.PresetOrFileVar(fs, &dev, "device", "betty-rtx6000", "device profile: a preset ("+strings.Join(devices.PresetNames(), ", ")+") or a YAML `FILE` (its gnn section: the CPU engine's from calibrate's GNN mode)", devices.PresetNames())
	fs.StringVar(&calPath, "calibrate", "", "first calibrate tierflow's CPU GNN engine on this machine at the workload's shape and model (batches of an epoch the run never trains), write the profile to `FILE`.yaml and predict on it (instead of --device)")
	fs.StringVar(&ks, "micro-batches", "", "micro-batches per batch, a `LIST` such as 1,2,4,8,16 (one row each; default: the fewest whose largest fits --micro-batch-memory)")
	fs.StringVar(&mem, "micro-batch-memory", "", "a micro-batch's memory budget, e.g. 24GB (default: the device's GPU memory, or CPU memory for the cpu engine)")
	cli.EnumVar(fs, &method, "micro-split", string(split.REG), "how a batch's output nodes are split: reg, range, random or metis")
	cli.SetHelp(fs, cli.Help{
		Usage:   "simulate gnn [flags]",
		Summary: "Predicts one epoch of GNN training on a device: the micro-batches its memory forces per batch, the input rows they gather twice, the bytes moved to the compute and the epoch time.",
		Groups: []cli.FlagGroup{
			{Title: "The graph", Flags: []string{"dataset", "scale", "graph-seed", "graph"}},
			{Title: "The model and its batches", Flags: []string{"model", "layers", "hidden", "heads", "fanouts", "batch", "full-batch", "seed", "epoch"}},
			{Title: "Device and micro-batches", Flags: []string{"device", "calibrate", "micro-batches", "micro-batch-memory", "micro-split"}},
			{Title: "Output", Flags: []string{"json", "csv"}},
		},
		Examples: []string{
			"simulate gnn --full-batch --scale 1 --micro-batches 1,2,4,8,16,32,64   # Betty Table 6 / Fig. 12: ogbn-products on the RTX 6000",
			"simulate gnn --dataset ogbn-arxiv --model sage-lstm --micro-batch-memory 2GB # the micro-batches 2 GB forces",
			"simulate gnn --graph DIR --device gnn-cpu.yaml                          # a realrun gnn run on its calibrated CPU engine",
		},
	})
	format, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	w.Seed = uint64(seed)
	if fanouts != "" {
		if w.Fanouts, err = gnn.ParseFanouts(fanouts); err != nil {
			return cli.Usagef("--fanouts: %w", err)
		}
	}
	if ks != "" {
		if s.K, err = cli.IntList(ks); err != nil {
			return cli.Usagef("--micro-batches: %w", err)
		}
	}
	if mem != "" {
		b, err := devices.ParseBytes(mem)
		if err != nil {
			return cli.Usagef("--micro-batch-memory: %w", err)
		}
		if b <= 0 {
			return cli.Usagef("--micro-batch-memory %s: must be positive", mem)
		}
		s.Memory = int64(b)
	}
	if s.Method, err = split.ParseMethod(method); err != nil {
		return cli.Usagef("--micro-split: %s", strings.TrimPrefix(err.Error(), "split: "))
	}
	var prof devices.Profile
	if calPath != "" {
		if set["device"] {
			return cli.Usagef("--calibrate and --device: the calibration is the device; give one or the other")
		}
		if err := atomicfile.CheckWritable(calPath); err != nil {
			return cli.Usagef("--calibrate: %w", err)
		}
	} else if prof, err = devices.Resolve(dev); err != nil {
		return cli.Usagef("--device: %w", err)
	}
	if set["graph"] {
		for _, f := range []string{"dataset", "scale", "graph-seed"} {
			if set[f] {
				return cli.Usagef("--graph and --%s: the work directory names its graph; give one or the other", f)
			}
		}
		o, settings, err := gnn.ReadWorkdir(graphDir)
		if err != nil {
			return cli.Usagef("--graph: %w", err)
		}
		if err := runMicro(settings, set, &s); err != nil {
			return cli.Usagef("--graph %s: %w", graphDir, err)
		}
		g, _, err := data.Load(o.Files)
		if err != nil {
			return cli.Usagef("--graph %s: %w", graphDir, err)
		}
		run := gnnsim.FromOptions(g, o)
		run.Epoch = w.Epoch
		for name, apply := range map[string]func(){
			"model": func() { run.Model = w.Model }, "layers": func() { run.Layers = w.Layers }, "hidden": func() { run.Hidden = w.Hidden },
			"heads": func() { run.Heads = w.Heads }, "fanouts": func() { run.Fanouts = w.Fanouts }, "batch": func() { run.Batch = w.Batch },
			"seed": func() { run.Seed = w.Seed },
		} {
			if set[name] {
				apply()
			}
		}
		w = run
	} else {
		g, err := data.Generate(dataset, scale, uint64(graphSeed))
		if err != nil {
			if set["scale"] {
				return cli.Usagef("--dataset %s --scale %g: %w", dataset, scale, err)
			}
			return cli.Usagef("--dataset: %w", err)
		}
		w.Graph = g
	}
	if set["fanouts"] && w.Model != "mlp" && len(w.Fanouts) != w.Layers {
		return cli.Usagef("--fanouts %s: %d given for %d layers: want one per layer (the first for the input layer)", fanouts, len(w.Fanouts), w.Layers)
	}
	if fullBatch {
		if set["batch"] {
			return cli.Usagef("--full-batch and --batch: give one or the other")
		}
		w.Batch = len(w.Graph.Train)
	}
	if calPath != "" {
		if prof, err = calibrateGNN(w, calPath, stderr); err != nil {
			return cli.AsUsage(gnnFlagNames(err))
		}
	}
	out, err := gnnsim.Predict(w, prof, s)
	if err != nil {
		return cli.AsUsage(gnnFlagNames(err))
	}
	return printGNN(stdout, format, out)
}

// gnnFlagNames says a *gnn.FieldError (an option of the trainer, named
// as simulate gnn's flag of the same name) in flag words.
func gnnFlagNames(err error) error {
	var fe *gnn.FieldError
	if errors.As(err, &fe) {
		if fe.Value == "" {
			return cli.Usagef("--%s: %s", fe.Field, fe.Msg)
		}
		return cli.Usagef("--%s %s: %s", fe.Field, fe.Value, fe.Msg)
	}
	return err
}

func printGNN(w io.Writer, format cli.Format, out Output) error {
	switch format {
	case cli.JSON:
		return cli.PrintJSON(w, out)
	case cli.CSV:
		return gnnColumns.CSV(out.Rows).CSV(w)
	}
	if err := gnnColumns.Human(out.Rows).Render(w); err != nil {
		return err
	}
	sp := out.Spec
	shape := fmt.Sprintf("%s, %d layers, hidden %d", sp.Model, sp.Layers, sp.Hidden)
	if sp.Model == "gat" {
		shape += fmt.Sprintf(", %d heads", sp.Heads)
	}
	fmt.Fprintf(w, "%s on %s (%s engine); %d nodes, %d features, %d classes, %d training nodes; %s, fanouts %s, batches of %d, seed %d, epoch %d; %d parameters\n",
		shape, out.Device, out.Engine, out.Nodes, out.Features, out.Classes, out.TrainNodes, "split "+out.Method, out.Fanouts, out.Batch, out.Seed, out.Epoch, out.Params)
	fmt.Fprintf(w, "budget %.2f GB a micro-batch (k 0: the fewest micro-batches that fit it); GB = 10^9 bytes; peak = the largest micro-batch's step (memory.Batch)\n", float64(out.Budget)/1e9)
	if out.Engine == devices.GNNEngineGPU {
		fmt.Fprintln(w, "micro-batches run one after another, each moving its input features over PCIe before it computes (no overlap)")
	} else {
		fmt.Fprintln(w, "the CPU engine samples, splits and gathers the next batch while this one computes; its micro-batches run one after another")
	}
	for _, r := range out.Rows {
		if !r.Fits {
			fmt.Fprintf(w, "warning: at %d micro-batches a micro-batch needs %.2f GB, more than the %.2f GB budget\n", r.K, float64(r.PeakBytes)/1e9, float64(out.Budget)/1e9)
		}
	}
	return nil
}

// gnnColumns are simulate gnn's table and CSV columns.
var gnnColumns = plots.Columns{
	{Field: "K", Head: "k"},
	{Field: "Batches", Head: "batches"},
	{Field: "MicroBatches", Head: "micro-batches"},
	{Field: "MaxMicroBatches", Head: "most a batch"},
	{Field: "InputRows", Head: "input rows"},
	{Field: "RedundantRows", Head: "redundant rows"},
	{Field: "MicroInputRows"},
	{Field: "SampledEdges"},
	{Field: "Edges"},
	{Field: "TransferBytes", Head: "moved GB", Scale: 1e-9, Prec: 2},
	{Field: "PeakBytes", Head: "peak GB", Scale: 1e-9, Prec: 2},
	{Field: "BatchBytes"},
	{Field: "Fits"},
	{Field: "FLOPs", CSVPrec: 0},
	{Field: "AggregationBytes", CSVPrec: 0},
	{Field: "ComputeSeconds", Head: "compute", Seconds: true, CSVPrec: 4},
	{Field: "DenseSeconds", CSVPrec: 4},
	{Field: "AggregateSeconds", CSVPrec: 4},
	{Field: "StepSeconds", CSVPrec: 4},
	{Field: "OptimizerSeconds", CSVPrec: 4},
	{Field: "TransferSeconds", Head: "transfer", Seconds: true, CSVPrec: 4},
	{Field: "SampleSeconds", CSVPrec: 4},
	{Field: "SplitSeconds", CSVPrec: 4},
	{Field: "StallSeconds", CSVPrec: 4},
	{Field: "EpochSeconds", Head: "epoch", Seconds: true, CSVPrec: 4},
}

// calibrateGNN calibrates the CPU GNN engine at w's shape, writes the
// profile to path with a header saying what was measured, and returns it.
func calibrateGNN(w gnnsim.Workload, path string, stderr io.Writer) (devices.Profile, error) {
	o := w.Options()
	cal, err := calibrate.GNN(w.Graph, o, calibrate.GNNOptions{})
	if err != nil {
		return devices.Profile{}, err
	}
	data, err := cal.Profile.YAML()
	if err != nil {
		return devices.Profile{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Measured by `simulate gnn --calibrate` in %.1f s: tierflow's CPU GNN engine,\n", cal.Seconds)
	fmt.Fprintf(&b, "# %d workers, on %d batches of %d output nodes (fanouts %s) of an epoch the\n# run never trains (each after one untimed):\n", cal.Workers, cal.Batches, cal.Batch, cal.Fanouts)
	fmt.Fprintf(&b, "# gnn.sample: %.0f sampled edges in %.4f s; gnn.gather: %.0f bytes of features\n# and labels copied in %.4f s;\n", cal.Sample.Work, cal.Sample.Seconds, cal.Gather.Work, cal.Gather.Seconds)
	fmt.Fprintf(&b, "# gnn.split: REG splits into %d of batches whose last blocks hold %.0f edges in\n# %.4f s;\n", calibrate.StepMicroBatches, cal.Split.Work, cal.Split.Seconds)
	fmt.Fprintf(&b, "# dense products: an mlp of the same widths over the first layer's rows, %.4g FLOPs\n# in %.4f s; gnn.flops is %s's;\n", cal.Dense.Work, cal.Dense.Seconds, cal.FLOPSFrom)
	for _, m := range cal.Models {
		fmt.Fprintf(&b, "# gnn.aggregation (%s): TrainStep %.4f s, of which the dense rate accounts for\n# %.4f s (%.4g FLOPs); the rest over %.4g aggregation bytes;\n", m.Model, m.Seconds, m.DenseSeconds, m.FLOPs, m.AggregationBytes)
	}
	fmt.Fprintf(&b, "# gnn.step: the same batches in %d micro-batches (by range), %.4f s, of which the\n# rates above account for %.4f s; the rest over %d micro-batches;\n", calibrate.StepMicroBatches, cal.Step.Seconds, cal.Step.WorkSeconds, cal.Step.MicroBatches)
	fmt.Fprintf(&b, "# gnn.optimizer: Adam and zeroing over %.0f parameter bytes in %.4f s.\n# cpu.memory is this machine's; the disk is not measured.\n", cal.Optimizer.Work, cal.Optimizer.Seconds)
	if err := atomicfile.Write(path, func(wr io.Writer) error {
		if _, err := io.WriteString(wr, b.String()); err != nil {
			return err
		}
		_, err := wr.Write(data)
		return err
	}); err != nil {
		return devices.Profile{}, cli.Usagef("--calibrate: %w", err)
	}
	atomicfile.Announce(stderr, path)
	return cal.Profile, nil
}

// runMicro sets, from a work directory's settings, the micro-batching
// its run trained with (micro-batches, micro-batch-memory, micro-split)
// where the flags do not say otherwise.
func runMicro(settings map[string]string, set map[string]bool, s *gnnsim.Settings) error {
	if v, ok := settings["micro-batches"]; ok && !set["micro-batches"] && !set["micro-batch-memory"] {
		k, err := strconv.Atoi(v)
		if err != nil || k < 1 {
			return fmt.Errorf("setting micro-batches %q is not a count", v)
		}
		s.K = []int{k}
	}
	if v, ok := settings["micro-batch-memory"]; ok && !set["micro-batches"] && !set["micro-batch-memory"] {
		b, err := strconv.ParseInt(v, 10, 64)
		if err != nil || b < 1 {
			return fmt.Errorf("setting micro-batch-memory %q is not a size in bytes", v)
		}
		s.K, s.Memory = nil, b
	}
	if v, ok := settings["micro-split"]; ok && !set["micro-split"] {
		m, err := split.ParseMethod(v)
		if err != nil {
			return fmt.Errorf("setting micro-split: %w", err)
		}
		s.Method = m
	}
	return nil
}

package main

import (
	"flag"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/job"
)

// shapeFlags registers the realrun flags that set the training shape
// (validate.ShapeFields) and the graph's partition rows, with realrun's
// defaults, so that `realrun calibrate` with a run's flags measures the
// shape that run trains at: the model (--model, or --operator with
// --comparator) and its objective (--loss, --margin, --adversarial,
// --regularizer, --reg-coef: the engine is measured on the run's own
// kernels and loss) are realrun's own flags, put into o by the returned
// modelFlags' apply after parsing.
func shapeFlags(fs *flag.FlagSet, o *job.Options) *modelFlags {
	*o = job.Defaults
	cli.EnumVar(fs, &o.Dataset, "dataset", job.Defaults.Dataset, "the run's generated dataset: "+presetNames()+" (its nodes ÷ --p are the partition rows measured)")
	fs.Float64Var(&o.Scale, "scale", 0, "the run's --scale (default: "+presetScales()+")")
	fs.StringVar(&o.Edges, "edges", "", "the run's edge `FILE` instead of --dataset (its work directory must hold it already: a run on it has read it)")
	fs.StringVar(&o.Workdir, "workdir", "", "the run's work `DIR`, if not the default: the engine is measured on the graph's own buckets there (built now for a --dataset when it does not exist yet; the run reuses it)")
	var mf modelFlags
	mf.register(fs, o)
	fs.IntVar(&o.Dim, "dim", job.Defaults.Dim, "the run's embedding dimension d")
	fs.IntVar(&o.P, "p", job.Defaults.P, "the run's node partitions")
	fs.IntVar(&o.C, "c", job.Defaults.C, "the run's partitions in memory: each ordering's bucket sequence is replayed with this buffer")
	cli.EnumVar(fs, &o.Ordering, "ordering", job.Defaults.Ordering, "the run's edge-bucket ordering (without --orderings): "+strings.Join(orderings.Names(), ", "))
	cli.EnumVar(fs, &o.Orderings, "orderings", "", "the run's comma-separated orderings (--compare-sim): the engine is measured on each one's own bucket sequence")
	fs.Int64Var(&o.OrderingSeed, "ordering-seed", 0, "the run's --ordering-seed")
	fs.IntVar(&o.Epochs, "epochs", job.Defaults.Epochs, "the run's epochs: the engine is timed for as long as they train at its rate (every ordering's, with --orderings), up to a minute")
	fs.IntVar(&o.Batch, "batch", job.Defaults.Batch, "the run's edges per batch")
	fs.IntVar(&o.Negatives, "negatives", job.Defaults.Negatives, "the run's negatives per chunk")
	fs.IntVar(&o.Chunk, "chunk", 0, "the run's edges per chunk (0: as many as --negatives)")
	fs.Float64Var(&o.DegreeFrac, "degree-frac", job.Defaults.DegreeFrac, "the run's share of negatives drawn by degree (default -1: as realrun chooses)")
	fs.IntVar(&o.Workers, "workers", job.Defaults.Workers, "the run's training goroutines")
	cli.MachineDefault(fs, "workers", cpusDefault)
	fs.BoolVar(&o.FP32, "fp32", false, "with --engine cuda: the run's --fp32 (plain FP32 products; TF32 is the default)")
	cli.EnumVar(fs, &o.Engine, "engine", job.Defaults.Engine, "the run's engine: cpu (the CPU engine at the shape, its interference with I/O, and the GPU where the build has one) or cuda (the disk and the GPU alone: the CUDA engine's runs need no CPU engine figures)")
	return &mf
}

// calibrateHelp is `realrun calibrate --help`.
var calibrateHelp = cli.Help{
	Usage: "realrun calibrate [the run's training flags] [--dir DIR] [--out FILE]",
	Summary: "Measures this machine into a device profile for simulate --device and realrun --compare-sim --device: the disk holding --dir (O_DIRECT transfers of the run's partition size), " +
		"the CPU engine at exactly the training shape the given realrun flags train at (synthetic partitions of the run's rows; recorded as cpu.train_shape), how the two slow each other, " +
		"and the GPU where the build has one. Give it the run's own training flags: a rate measured at one shape does not carry to another, and --compare-sim --device names any difference in one line.",
	Groups: []cli.FlagGroup{
		{Title: "The run's training shape (realrun's flags and defaults)", Flags: []string{"engine", "fp32", "dataset", "scale", "edges", "workdir", "dim", "p", "batch", "negatives", "chunk", "degree-frac", "workers"}},
		{Title: "The run's orderings (on a work directory, the engine is also measured on each ordering's own bucket sequence, loaded as its Plan loads it: consecutive buckets that share rows find them in the caches, so each ordering trains at its own rate: its rate over the bench's, in rounds taken in turn with the bench, times the bench's rate, recorded as cpu.train.<model>.orderings)", Flags: []string{"c", "ordering", "orderings", "ordering-seed", "epochs"}},
		{Title: "The run's model and loss (realrun's flags; the engine is measured on their kernels, and the profile records the model in cpu.train.<model> — a PBG pair in cpu.train.pair — and cpu.train_shape.model)", Flags: []string{"model", "operator", "comparator", "loss", "margin", "adversarial", "regularizer", "reg-coef"}},
		{Title: "Disk", Flags: []string{"dir", "size", "disk-read", "disk-write", "emulate-disk"}},
		{Title: "Output", Flags: []string{"out", "name", "json"}},
		{Title: "Probes (the devices as the engine drives them: the first buckets of each ordering's Plan run for real, scored against the calibration's prediction of them)", Flags: []string{"probe"}},
		{Title: "Drift (a machine measured again and again: the spread of a profile then holds how far its rates moved over hours, not only during this calibration's minutes)", Flags: []string{"history", "history-since"}},
	},
	Examples: []string{
		"realrun calibrate --dataset twitter --scale 0.002 --dim 64 --p 8 --out cal.yaml",
		"realrun --dataset twitter --scale 0.002 --dim 64 --p 8 --c 3 --compare-sim --device cal.yaml",
		"realrun calibrate --dataset twitter --scale 0.002 --dim 64 --p 8 --history ~/.tierflow-history.json --out cal.yaml",
	},
}

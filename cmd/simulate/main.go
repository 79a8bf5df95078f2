// Command simulate predicts one training epoch for every edge-bucket
// ordering at a given number of partitions p and buffer capacity c: swaps,
// loads, writes and bytes against Marius' lower bound, and — from a
// discrete-event model of the system on a device profile — epoch time, I/O
// stall, GPU utilisation and the ratio to a bound no schedule can beat; as
// `simulate sweep` it ranks every p, c and device whose buffer fits. The
// work is done by package sim (sim.Request) and sim/sweep; this main parses
// flags and prints.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/cmd/simulate/internal/gnncmd"
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/internal/chrometrace"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

const prog = "simulate"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Output is what simulate prints with --json (fields may be added, none
// renamed).
type Output = sim.Prediction

func run(args []string, stdout, stderr io.Writer) int {
	return cli.Exit(stderr, prog, simulate(args, stdout, stderr))
}

// scenarioGroups are the flag groups simulate and simulate sweep share.
var scenarioGroups = []cli.FlagGroup{
	{Title: "What to train", Flags: []string{"graph", "dataset", "resident-nodes", "dim", "model", "batch", "negatives", "chunk", "edges", "skew"}},
	{Title: "System and hardware", Flags: []string{"system", "device", "p", "c", "staleness", "no-prefetch", "sync-writes", "write-buffers", "memory-share", "in-memory", "checkpoint-every", "gpu-memory", "no-micro-batching"}},
	{Title: "Orderings", Flags: []string{"orderings", "policy", "ordering-seed", "seed"}},
	{Title: "Output", Flags: []string{"json", "csv", "plot", "trace", "trace-max-spans", "plan", "top"}},
}

func simulate(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "sweep" {
		return sweepMain(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "gnn" {
		return gnncmd.Main(args[1:], stdout, stderr)
	}
	var q sim.Request
	var planPath, plotPath, tracePath string
	var traceSpans int
	var pq sim.PBGRequest
	var graphDir string
	fs := newFlagSet(prog)
	fs.IntVar(&q.P, "p", sim.DefaultP, "number of node partitions (default 32; with an --edges histogram, its p; with --graph, the directory's)")
	addGraphFlag(fs, &graphDir)
	fs.IntVar(&q.C, "c", 0, "buffer capacity in partitions, 2 ≤ c ≤ p (default: the system's own, marius 8; with --graph, the directory's)")
	cli.PresetOrFileVar(fs, &q.Device, "device", "p3.2xlarge", "device profile: a preset ("+strings.Join(devices.PresetNames(), ", ")+") or a YAML `FILE`", devices.PresetNames())
	addScenarioFlags(fs, &q)
	fs.StringVar(&planPath, "plan", "", "write the Plan JSON of the (single) selected ordering to `FILE`")
	fs.StringVar(&plotPath, "plot", "", "draw epoch time per ordering and the utilisation timelines to `FILE`.png or .svg")
	cli.TraceFlags(fs, &tracePath, &traceSpans)
	fs.IntVar(&pq.Machines, "machines", 0, "simulate PyTorch-BigGraph (--system pbg, its CPU trainer) on `M` machines: 1 swaps partitions to the machine's disk, more share them through partition servers over the network (default device pbg-paper)")
	fs.StringVar(&pq.Bandwidth, "bandwidth", "", "with --machines: each machine's network bandwidth, e.g. 10GB/s (default: the device's)")
	fs.IntVar(&pq.Epochs, "epochs", 0, "with --machines: report the time of `N` epochs (default 10, as PBG's tables)")
	of := registerOut(fs)
	cli.SetHelp(fs, cli.Help{
		Usage:       "simulate [flags] | simulate sweep [flags] | simulate gnn [flags]",
		Summary:     "Predicts one epoch for every edge-bucket ordering at (p, c): swaps, bytes, epoch time, stall and GPU utilisation.",
		Subcommands: [][2]string{{"sweep", "rank every ordering, p, c and device whose buffer fits (simulate sweep --help)"}, {"gnn", "one epoch of GNN training on a device: micro-batches, redundant input rows, bytes, epoch time (simulate gnn --help)"}},
		Groups:      append(slices.Clone(scenarioGroups), cli.FlagGroup{Title: "Several machines (PyTorch-BigGraph's distributed mode)", Flags: []string{"machines", "bandwidth", "epochs"}}),
		Examples: []string{
			"simulate --p 32 --c 8                                   # Marius on p3.2xlarge, Freebase86m d=100",
			"simulate --machines 8 --p 16 --system pbg --dataset freebase   # PBG Table 3: occupancy, network bytes",
			"simulate --system legend --device legend-a100 --p 16 --dataset twitter",
			"simulate --orderings beta --plan beta.json --json       # keep the Plan for realrun --plan",
		},
	})
	format, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	if done, err := of.printed(fs, stdout); done {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	trained, err := useGraph(&q, graphDir, set)
	if err != nil {
		return err
	}
	if set["machines"] || set["bandwidth"] || set["epochs"] {
		return machinesMain(stdout, format, q, pq, set, *of.wide)
	}
	var took []string
	if trained != nil {
		took = fromGraph(&q, *trained, set, true)
	}
	if planPath != "" {
		if err := atomicfile.CheckWritable(planPath); err != nil {
			return cli.Usagef("--plan: %w", err)
		}
	}
	if plotPath != "" {
		if err := plots.CheckPath(plotPath); err != nil {
			return cli.Usagef("--plot: %w", err)
		}
	}
	if err := cli.CheckTrace(tracePath, traceSpans); err != nil {
		return err
	}
	q.Plan, q.Trace = planPath != "", tracePath != ""
	out, err := q.Predict()
	cli.RenderAll(out.Notes)
	out.System.Description = cli.Render(out.System.Description)
	if err != nil {
		if len(took) > 0 {
			err = fmt.Errorf("%w (with --graph %s's %s)", err, graphDir, strings.Join(took, " "))
		}
		return cli.AsUsage(err)
	}
	if trained != nil {
		out.Notes = append([]string{graphNote(graphDir, *trained, took, nil)}, out.Notes...)
	}
	if planPath != "" && len(out.Plans) == 1 {
		if err := atomicfile.Write(planPath, out.Plans[0].WriteJSON); err != nil {
			return cli.Usagef("--plan: %w", err)
		}
		atomicfile.Announce(stderr, planPath)
	}
	if plotPath != "" {
		if err := plot(plotPath, out); err != nil {
			return cli.Usagef("--plot: %w", err)
		}
		atomicfile.Announce(stderr, plotPath)
	}
	if tracePath != "" {
		var procs []chrometrace.Process
		for _, r := range out.Results {
			if r.Trace != nil {
				procs = append(procs, chrometrace.Process{Name: fmt.Sprintf("predicted: %s (%s on %s)", r.Ordering, out.System.Name, out.Device), Trace: *r.Trace})
			}
		}
		if err := cli.WriteTrace(tracePath, procs, traceSpans, stderr); err != nil {
			return err
		}
	}
	return print(stdout, format, out, *of.wide)
}

// addScenarioFlags registers the flags simulate and simulate sweep share:
// everything but p, c, the device and the outputs.
func addScenarioFlags(fs *flag.FlagSet, q *sim.Request) {
	cli.EnumVar(fs, &q.Orderings, "orderings", "all", "comma-separated orderings, or all")
	cli.EnumVar(fs, &q.Policy, "policy", string(orderings.Belady), "eviction policy: belady, lru or fifo")
	cli.EnumVar(fs, &q.System, "system", "marius", "system model: "+strings.Join(sim.SystemNames(), ", "))
	cli.EnumVar(fs, &q.Dataset, "dataset", "freebase86m", "dataset preset: "+strings.Join(workload.DatasetNames(), ", "))
	fs.IntVar(&q.Dim, "dim", 100, "embedding dimension d")
	fs.Int64Var(&q.ResidentNodes, "resident-nodes", 0, "`N` of the dataset's nodes are of unpartitioned entity types (PyTorch-BigGraph's partitions: 1): the partitions hold the others, and their table stays in the buffer's memory for the whole epoch, read once at its start and written at its end (0: none; --graph: the work directory's own)")
	cli.EnumVar(fs, &q.Model, "model", "", "score function: "+workload.ModelNames()+" (default: the dataset's; the realrun system needs the device's cpu.train cost of it: realrun calibrate --model)")
	fs.IntVar(&q.Batch, "batch", 0, "edges per batch (default: the papers' 50000; fb15k 10000)")
	fs.IntVar(&q.Negatives, "negatives", 0, "negatives per chunk (default 1000)")
	fs.IntVar(&q.Chunk, "chunk", 0, "edges per chunk (0: as many as --negatives)")
	fs.IntVar(&q.Staleness, "staleness", 0, "batches in flight (default: the system's; marius 16)")
	fs.BoolVar(&q.NoPrefetch, "no-prefetch", false, "turn the lookahead reader off: load each partition only when its bucket is next (with --sync-writes: Marius run with prefetching off)")
	fs.BoolVar(&q.SyncWrites, "sync-writes", false, "write an evicted partition back before loading its replacement")
	fs.IntVar(&q.WriteBuffers, "write-buffers", 0, "evicted partitions the async writer may hold; a load waits for a free one (default: the system's; marius: unbounded, Marius's released code has 1)")
	fs.StringVar(&q.CheckpointEvery, "checkpoint-every", "", "also checkpoint inside the epoch every `DURATION` (30s) or N buckets (64b): training waits while the dirty resident partitions are written")
	cli.PresetOrFileVar(fs, &q.Edges, "edges", "uniform", "edges per bucket: uniform, skewed, or a histogram JSON `FILE` from the real engine (its p only; --graph DIR for any p)", []string{"uniform", "skewed"})
	fs.Float64Var(&q.Skew, "skew", sim.DefaultSkew, "exponent α of --edges skewed (partition i weighs (i+1)^-α; 0: every partition alike)")
	fs.Int64Var(&q.Seed, "ordering-seed", 0, "seed of the seeded orderings (beta: 0 is the canonical order; random), as realrun --ordering-seed")
	fs.Int64Var(&q.Seed, "seed", 0, "the same as --ordering-seed (simulate has no data to seed)")
	fs.StringVar(&q.GPUMemory, "gpu-memory", "", "the GPU's memory, e.g. 12GB (default: the device's): GPU buffers must fit in it, and a batch that does not fit what they leave is split into micro-batches")
	fs.BoolVar(&q.NoMicroBatching, "no-micro-batching", false, "keep a batch that does not fit in GPU memory whole (warn) instead of splitting it into micro-batches")
}

func print(w io.Writer, format cli.Format, out Output, wide bool) error {
	switch format {
	case cli.JSON:
		return cli.PrintJSON(w, out)
	case cli.CSV:
		if out.HasSpread() {
			return withSpread(columnsFor(out), true).CSV(spreadResults(out)).CSV(w)
		}
		return columnsFor(out).CSV(out.Results).CSV(w)
	}
	cols := columnsFor(out).Select(wide)
	if !slices.ContainsFunc(out.Results, func(r sim.Result) bool { return r.MicroBatches > 1 }) {
		cols = cols.DropHuman("MicroBatches") // every batch fits: no column of zeros
	}
	table := cols.Human(out.Results)
	if out.HasSpread() {
		table = withSpread(cols, true).Human(spreadResults(out))
	}
	if err := table.Render(w); err != nil {
		return err
	}
	tr := out.Training
	fmt.Fprintf(w, "%s on %s; %s: %d train edges, d=%d, %s, batch %d, %d negatives%s\n",
		out.System.Name, out.Device, describe(out.Dataset, out.Graph), out.TrainEdges, out.Dim, tr.Model, tr.Batch, tr.Negatives, chunkText(tr))
	if out.System.Partitioned {
		fmt.Fprintf(w, "p=%d c=%d policy=%s ordering seed %d; lower bound %d swaps (Marius eq. 2), BETA formula %d swaps (eq. 3)\n",
			out.P, out.C, out.Policy, out.Seed, out.LowerBoundSwaps, out.BETAFormula)
		state := "× d=%d × 4 B × 2 (float32 + Adagrad)"
		if out.System.RowwiseAdagrad {
			state = "× (d=%d + 1) × 4 B (float32 + row-wise Adagrad)"
		}
		nodes := "nodes"
		if out.ResidentNodes > 0 {
			nodes = "partitioned nodes"
		}
		fmt.Fprintf(w, "partition: %.3f GB = ceil(%d %s / %d) "+state+"; GB = 10^9 bytes; writes exclude the %d final flushes, write GB include them\n",
			sim.GB(out.PartitionBytes), out.Nodes-out.ResidentNodes, nodes, out.P, out.Dim, out.C)
		if out.ResidentNodes > 0 {
			fmt.Fprintf(w, "resident: %d nodes%s held in %s memory beside the buffer: %s (their rows and optimizer state), read once at the epoch's start and written once at its end (in read and write GB) and with every checkpoint\n",
				out.ResidentNodes, residentTypes(out.Graph), out.System.BufferIn(), sizeText(out.ResidentBytes))
		}
	}
	if len(out.Results) > 0 {
		fmt.Fprintf(w, "÷ bound: epoch over max(compute alone, I/O of the fill + lower-bound swaps) — no schedule beats 1.00\n")
		if r := out.Results[0]; r.MicroBatches > 1 {
			fmt.Fprintf(w, "micro-batches: a batch does not fit the %.2f GB of GPU memory left to it; each is split into %d of at most %.2f GB, gathering %d rows more per epoch (%.1f GB moved, in the epoch time)\n",
				sim.GB(r.BatchBudgetBytes), r.MicroBatches, sim.GB(r.BatchPeakBytes), r.DuplicatedRows, sim.GB(r.ExtraTransferBytes))
		}
		if out.HasSpread() {
			fmt.Fprintln(w, spreadNote)
		}
		for _, msg := range out.Results[0].Warnings {
			fmt.Fprintf(w, "warning: %s\n", msg)
		}
	}
	for _, s := range out.Skipped {
		fmt.Fprintf(w, "not valid here: %s: %s\n", s.Ordering, s.Reason)
	}
	for _, n := range out.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// residentTypes names a graph's resident entity types (" (types a, b)";
// "" when it has none or is not a graph).
func residentTypes(g *sim.Graph) string {
	if g == nil || len(g.ResidentTypes) == 0 {
		return ""
	}
	kind := "types"
	if len(g.ResidentTypes) == 1 {
		kind = "type"
	}
	return fmt.Sprintf(" (%s %s)", kind, strings.Join(g.ResidentTypes, ", "))
}

// sizeText is n bytes in GB, or in MB (10^6 bytes) below 1 GB.
func sizeText(n int64) string {
	if n < 1e9 {
		return fmt.Sprintf("%.3f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.3f GB", sim.GB(n))
}

// columnsFor are resultColumns with the resident table's size when the
// prediction has one.
func columnsFor(out Output) plots.Columns {
	if out.ResidentBytes <= 0 {
		return resultColumns
	}
	return append(slices.Clone(resultColumns), plots.Column{Field: "ResidentBytes", Head: "resident GB", Scale: 1e-9, Prec: 3, Wide: true})
}

// chunkText is what a summary line says of the chunks: nothing when they
// are as many edges as the negatives (the default).
func chunkText(tr workload.Training) string {
	if tr.ChunkSize == 0 || tr.ChunkSize == tr.Negatives {
		return ""
	}
	return fmt.Sprintf(", chunks of %d edges", tr.ChunkSize)
}

// describe names what was simulated in a summary line: a dataset preset
// by name, the user's graph by name and its own sizes.
func describe(dataset string, g *sim.Graph) string {
	if g == nil {
		return dataset
	}
	return fmt.Sprintf("graph %s (%d nodes, %d relations)", g.Name, g.Nodes, g.Relations)
}

// plot draws the epoch time of every ordering (compute and stall) above
// one GPU utilisation strip per ordering, in the same order, on a shared
// time axis: the strip's length is the epoch, its fill how busy the GPU is.
func plot(path string, out Output) error {
	if len(out.Results) == 0 {
		return fmt.Errorf("nothing to plot: no ordering is valid here")
	}
	longest := 0.0
	for _, r := range out.Results {
		longest = max(longest, r.EpochSeconds)
	}
	unit, secs := plots.DurationUnit(longest) // one unit for the whole figure
	bars := plots.BarChart{Title: fmt.Sprintf("Epoch time: %s, %s, %s d=%d", out.System.Name, out.Device, out.Dataset, out.Dim), YLabel: unit}
	epoch := plots.BarSeries{Name: "epoch"}
	stall := plots.BarSeries{Name: "I/O stall"}
	strips := plots.Strips{Title: "GPU utilisation over the epoch", XLabel: unit, YLabel: "GPU busy"}
	for _, r := range out.Results {
		bars.Categories = append(bars.Categories, r.Ordering)
		epoch.Values = append(epoch.Values, r.EpochSeconds/secs)
		stall.Values = append(stall.Values, r.StallSeconds/secs)
		s := plots.Series{Name: fmt.Sprintf("%s %.0f%%", r.Ordering, 100*r.GPUUtilization)}
		for _, pt := range r.Timeline {
			s.X = append(s.X, (pt.Start+pt.End)/2/secs)
			s.Y = append(s.Y, pt.GPU)
		}
		strips.Series = append(strips.Series, s)
	}
	bars.Series = []plots.BarSeries{epoch, stall}
	return plots.SaveStack(path, bars, strips)
}

// resultColumns are `simulate`'s table and CSV columns; the human table
// leaves the Wide ones out (--wide shows them).
var resultColumns = plots.Columns{
	{Field: "Ordering", Head: "ordering"},
	{Field: "Swaps", Head: "swaps"},
	{Field: "SwapsOverLowerBound", Head: "÷ lower bound", Prec: 2, CSVPrec: 4},
	{Field: "Loads", Head: "loads", Wide: true},
	{Field: "Writes", Head: "writes", Wide: true},
	{Field: "FinalWrites"},
	{Field: "ReadBytes", Head: "read GB", Scale: 1e-9, Prec: 1, Wide: true},
	{Field: "WriteBytes", Head: "write GB", Scale: 1e-9, Prec: 1, Wide: true},
	{Field: "PrefetchableSwaps", Head: "prefetchable swaps", Wide: true},
	{Field: "MicroBatches", Head: "micro-batches", Wide: true},
	{Field: "EpochSeconds", Head: "epoch", Seconds: true, CSVPrec: 3},
	{Field: "StallSeconds", Head: "stall", Seconds: true, CSVPrec: 3},
	{Field: "ComputeSeconds", CSVPrec: 3},
	{Field: "GPUUtilization", Head: "GPU util %", Scale: 100, Prec: 0, CSVPrec: 4},
	{Field: "BoundSeconds", CSVPrec: 3},
	{Field: "EpochOverBound", Head: "÷ bound", Prec: 2, CSVPrec: 4},
}

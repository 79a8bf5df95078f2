// Command simulate predicts one training epoch for every edge-bucket
// ordering at a given number of partitions p and buffer capacity c: swaps,
// loads, writes and bytes against Marius' lower bound, and — from a
// discrete-event model of the system on a device profile — epoch time, I/O
// stall, GPU utilisation and the ratio to a bound no schedule can beat — and,
// as `simulate sweep`, ranks every p, c and device whose buffer fits.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/sim"
)

const prog = "simulate"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Result is one ordering's prediction; the JSON names are the public
// contract (fields may be added, none renamed).
type Result struct {
	Ordering            string  `json:"ordering"`
	Swaps               int     `json:"swaps"`
	SwapsOverLowerBound float64 `json:"swaps_over_lower_bound"`
	Loads               int     `json:"loads"`
	Writes              int     `json:"writes"`
	FinalWrites         int     `json:"final_writes"`
	ReadBytes           int64   `json:"read_bytes"`
	WriteBytes          int64   `json:"write_bytes"`
	PrefetchableSwaps   int     `json:"prefetchable_swaps"`

	EpochSeconds   float64             `json:"epoch_seconds"`
	StallSeconds   float64             `json:"stall_seconds"`
	ComputeSeconds float64             `json:"compute_seconds"`
	GPUUtilization float64             `json:"gpu_utilization"`
	BoundSeconds   float64             `json:"bound_seconds"`
	EpochOverBound float64             `json:"epoch_over_bound"`
	Batches        int                 `json:"batches"`
	Events         int                 `json:"events"`
	Resources      []sim.ResourceUsage `json:"resources"`
	Timeline       []sim.TimelinePoint `json:"timeline"`
	Warnings       []string            `json:"warnings,omitempty"`
}

// Skipped is an ordering that is not defined for (p, c).
type Skipped struct {
	Ordering string `json:"ordering"`
	Reason   string `json:"reason"`
}

// Output is the whole answer of one invocation.
type Output struct {
	P               int          `json:"p"`
	C               int          `json:"c"`
	LowerBoundSwaps int          `json:"lower_bound_swaps"`
	BETAFormula     int          `json:"beta_formula_swaps"`
	System          sim.System   `json:"system"`
	Device          string       `json:"device"`
	Dataset         string       `json:"dataset"`
	Nodes           int64        `json:"nodes"`
	TrainEdges      int64        `json:"train_edges"`
	Dim             int          `json:"dim"`
	Training        sim.Training `json:"training"`
	Edges           string       `json:"edges"`
	Policy          string       `json:"policy"`
	Seed            int64        `json:"seed"`
	PartitionBytes  int64        `json:"partition_bytes"`
	Results         []Result     `json:"results"`
	Skipped         []Skipped    `json:"skipped"`
}

type options struct {
	p, c, dim                  int
	orderings, policy, dataset string
	plan, system, device       string
	model, edges, plot         string
	seed                       int64
	batch, negatives           int
	staleness, writeBuffers    int
	skew                       float64
	noPrefetch, syncWrites     bool
}

func run(args []string, stdout, stderr io.Writer) int {
	return cli.Exit(stderr, prog, simulate(args, stdout))
}

func simulate(args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "sweep" {
		return sweep(args[1:], stdout)
	}
	var o options
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.IntVar(&o.p, "p", 32, "number of node partitions")
	fs.IntVar(&o.c, "c", 0, "buffer capacity in partitions, 2 ≤ c ≤ p (0: the system's own; marius: 8)")
	fs.StringVar(&o.device, "device", "p3.2xlarge", "device profile: a preset ("+strings.Join(devices.PresetNames(), ", ")+") or a YAML `FILE`")
	addScenarioFlags(fs, &o)
	fs.StringVar(&o.plan, "plan", "", "write the Plan JSON of the (single) selected ordering to `FILE`")
	fs.StringVar(&o.plot, "plot", "", "draw epoch time per ordering and the utilisation timelines to `FILE`.png or .svg")
	format, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	sc, names, err := scenario(o)
	if err != nil {
		return err
	}
	out := Output{
		System: sc.System, Device: sc.Profile.Name,
		Dataset: sc.Dataset.Name, Nodes: sc.Dataset.Nodes, TrainEdges: sc.Dataset.TrainEdges(),
		Dim: o.dim, Training: sc.Training, Edges: o.edges,
		Policy: string(sc.Policy), Seed: o.seed,
		Results: []Result{}, Skipped: []Skipped{},
	}
	if sc.System.Partitioned {
		c := sc.Capacity()
		out.P, out.C = o.p, c
		out.LowerBoundSwaps = orderings.LowerBound(o.p, c)
		out.BETAFormula = orderings.BETASwaps(o.p, c)
		out.PartitionBytes = sc.System.PartitionBytes(sc.Dataset.Nodes, o.p, o.dim)
	} else {
		names = []string{""}
	}
	for _, name := range names {
		sc.Ordering = name
		cfg, err := sc.Config()
		var na *orderings.NotApplicableError
		if errors.As(err, &na) {
			out.Skipped = append(out.Skipped, Skipped{Ordering: name, Reason: na.Reason})
			continue
		}
		if err != nil {
			return cli.Usagef("%v", err)
		}
		if o.plan != "" {
			if err := cli.WriteFileAtomic(o.plan, cfg.Plan.WriteJSON); err != nil {
				return cli.Usagef("--plan: %v", err)
			}
		}
		rep, err := sim.Run(cfg)
		if err != nil {
			return cli.Usagef("%v", err)
		}
		out.Results = append(out.Results, resultOf(rep, out.LowerBoundSwaps))
	}
	if o.plot != "" {
		if err := plot(o.plot, out); err != nil {
			return cli.Usagef("--plot: %v", err)
		}
	}
	return print(stdout, format, out)
}

// addScenarioFlags registers the flags simulate and simulate sweep share:
// everything but p, c, the device and the outputs.
func addScenarioFlags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.orderings, "orderings", "all", "comma-separated orderings, or all")
	fs.StringVar(&o.policy, "policy", string(orderings.Belady), "eviction policy: belady, lru or fifo")
	fs.StringVar(&o.system, "system", "marius", "system model: "+strings.Join(sim.SystemNames(), ", "))
	fs.StringVar(&o.dataset, "dataset", "freebase86m", "dataset preset: "+strings.Join(sim.DatasetNames(), ", "))
	fs.IntVar(&o.dim, "dim", 100, "embedding dimension d")
	fs.StringVar(&o.model, "model", "", "score function: dot, distmult or complex (default: the dataset's)")
	fs.IntVar(&o.batch, "batch", 0, "edges per batch (default: the papers' 50000; fb15k 10000)")
	fs.IntVar(&o.negatives, "negatives", 0, "negatives per chunk (default 1000)")
	fs.IntVar(&o.staleness, "staleness", 0, "batches in flight (default: the system's; marius 16)")
	fs.BoolVar(&o.noPrefetch, "no-prefetch", false, "turn the lookahead reader off: load each partition only when its bucket is next (with --sync-writes: Marius run with prefetching off)")
	fs.BoolVar(&o.syncWrites, "sync-writes", false, "write an evicted partition back before loading its replacement")
	fs.IntVar(&o.writeBuffers, "write-buffers", 0, "evicted partitions the async writer may hold; a load waits for a free one (default: the system's; marius: unbounded, Marius's released code has 1)")
	fs.StringVar(&o.edges, "edges", "uniform", "edges per bucket: uniform, skewed, or a histogram JSON `FILE` from the real engine")
	fs.Float64Var(&o.skew, "skew", sim.DefaultSkew, "exponent α of --edges skewed (partition i weighs (i+1)^-α)")
	fs.Int64Var(&o.seed, "seed", 0, "seed for seeded orderings (beta: 0 is the canonical order)")
}

// scenario turns the flags into a Scenario and the list of orderings,
// rejecting bad input with a UsageError that names the flag.
func scenario(o options) (sim.Scenario, []string, error) {
	var sc sim.Scenario
	sys, err := sim.LookupSystem(o.system)
	if err != nil {
		return sc, nil, cli.Usagef("--system: %v", err)
	}
	prof, err := devices.Resolve(o.device)
	if err != nil {
		return sc, nil, cli.Usagef("--device: %v", err)
	}
	ds, err := sim.LookupDataset(o.dataset)
	if err != nil {
		return sc, nil, cli.Usagef("--dataset: %v", err)
	}
	if o.dim < 1 {
		return sc, nil, cli.Usagef("--dim %d: the dimension must be at least 1", o.dim)
	}
	policy, err := orderings.ParsePolicy(o.policy)
	if err != nil {
		return sc, nil, cli.Usagef("--policy: %v", err)
	}
	tr := sim.DefaultTraining(ds, o.dim)
	if o.model != "" {
		if tr.Model, err = sim.ParseModel(o.model); err != nil {
			return sc, nil, cli.Usagef("--model: %v", err)
		}
	}
	for _, f := range []struct {
		name string
		v    int
		dst  *int
	}{{"batch", o.batch, &tr.Batch}, {"negatives", o.negatives, &tr.Negatives}, {"staleness", o.staleness, &sys.Staleness}, {"write-buffers", o.writeBuffers, &sys.WriteBuffers}} {
		if f.v < 0 {
			return sc, nil, cli.Usagef("--%s %d: must be positive", f.name, f.v)
		}
		if f.v > 0 {
			*f.dst = f.v
		}
	}
	if o.noPrefetch {
		sys.Prefetch = false
	}
	if o.syncWrites {
		sys.SyncWrites = true
	}
	sc = sim.Scenario{System: sys, Profile: prof, Dataset: ds, Training: tr, P: o.p, C: o.c, Policy: policy, Seed: o.seed}
	switch o.edges {
	case "uniform", "skewed":
		sc.Edges = sim.Distribution(o.edges)
		if o.skew < 0 {
			return sc, nil, cli.Usagef("--skew %v: must not be negative", o.skew)
		}
		sc.Skew = o.skew
	default:
		f, err := os.Open(o.edges)
		if err != nil {
			return sc, nil, cli.Usagef("--edges: %q is neither uniform, skewed nor a readable histogram file: %v", o.edges, err)
		}
		h, err := sim.ReadHistogram(f)
		f.Close()
		if err != nil {
			return sc, nil, cli.Usagef("--edges %s: %v", o.edges, err)
		}
		sc.Histogram = &h
	}
	if !sys.Partitioned {
		if o.plan != "" {
			return sc, nil, cli.Usagef("--plan: system %s keeps every parameter resident and has no Plan", sys.Name)
		}
		return sc, nil, nil
	}
	c := sc.Capacity()
	if sys.Capacity > 0 && o.c > 0 && o.c != sys.Capacity {
		return sc, nil, cli.Usagef("--c %d: system %s has a buffer of %d partitions by design", o.c, sys.Name, sys.Capacity)
	}
	if err := orderings.CheckPC(o.p, c); err != nil {
		return sc, nil, cli.Usagef("--p %d --c %d: %v", o.p, c, err)
	}
	names := orderings.Names()
	if o.orderings != "all" {
		names = cli.SplitList(o.orderings)
		if len(names) == 0 {
			return sc, nil, cli.Usagef("--orderings: empty list")
		}
		for _, n := range names {
			if _, err := orderings.Lookup(n); err != nil {
				return sc, nil, cli.Usagef("--orderings: %v", err)
			}
		}
	}
	if o.plan != "" && len(names) != 1 {
		return sc, nil, cli.Usagef("--plan writes one Plan: select exactly one ordering with --orderings")
	}
	return sc, names, nil
}

func resultOf(r sim.Report, lb int) Result {
	ratio := 1.0
	if lb > 0 {
		ratio = float64(r.Swaps) / float64(lb)
	}
	res := Result{
		Ordering: r.Ordering, Swaps: r.Swaps, SwapsOverLowerBound: ratio,
		Loads: r.Loads, Writes: r.Writes, FinalWrites: r.FinalWrites,
		ReadBytes: r.ReadBytes, WriteBytes: r.WriteBytes, PrefetchableSwaps: r.PrefetchableSwaps,
		EpochSeconds: r.EpochSeconds, StallSeconds: r.StallSeconds, ComputeSeconds: r.ComputeSeconds,
		GPUUtilization: r.GPUUtilization, BoundSeconds: r.BoundSeconds,
		Batches: r.Batches, Events: r.Events, Resources: r.Resources, Timeline: r.Timeline, Warnings: r.Warnings,
	}
	if res.Ordering == "" {
		res.Ordering = "none"
	}
	if r.BoundSeconds > 0 {
		res.EpochOverBound = r.EpochSeconds / r.BoundSeconds
	}
	return res
}

func f64(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

func print(w io.Writer, format cli.Format, out Output) error {
	switch format {
	case cli.JSON:
		return cli.PrintJSON(w, out)
	case cli.CSV:
		t := plots.Table{Header: []string{"ordering", "swaps", "swaps_over_lower_bound", "loads", "writes", "final_writes", "read_bytes", "write_bytes", "prefetchable_swaps",
			"epoch_seconds", "stall_seconds", "compute_seconds", "gpu_utilization", "bound_seconds", "epoch_over_bound"}}
		for _, r := range out.Results {
			t.Rows = append(t.Rows, []string{r.Ordering, strconv.Itoa(r.Swaps), f64(r.SwapsOverLowerBound, 4),
				strconv.Itoa(r.Loads), strconv.Itoa(r.Writes), strconv.Itoa(r.FinalWrites),
				strconv.FormatInt(r.ReadBytes, 10), strconv.FormatInt(r.WriteBytes, 10), strconv.Itoa(r.PrefetchableSwaps),
				f64(r.EpochSeconds, 3), f64(r.StallSeconds, 3), f64(r.ComputeSeconds, 3), f64(r.GPUUtilization, 4), f64(r.BoundSeconds, 3), f64(r.EpochOverBound, 4)})
		}
		return t.CSV(w)
	}
	t := plots.Table{Header: []string{"ordering", "swaps", "÷ lower bound", "loads", "writes", "read GB", "write GB", "prefetchable swaps",
		"epoch min", "stall min", "GPU util %", "÷ bound"}}
	for _, r := range out.Results {
		t.Rows = append(t.Rows, []string{r.Ordering, strconv.Itoa(r.Swaps), f64(r.SwapsOverLowerBound, 2),
			strconv.Itoa(r.Loads), strconv.Itoa(r.Writes), f64(sim.GB(r.ReadBytes), 1), f64(sim.GB(r.WriteBytes), 1),
			strconv.Itoa(r.PrefetchableSwaps), f64(r.EpochSeconds/60, 1), f64(r.StallSeconds/60, 1), f64(100*r.GPUUtilization, 0), f64(r.EpochOverBound, 2)})
	}
	if err := t.Render(w); err != nil {
		return err
	}
	tr := out.Training
	fmt.Fprintf(w, "%s on %s; %s: %d train edges, d=%d, %s, batch %d, %d negatives\n",
		out.System.Name, out.Device, out.Dataset, out.TrainEdges, out.Dim, tr.Model, tr.Batch, tr.Negatives)
	if out.System.Partitioned {
		fmt.Fprintf(w, "p=%d c=%d policy=%s; lower bound %d swaps (Marius eq. 2), BETA formula %d swaps (eq. 3)\n",
			out.P, out.C, out.Policy, out.LowerBoundSwaps, out.BETAFormula)
		state := "× d=%d × 4 B × 2 (float32 + Adagrad)"
		if out.System.RowwiseAdagrad {
			state = "× (d=%d + 1) × 4 B (float32 + row-wise Adagrad)"
		}
		fmt.Fprintf(w, "partition: %.3f GB = ceil(%d nodes / %d) "+state+"; GB = 10^9 bytes; writes exclude the %d final flushes, write GB include them\n",
			sim.GB(out.PartitionBytes), out.Nodes, out.P, out.Dim, out.C)
	}
	if len(out.Results) > 0 {
		fmt.Fprintf(w, "÷ bound: epoch over max(compute alone, I/O of the fill + lower-bound swaps) — no schedule beats 1.00\n")
		for _, msg := range out.Results[0].Warnings {
			fmt.Fprintf(w, "warning: %s\n", msg)
		}
	}
	for _, s := range out.Skipped {
		fmt.Fprintf(w, "not valid here: %s: %s\n", s.Ordering, s.Reason)
	}
	return nil
}

// plot draws the epoch time of every ordering (compute and stall) above
// the GPU utilisation timelines.
func plot(path string, out Output) error {
	if len(out.Results) == 0 {
		return fmt.Errorf("nothing to plot: no ordering is valid here")
	}
	bars := plots.BarChart{Title: fmt.Sprintf("Epoch time: %s, %s, %s d=%d", out.System.Name, out.Device, out.Dataset, out.Dim), YLabel: "minutes"}
	epoch := plots.BarSeries{Name: "epoch"}
	stall := plots.BarSeries{Name: "I/O stall"}
	lines := plots.LineChart{Title: "GPU utilisation over the epoch", XLabel: "minutes", YLabel: "GPU busy (fraction)"}
	for _, r := range out.Results {
		bars.Categories = append(bars.Categories, r.Ordering)
		epoch.Values = append(epoch.Values, r.EpochSeconds/60)
		stall.Values = append(stall.Values, r.StallSeconds/60)
		s := plots.Series{Name: r.Ordering}
		for _, pt := range r.Timeline {
			s.X = append(s.X, (pt.Start+pt.End)/120)
			s.Y = append(s.Y, pt.GPU)
		}
		lines.Series = append(lines.Series, s)
	}
	bars.Series = []plots.BarSeries{epoch, stall}
	return plots.SaveStack(path, bars, lines)
}

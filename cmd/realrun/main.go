// Command realrun trains graph embeddings out of core for real: node
// embeddings and their Adagrad state live on disk in p partitions, at most
// c of them in memory, buckets are trained in a Plan's order, and every
// partition read and write is measured (O_DIRECT, bypassing the page
// cache) into the same Report the simulator predicts, plus MRR and Hits@k.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/store"
)

const prog = "realrun"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// DefaultScales make one epoch of each preset take one to three minutes
// on two cores with the default training shape (twitter measured: 109 s;
// the others hold about as many edges; fb15k is small at full size).
var DefaultScales = map[string]float64{"twitter": 0.01, "livejournal": 0.2, "freebase86m": 0.04, "fb15k": 1}

// Output is what realrun prints with --json.
type Output struct {
	Ordering       string          `json:"ordering"`
	Policy         string          `json:"policy"`
	P              int             `json:"p"`
	C              int             `json:"c"`
	PartitionBytes int64           `json:"partition_bytes"`
	Dataset        string          `json:"dataset"`
	Workdir        string          `json:"workdir"`
	Nodes          int64           `json:"nodes"`
	TrainEdges     int64           `json:"train_edges"`
	Model          string          `json:"model"`
	Dim            int             `json:"dim"`
	Batch          int             `json:"batch"`
	Negatives      int             `json:"negatives"`
	DegreeFrac     float64         `json:"degree_frac"`
	Workers        int             `json:"workers"`
	Prefetch       bool            `json:"prefetch"`
	DirectIO       bool            `json:"direct_io"`
	Histogram      string          `json:"histogram"`
	Epochs         []realrun.Epoch `json:"epochs"`
}

type options struct {
	dataset, edges, valid, test string
	modelName, ordering, policy string
	workdir, timeline, export   string
	exportFormat                string
	scale, degreeFrac, lr       float64
	dim, epochs, p, c           int
	batch, negatives, chunk     int
	workers                     int
	seed                        int64
	noPrefetch                  bool
	progress                    string
	orderingList, device, plot  string
	compareSim, resume          bool
	planFile                    string
	engine, buffer              string
}

func run(args []string, stdout, stderr io.Writer) int {
	return cli.Exit(stderr, prog, realrunMain(args, stdout, stderr))
}

func realrunMain(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "calibrate" {
		return calibrateMain(args[1:], stdout, stderr)
	}
	var o options
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.StringVar(&o.dataset, "dataset", "twitter", "generated dataset: "+presetNames())
	fs.Float64Var(&o.scale, "scale", 0, "shrink the dataset preset by this factor, 0 < f ≤ 1 (default: twitter 0.01, livejournal 0.2, freebase86m 0.04, fb15k 1)")
	fs.StringVar(&o.edges, "edges", "", "train on this edge `FILE` (src dst or src rel dst per line) instead of a generated dataset")
	fs.StringVar(&o.valid, "valid", "", "validation edges `FILE` (with --edges)")
	fs.StringVar(&o.test, "test", "", "test edges `FILE` (with --edges; otherwise a seeded 90/5/5 split)")
	fs.StringVar(&o.modelName, "model", "", "score function: dot, distmult or complex (default: the dataset's)")
	fs.IntVar(&o.dim, "dim", 100, "embedding dimension d")
	fs.IntVar(&o.epochs, "epochs", 1, "epochs to train")
	fs.IntVar(&o.p, "p", 16, "node partitions")
	fs.IntVar(&o.c, "c", 4, "partitions in memory (2 ≤ c ≤ p)")
	fs.StringVar(&o.ordering, "ordering", "beta", "edge-bucket ordering: "+strings.Join(orderings.Names(), ", "))
	fs.StringVar(&o.policy, "policy", "belady", "eviction policy: belady, lru or fifo")
	fs.IntVar(&o.batch, "batch", 10000, "edges per batch")
	fs.IntVar(&o.negatives, "negatives", 100, "negative nodes shared by each chunk")
	fs.IntVar(&o.chunk, "chunk", 0, "edges per chunk (0: as many as --negatives)")
	fs.Float64Var(&o.degreeFrac, "degree-frac", 0.5, "share of negatives drawn by degree (the rest uniformly)")
	fs.Float64Var(&o.lr, "lr", 0.1, "Adagrad learning rate")
	fs.IntVar(&o.workers, "workers", runtime.NumCPU(), "training goroutines (1 makes training deterministic)")
	fs.Int64Var(&o.seed, "seed", 1, "seed for generation, relabelling, initialisation, sampling and evaluation")
	fs.BoolVar(&o.noPrefetch, "no-prefetch", false, "load each partition only when every earlier bucket is done")
	fs.StringVar(&o.planFile, "plan", "", "execute this saved Plan `FILE` (simulate --plan writes one) instead of building --ordering; its p and c win")
	fs.BoolVar(&o.resume, "resume", false, "continue from the work directory's last complete epoch checkpoint (start afresh if there is none)")
	fs.StringVar(&o.workdir, "workdir", "", "work `DIR` for partitions and buckets (default: under the system temp dir)")
	fs.StringVar(&o.timeline, "timeline", "", "plot compute and I/O over time to `FILE`.png or .svg")
	fs.StringVar(&o.export, "export", "", "write the trained node embeddings to `FILE` (.npy)")
	fs.StringVar(&o.exportFormat, "export-format", "npy", "npy or tsv")
	fs.StringVar(&o.progress, "progress", "auto", "progress display: auto, bar, lines or none")
	fs.StringVar(&o.orderingList, "orderings", "", "with --compare-sim: comma-separated orderings to run one after another")
	fs.BoolVar(&o.compareSim, "compare-sim", false, "also simulate each run's Plan and print predicted against measured")
	fs.StringVar(&o.device, "device", "", "calibrated device profile `FILE` for --compare-sim (default: calibrate now)")
	fs.StringVar(&o.plot, "plot", "", "with --compare-sim: predicted-vs-measured scatter plot to `FILE`.png or .svg")
	fs.StringVar(&o.engine, "engine", "cpu", "training engine: cpu, or cuda (a build with -tags cuda: make build-cuda)")
	fs.StringVar(&o.buffer, "buffer", "", "with --engine cuda: gpu (partition slots in GPU memory, default) or host (partitions in host memory, rows shipped per batch)")
	format, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	if err := realrun.CheckEngine(o.engine, o.buffer); err != nil {
		return cli.Usagef("%v", err)
	}
	if o.compareSim && o.engine != "cpu" {
		return cli.Usagef("--compare-sim predicts the cpu engine only; it cannot check --engine %s yet", o.engine)
	}
	spec, h, plan, err := configure(&o)
	if err != nil {
		return err
	}
	if o.compareSim {
		return compareMain(o, spec, h, plan, stdout, stderr, format)
	}
	if o.orderingList != "" || o.device != "" || o.plot != "" {
		return cli.Usagef("--orderings, --device and --plot go with --compare-sim")
	}
	st, reused, err := openOrPrepare(spec)
	if err != nil {
		return asUsage(err)
	}
	degrees, err := st.Degrees()
	if err != nil {
		return err
	}
	progress := pickProgress(o.progress, stderr)
	eng, err := realrun.NewCompute(realrun.EngineOptions{Engine: o.engine, Buffer: o.buffer, Hyper: h, Store: st, Degrees: degrees, Seed: spec.Seed, C: plan.C})
	if err != nil {
		return err
	}
	if c, ok := eng.(io.Closer); ok {
		defer c.Close()
	}
	first := 1
	switch {
	case o.resume && reused && st.Current > 0:
		if err := realrun.Resume(st, eng); err != nil {
			return err
		}
		first = st.Current + 1
		fmt.Fprintf(stderr, "resuming after epoch %d (checkpoint verified)\n", st.Current)
	case reused:
		if err := st.InitPartitions(spec.Seed, 0.1); err != nil {
			return err
		}
	}
	out := Output{
		Ordering: plan.Ordering, Policy: plan.Policy, P: plan.P, C: plan.C, PartitionBytes: st.M.PartitionBytes,
		Dataset: st.M.Source, Workdir: st.Dir, Nodes: st.M.Nodes, TrainEdges: st.M.Train,
		Model: string(h.Model), Dim: h.Dim, Batch: h.Batch, Negatives: h.Negatives, DegreeFrac: h.DegreeFrac,
		Workers: h.Workers, Prefetch: !o.noPrefetch, DirectIO: store.DirectIO, Histogram: st.HistogramPath(),
	}
	for e := first; e <= o.epochs; e++ {
		ep, err := realrun.RunEpoch(st, plan, eng, !o.noPrefetch, spec.Seed, e, progress)
		if err != nil {
			return err
		}
		ev := realrun.DefaultEval
		ev.Seed, ev.Workers = spec.Seed, h.Workers
		q, err := realrun.Evaluate(st, h.Model, eng.Relations(), degrees, ev)
		if err != nil {
			return err
		}
		ep.Quality, ep.MRR, ep.HitsAt1, ep.HitsAt3, ep.HitsAt10 = q, q.MRR, q.HitsAt1, q.HitsAt3, q.HitsAt10
		if format == cli.Table {
			ep.IO, ep.Buckets = ep.IO[:0:0], nil
		}
		out.Epochs = append(out.Epochs, ep)
	}
	if o.timeline != "" {
		if err := drawTimeline(o.timeline, out); err != nil {
			return cli.Usagef("--timeline: %v", err)
		}
	}
	if o.export != "" {
		if err := export(o.export, o.exportFormat, st); err != nil {
			return cli.Usagef("--export: %v", err)
		}
	}
	return print(stdout, format, out)
}

// asUsage turns the engine's bad-input errors into usage errors (exit 2).
func asUsage(err error) error {
	var bad *realrun.BadInput
	if errors.As(err, &bad) {
		return cli.Usagef("%v", err)
	}
	return err
}

func newFlagSet(name string) *flag.FlagSet { return flag.NewFlagSet(name, flag.ContinueOnError) }

func presetNames() string {
	var names []string
	for _, p := range graph.Presets {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// configure validates the flags and builds the data spec, the training
// hyper-parameters and the Plan.
func configure(o *options) (realrun.DataSpec, realrun.Hyper, *orderings.Plan, error) {
	var spec realrun.DataSpec
	var h realrun.Hyper
	if err := orderings.CheckPC(o.p, o.c); err != nil {
		return spec, h, nil, cli.Usagef("--p %d --c %d: %v", o.p, o.c, err)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"dim", o.dim}, {"epochs", o.epochs}, {"batch", o.batch}, {"negatives", o.negatives}, {"workers", o.workers}} {
		if f.v < 1 {
			return spec, h, nil, cli.Usagef("--%s %d: must be at least 1", f.name, f.v)
		}
	}
	if o.chunk < 0 {
		return spec, h, nil, cli.Usagef("--chunk %d: must not be negative", o.chunk)
	}
	if !(o.degreeFrac >= 0 && o.degreeFrac <= 1) {
		return spec, h, nil, cli.Usagef("--degree-frac %v: want a share between 0 and 1", o.degreeFrac)
	}
	if !(o.lr > 0) {
		return spec, h, nil, cli.Usagef("--lr %v: must be positive", o.lr)
	}
	if o.exportFormat != "npy" && o.exportFormat != "tsv" {
		return spec, h, nil, cli.Usagef("--export-format %q: want npy or tsv", o.exportFormat)
	}
	policy, err := orderings.ParsePolicy(o.policy)
	if err != nil {
		return spec, h, nil, cli.Usagef("--policy: %v", err)
	}
	modelName := o.modelName
	source := o.dataset
	if o.edges == "" {
		pr, err := graph.LookupPreset(o.dataset)
		if err != nil {
			return spec, h, nil, cli.Usagef("--dataset: %v", err)
		}
		if modelName == "" {
			modelName = pr.Model
		}
		if o.scale == 0 {
			o.scale = DefaultScales[pr.Name]
			if o.scale == 0 {
				o.scale = 0.01
			}
		}
	} else {
		source = filepath.Base(o.edges)
		if modelName == "" {
			modelName = "dot"
		}
	}
	if o.edges == "" && (o.valid != "" || o.test != "") {
		return spec, h, nil, cli.Usagef("--valid and --test go with --edges")
	}
	kind, err := model.ParseKind(modelName)
	if err != nil {
		return spec, h, nil, cli.Usagef("--model: %v", err)
	}
	if err := kind.CheckDim(o.dim); err != nil {
		return spec, h, nil, cli.Usagef("--dim %d: %v", o.dim, err)
	}
	var plan *orderings.Plan
	if o.planFile != "" {
		f, err := os.Open(o.planFile)
		if err != nil {
			return spec, h, nil, cli.Usagef("--plan: %v", err)
		}
		plan, err = orderings.ReadJSON(f)
		f.Close()
		if err != nil {
			return spec, h, nil, cli.Usagef("--plan %s: %v", o.planFile, err)
		}
		o.p, o.c = plan.P, plan.C
	} else {
		plan, err = orderings.Build(o.ordering, o.p, o.c, policy, o.seed)
		if err != nil {
			return spec, h, nil, cli.Usagef("--ordering: %v", err)
		}
	}
	workdir := o.workdir
	if workdir == "" {
		workdir = filepath.Join(os.TempDir(), "tierflow-"+source)
	}
	spec = realrun.DataSpec{Dataset: o.dataset, Scale: o.scale, Edges: o.edges, Valid: o.valid, Test: o.test,
		Seed: o.seed, P: o.p, Dim: o.dim, Model: string(kind), Workdir: workdir}
	h = realrun.Hyper{Model: kind, Dim: o.dim, Batch: o.batch, Negatives: o.negatives, ChunkSize: o.chunk,
		DegreeFrac: o.degreeFrac, LR: float32(o.lr), Workers: o.workers}
	return spec, h, plan, nil
}

// openOrPrepare reuses a work directory built from the same data with the
// same layout (its partitions are re-initialised), or builds it.
func openOrPrepare(spec realrun.DataSpec) (*store.Store, bool, error) {
	if _, err := store.Open(spec.Workdir); errors.Is(err, store.ErrVersion) {
		// Never replace data this build cannot read.
		return nil, false, &realrun.BadInput{Err: fmt.Errorf("--workdir: %v; remove it or choose another --workdir", err)}
	}
	if spec.Edges == "" {
		if st, err := store.Open(spec.Workdir); err == nil {
			m := st.M
			if m.Source == fmt.Sprintf("%s@%g", spec.Dataset, spec.Scale) && m.P == spec.P && m.Dim == spec.Dim && m.Model == spec.Model && m.Seed == spec.Seed {
				return st, true, nil
			}
		}
	}
	st, err := realrun.Prepare(spec)
	return st, false, err
}

func pickProgress(mode string, w io.Writer) realrun.Progress {
	switch mode {
	case "none":
		return realrun.Discard
	case "bar":
		return realrun.BarProgress(w)
	case "lines":
		return realrun.LineProgress(w)
	}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return realrun.BarProgress(w)
		}
	}
	return realrun.LineProgress(w)
}

func export(path, format string, st *store.Store) error {
	names := func(i int64) string { return strconv.FormatInt(i, 10) }
	if data, err := os.ReadFile(filepath.Join(st.Dir, "ids.tsv")); err == nil {
		table := map[int64]string{}
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			id, name, ok := strings.Cut(sc.Text(), "\t")
			if n, err := strconv.ParseInt(id, 10, 64); ok && err == nil {
				table[n] = name
			}
		}
		names = func(i int64) string { return table[i] }
	}
	return cli.WriteFileAtomic(path, func(w io.Writer) error { return realrun.Export(w, st, format, names) })
}

func f64(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

func print(w io.Writer, format cli.Format, out Output) error {
	header := []string{"epoch", "epoch_seconds", "stall_seconds", "compute_seconds", "swaps", "loads", "writes", "final_writes",
		"read_bytes", "write_bytes", "edges_per_second", "loss", "mrr", "hits_at_1", "hits_at_3", "hits_at_10"}
	switch format {
	case cli.JSON:
		return cli.PrintJSON(w, out)
	case cli.CSV:
		t := plots.Table{Header: header}
		for _, e := range out.Epochs {
			t.Rows = append(t.Rows, []string{strconv.Itoa(e.Epoch), f64(e.EpochSeconds, 3), f64(e.StallSeconds, 3), f64(e.ComputeSeconds, 3),
				strconv.Itoa(e.Swaps), strconv.Itoa(e.Loads), strconv.Itoa(e.Writes), strconv.Itoa(e.FinalWrites),
				strconv.FormatInt(e.ReadBytes, 10), strconv.FormatInt(e.WriteBytes, 10), f64(e.EdgesPerSecond, 0), f64(e.Loss, 2),
				f64(e.MRR, 4), f64(e.HitsAt1, 4), f64(e.HitsAt3, 4), f64(e.HitsAt10, 4)})
		}
		return t.CSV(w)
	}
	t := plots.Table{Header: []string{"epoch", "epoch s", "stall s", "compute s", "swaps", "loads", "writes", "read MB", "write MB", "edges/s", "MRR", "Hits@1", "Hits@10"}}
	for _, e := range out.Epochs {
		t.Rows = append(t.Rows, []string{strconv.Itoa(e.Epoch), f64(e.EpochSeconds, 1), f64(e.StallSeconds, 1), f64(e.ComputeSeconds, 1),
			strconv.Itoa(e.Swaps), strconv.Itoa(e.Loads), strconv.Itoa(e.Writes), f64(float64(e.ReadBytes)/1e6, 1), f64(float64(e.WriteBytes)/1e6, 1),
			f64(e.EdgesPerSecond, 0), f64(e.MRR, 3), f64(e.HitsAt1, 3), f64(e.HitsAt10, 3)})
	}
	if err := t.Render(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %d nodes, %d training edges; %s d=%d, batch %d, %d negatives (%.0f%% by degree), %d workers\n",
		out.Dataset, out.Nodes, out.TrainEdges, out.Model, out.Dim, out.Batch, out.Negatives, 100*out.DegreeFrac, out.Workers)
	fmt.Fprintf(w, "%s order, p=%d c=%d, partitions of %.1f MB (O_DIRECT: %v), prefetch %v; work directory %s\n",
		out.Ordering, out.P, out.C, float64(out.PartitionBytes)/1e6, out.DirectIO, out.Prefetch, out.Workdir)
	if len(out.Epochs) > 0 {
		q := out.Epochs[len(out.Epochs)-1].Quality
		fmt.Fprintf(w, "evaluation: %s ranking of %d test edges, both sides; random MRR %.4f; bucket histogram for simulate --edges: %s\n",
			q.Mode, q.Edges, q.Baseline, out.Histogram)
	}
	return nil
}

// drawTimeline plots, for the last epoch, compute and I/O busy over time.
func drawTimeline(path string, out Output) error {
	if len(out.Epochs) == 0 {
		return fmt.Errorf("no epoch to plot")
	}
	e := out.Epochs[len(out.Epochs)-1]
	lc := plots.LineChart{Title: fmt.Sprintf("realrun epoch %d: %s, p=%d c=%d", e.Epoch, out.Ordering, out.P, out.C), XLabel: "seconds", YLabel: "busy (fraction)"}
	series := map[string]*plots.Series{"compute": {Name: "compute"}, "read": {Name: "disk read"}, "write": {Name: "disk write"}}
	for _, pt := range e.Timeline {
		x := (pt.Start + pt.End) / 2
		for k, v := range map[string]float64{"compute": pt.GPU, "read": pt.Read, "write": pt.Write} {
			s := series[k]
			s.X, s.Y = append(s.X, x), append(s.Y, v)
		}
	}
	lc.Series = []plots.Series{*series["compute"], *series["read"], *series["write"]}
	return plots.SaveStack(path, lc)
}

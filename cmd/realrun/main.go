// Command realrun trains graph embeddings out of core for real: node
// embeddings and their Adagrad state live on disk in p partitions, at most
// c of them in memory, buckets are trained in a Plan's order, and every
// partition read and write is measured (O_DIRECT, bypassing the page
// cache) into the same Report the simulator predicts, plus MRR and Hits@k.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/internal/chrometrace"
	"github.com/tierflow/tierflow/internal/diskcap"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/report"
)

const prog = "realrun"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Output is what realrun prints with --json.
type Output = job.Output

// cmdOptions are the flags beyond job.Options: outputs and the
// comparison with the simulator.
type cmdOptions struct {
	job.Options
	trace              string
	traceSpans         int
	timeline, progress string
	device, plot       string
	compareSim         bool
	cpuprofile         string
	diskFlags
	dist distFlags
	out  outFlags   // --wide, --config, --print-config (config.go)
	mf   modelFlags // --operator, --comparator and the objective's (objflags.go)
	// resume is the command line's arguments with --resume, for a run
	// stopped part-way.
	resume string
	// schema is --schema's file (applySchema reads it into Schema).
	schema string
}

// diskFlags are --disk-read, --disk-write and --emulate-disk (realrun and
// realrun calibrate): kernel limits on the work directory's disk.
type diskFlags struct{ read, write, emulate string }

func (d *diskFlags) register(fs *flag.FlagSet, which string) {
	fs.StringVar(&d.read, "disk-read", "", "hold reads from "+which+" to `RATE` (e.g. 300MB/s) with a kernel cgroup limit (root)")
	fs.StringVar(&d.write, "disk-write", "", "hold writes to "+which+" to `RATE` (e.g. 300MB/s) with a kernel cgroup limit (root)")
	cli.PresetOrFileVar(fs, &d.emulate, "emulate-disk", "", "hold reads and writes to a device profile's disk figures: a `PRESET` (p3.2xlarge: the paper's EBS volume) or FILE.yaml", devices.PresetNames())
}

// limitDisk checks the disk flags and, when a limit is set, moves the
// process into a cgroup that holds the disk under dir to it (diskcap),
// saying so on stderr. Every bad value is refused before any group is
// made. The group (nil: no limit) must be released on every exit path.
func limitDisk(d diskFlags, dir string, stderr io.Writer) (diskcap.Limits, *diskcap.Group, error) {
	l, err := diskcap.Spec{DiskRead: d.read, DiskWrite: d.write, EmulateDisk: d.emulate}.Limits()
	if err != nil || l.Zero() {
		return l, nil, asUsage(err)
	}
	g, err := diskcap.Apply(dir, l)
	if err != nil {
		return l, nil, asUsage(err)
	}
	// A reader that goes away (realrun … | head) would kill the process
	// with SIGPIPE before it releases the group: ignored, the write fails
	// with EPIPE instead and the run ends through its deferred release.
	signal.Ignore(syscall.SIGPIPE)
	fmt.Fprintf(stderr, "disk limit: %s on device %s (cgroup %s)\n", l, g.Device, g.Path)
	return g.Limits, g, nil
}

// diskDir is the directory whose disk --workdir's limit applies to: the
// default work directories live under the system temp dir.
func diskDir(workdir string) string {
	if workdir == "" {
		return os.TempDir()
	}
	return workdir
}

// cpusDefault is what the --workers flags default to (runtime.NumCPU),
// as the generated reference shows it (cli.MachineDefault).
const cpusDefault = "the number of CPUs the process may use"

// exitOnSignal, while a calibration or a comparison runs and nothing else
// handles SIGINT and SIGTERM, removes the calibrations' scratch
// directories (calibrate.RemoveScratch: partition-sized files, tens of
// GB at scale) and releases the disk limit g (if any) on the first of
// them, and exits with 128+signal, as the default action would have.
func exitOnSignal(g *diskcap.Group, stderr io.Writer) (done func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		if s, ok := <-ch; ok {
			err := errors.Join(calibrate.RemoveScratch(), g.Release())
			what := "calibration scratch removed"
			if g != nil {
				what += ", disk limit released"
			}
			fmt.Fprintf(stderr, "%s: %s: exiting (%s%s)\n", prog, signalName(s), what, errNote(err))
			os.Exit(128 + int(s.(syscall.Signal)))
		}
	}()
	return func() { signal.Stop(ch); close(ch) }
}

func errNote(err error) string {
	if err == nil {
		return ""
	}
	return ": " + strings.ReplaceAll(err.Error(), "\n", " ")
}

func run(args []string, stdout, stderr io.Writer) int {
	err := realrunMain(args, stdout, stderr)
	code := cli.Exit(stderr, prog, err)
	if se := (*realrun.StopError)(nil); errors.As(err, &se) && se.Code != 0 {
		return se.Code
	}
	if se := (*stoppedError)(nil); errors.As(err, &se) && se.code != 0 {
		return se.code
	}
	return code
}

// stoppedError ends a command stopped by a signal with the exit status
// 128+signal.
type stoppedError struct {
	msg  string
	code int
}

func (e *stoppedError) Error() string { return e.msg }

// stopOnSignal closes stop on the first SIGINT or SIGTERM, so that
// training checkpoints at the next bucket boundary and ends with the exit
// status 128+signal; a second signal says so in one line on stderr and
// exits at once (the last committed checkpoint stays intact: nothing is
// ever written over it), after releasing the disk limit g (if any).
func stopOnSignal(o *job.Options, args []string, stderr io.Writer, g *diskcap.Group) (done func()) {
	stop, ch := make(chan struct{}), make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	o.Stop, o.StopCode = stop, new(int)
	go func() {
		if s, ok := <-ch; ok {
			*o.StopCode = 128 + int(s.(syscall.Signal))
			close(stop)
			if s, ok := <-ch; ok {
				g.Release() // waits for a release already under way
				fmt.Fprintf(stderr, "%s: second %s: exiting at once without a new checkpoint; the last committed one is intact (resume with: %s %s)\n",
					prog, signalName(s), prog, resumeArgs(args))
				os.Exit(*o.StopCode)
			}
		}
	}()
	return func() { signal.Stop(ch); close(ch) }
}

// signalName is SIGINT or SIGTERM.
func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

func realrunMain(args []string, stdout, stderr io.Writer) (err error) {
	if len(args) > 0 && args[0] == "calibrate" {
		return calibrateMain(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "trainer" {
		return trainerMain(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "etcd-member" {
		return memberMain(args[1:], stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "eval" || args[0] == "export") {
		return workdirMain(args[0], args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "gnn" {
		return gnnMain(args[1:], stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "neighbors" || args[0] == "predict") {
		return queryMain(args[0], args[1:], stdout, stderr)
	}
	var o cmdOptions
	fs := newFlagSet(prog)
	cli.EnumVar(fs, &o.Dataset, "dataset", job.Defaults.Dataset, "generated dataset: "+presetNames())
	fs.Float64Var(&o.Scale, "scale", 0, "shrink the dataset preset by this factor, 0 < f ≤ 1 (default: "+presetScales()+")")
	fs.StringVar(&o.Edges, "edges", "", "train on this edge `FILE` (src dst or src rel dst per line) instead of a generated dataset")
	fs.StringVar(&o.Valid, "valid", "", "validation edges `FILE` (with --edges)")
	fs.StringVar(&o.Test, "test", "", "test edges `FILE` (with --edges; otherwise a seeded 90/5/5 split)")
	registerInputFlags(fs, &o.Input)
	fs.StringVar(&o.schema, "schema", "", schemaHelp)
	o.mf.register(fs, &o.Options)
	fs.IntVar(&o.Dim, "dim", job.Defaults.Dim, "embedding dimension d")
	fs.IntVar(&o.Epochs, "epochs", job.Defaults.Epochs, "epochs to train")
	fs.IntVar(&o.P, "p", job.Defaults.P, "node partitions")
	fs.IntVar(&o.C, "c", job.Defaults.C, "partitions in memory (2 ≤ c ≤ p)")
	cli.EnumVar(fs, &o.Ordering, "ordering", job.Defaults.Ordering, "edge-bucket ordering: "+strings.Join(orderings.Names(), ", "))
	cli.EnumVar(fs, &o.Policy, "policy", job.Defaults.Policy, "eviction policy: belady, lru or fifo")
	fs.IntVar(&o.Batch, "batch", job.Defaults.Batch, "edges per batch")
	fs.IntVar(&o.Negatives, "negatives", job.Defaults.Negatives, "negative nodes shared by each chunk")
	fs.IntVar(&o.Chunk, "chunk", 0, "edges per chunk (0: as many as --negatives)")
	fs.Float64Var(&o.DegreeFrac, "degree-frac", job.Defaults.DegreeFrac, "share of negatives drawn by degree, the rest uniformly (default -1: 0 for knowledge graphs, 0.5 otherwise)")
	fs.Float64Var(&o.LR, "lr", job.Defaults.LR, "Adagrad learning rate (default 0: 0.3 for knowledge graphs, 0.1 otherwise)")
	fs.IntVar(&o.Workers, "workers", job.Defaults.Workers, "training goroutines (1 makes training deterministic)")
	cli.MachineDefault(fs, "workers", cpusDefault)
	fs.Int64Var(&o.Seed, "seed", job.Defaults.Seed, "data seed: generation, relabelling, initialisation, sampling and evaluation")
	registerInitFlags(fs, &o.Options)
	fs.Int64Var(&o.OrderingSeed, "ordering-seed", 0, "seed of the seeded orderings (beta: 0 is the canonical order; random), as simulate --ordering-seed")
	fs.BoolVar(&o.NoPrefetch, "no-prefetch", false, "load each partition only when every earlier bucket is done")
	fs.StringVar(&o.PlanFile, "plan", "", "execute this saved Plan `FILE` (simulate --plan writes one) instead of building --ordering; its p and c win (with --trainers: its bucket order is the lock server's priority)")
	fs.BoolVar(&o.Resume, "resume", false, "continue from the work directory's last checkpoint; refused if it was trained with other settings")
	fs.BoolVar(&o.Overwrite, "overwrite", false, "start over on a work directory that holds a checkpoint (the checkpoint is lost)")
	fs.IntVar(&o.KeepCheckpoints, "keep-checkpoints", job.Defaults.KeepCheckpoints, "checkpoints kept in the work directory, the newest included")
	fs.Var(keepFlag{&o.KeepBest}, "keep", keepHelp)
	fs.IntVar(&o.EarlyStop, "early-stop", 0, earlyStopHelp)
	fs.Var(&o.CheckpointEvery, "checkpoint-every", "also checkpoint inside epochs, every `DURATION` (30s, 5m) or N buckets (64b)")
	fs.StringVar(&o.Workdir, "workdir", "", "work `DIR` for partitions, buckets and checkpoints (default: one per input under the system temp dir)")
	fs.StringVar(&o.timeline, "timeline", "", "plot compute and I/O over time to `FILE`.png or .svg")
	cli.TraceFlags(fs, &o.trace, &o.traceSpans)
	fs.StringVar(&o.Export, "export", "", "write the trained node embeddings to `FILE` (.npy, .tsv or .txt, .csv: the format from the extension), or with --export-format pbg to a directory")
	cli.EnumVar(fs, &o.ExportFormat, "export-format", job.Defaults.ExportFormat, "npy, tsv, csv, or pbg (PyTorch-BigGraph's checkpoint layout in HDF5, relation parameters included; a build with -tags hdf5) (default: from --export's extension)")
	cli.EnumVar(fs, &o.Eval, "eval", job.Defaults.Eval, "when to evaluate: every (the validation split after every --eval-every-th epoch and the last — the test split where there is none — and the test split after the last), end (the test split after the last epoch) or none")
	fs.IntVar(&o.EvalEvery, "eval-every", job.Defaults.EvalEvery, "with --eval every: evaluate the validation split after every N-th epoch (and the last)")
	fs.IntVar(&o.EvalEdges, "eval-edges", job.Defaults.EvalEdges, "edges ranked per evaluation (a seeded sample of the split when there are more)")
	cli.EnumVar(fs, &o.EvalProtocol, "eval-protocol", job.Defaults.EvalProtocol, "filtered (against every node, known edges removed), sampled (1,000 uniform + 1,000 by degree, Marius §5.1) or auto (filtered up to 100,000 nodes)")
	fs.StringVar(&o.EvalMemory, "eval-memory", "", evalMemoryHelp)
	cli.EnumVar(fs, &o.progress, "progress", "auto", "progress display: auto, bar, lines or none")
	cli.EnumVar(fs, &o.Orderings, "orderings", "", "with --compare-sim: comma-separated orderings to run one after another")
	fs.BoolVar(&o.compareSim, "compare-sim", false, "also simulate each run's Plan and print predicted against measured")
	fs.IntVar(&o.Repeats, "repeats", job.Defaults.Repeats, "with --compare-sim: run the orderings N times, interleaved (each once, then each again, …)")
	fs.StringVar(&o.device, "device", "", "device profile `FILE` for --compare-sim: realrun calibrate with this run's training flags writes one for its shape (default: calibrate now)")
	fs.StringVar(&o.plot, "plot", "", "with --compare-sim: predicted-vs-measured scatter plot to `FILE`.png or .svg")
	fs.StringVar(&o.MicroBatchMemory, "micro-batch-memory", "", "split a batch needing more than `SIZE` (e.g. 2GB) into the fewest micro-batches that fit; one Adagrad step per row after the last")
	fs.IntVar(&o.MicroBatches, "micro-batches", 0, "split every batch into N micro-batches (0: only with --micro-batch-memory); either flag trains with the batch step, one Adagrad step per row per batch, instead of one per chunk (--engine cuda: never split)")
	cli.EnumVar(fs, &o.Duplicates, "duplicates", string(realrun.DefaultDuplicates), "how the chunk step updates a row that occurs more than once in a chunk, by `RULE`: each = one Adagrad step per occurrence in edge order; sum = one step with the summed gradient; the batch step (--micro-batches) always sums")
	cli.EnumVar(fs, &o.Engine, "engine", job.Defaults.Engine, "training engine: cpu, or cuda (a build with -tags cuda: make build-cuda)")
	cli.EnumVar(fs, &o.Buffer, "buffer", "", "with --engine cuda: gpu (partition slots in GPU memory, default) or host (partitions in host memory, rows shipped per batch)")
	fs.BoolVar(&o.TF32, "tf32", false, "with --engine cuda: cuBLAS products on TF32 tensor cores (the default; Ampere and later; FP32 accumulation)")
	fs.BoolVar(&o.FP32, "fp32", false, "with --engine cuda: plain FP32 products instead of TF32 (WN18's MRR within the seed spread of TF32's; 1.3-1.6x slower on an H100)")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the run (go tool pprof) to `FILE`")
	o.diskFlags.register(fs, "the work directory's disk")
	fs.IntVar(&o.dist.Trainers, "trainers", 0, "train with `N` trainer processes coordinated through etcd (PyTorch-BigGraph's distributed mode; default: one trainer, no etcd)")
	o.dist.Etcd.register(fs, "with --trainers: etcd `ENDPOINTS` (comma-separated) of an existing cluster (default: one started by this process, --etcd-members)")
	fs.IntVar(&o.dist.Members, "etcd-members", 1, "with --trainers and no --etcd: start an etcd of `N` members for the run, with a root password new for it: 1 embedded in this process, or 3, 5 or 7 processes of their own (a cluster that survives the loss of a member, for tests and demonstrations; production runs use an existing cluster, --etcd)")
	fs.DurationVar(&o.dist.Lease, "lease", 5*time.Second, "with --trainers: a trainer's lease; a trainer silent this long loses its bucket to the pool")
	fs.StringVar(&o.dist.Listen, "listen", "127.0.0.1", "with --trainers: the `ADDRESS` the etcd this process starts (--etcd-members) and the object store serve on (this machine's address, or 0.0.0.0, for trainers on other machines)")
	fs.Var(objectsFlag{&o.dist.Objects}, "objects", "with --trainers: move partitions, edges, the manifest and the degrees through an S3-compatible object store instead of the shared work directory, so that trainers need no work directory: `URL` s3://BUCKET[/PREFIX] of an existing store (AWS S3, or a server at --objects-endpoint; credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, else the shared credentials file AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, profile AWS_PROFILE; every trainer needs them), or embedded: an in-memory store (gofakes3) served from this process on --listen, for one machine and tests; the run's objects are removed at its end")
	fs.StringVar(&o.dist.ObjectsEndpoint, "objects-endpoint", "", "with --objects s3://…: the `URL` of an S3-compatible server (MinIO, versitygw, Ceph: http://host:9000), addressed path-style (default $AWS_ENDPOINT_URL_S3, else $AWS_ENDPOINT_URL, else AWS S3)")
	fs.StringVar(&o.dist.ObjectsRegion, "objects-region", "", "with --objects s3://…: the bucket's `REGION` (default $AWS_REGION, else $AWS_DEFAULT_REGION, else asked of the server)")
	o.out.register(fs)
	cli.SetHelp(fs, help)
	format, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	if err := o.mf.apply(fs, &o.Options); err != nil {
		return err
	}
	if err := applySchema(fs, &o, o.schema); err != nil {
		return err
	}
	if err := checkFlags(fs, o); err != nil {
		return err
	}
	if done, err := o.out.configure(fs, &o, stdout, stderr); done || err != nil {
		return err
	}
	o.Trace = o.trace != ""
	o.EvalProgress = pickEvalProgress(o.progress, stderr)
	o.EvalChosen = noteAutoSampled(stderr)
	if o.cpuprofile != "" {
		stop, perr := startCPUProfile(o.cpuprofile, stderr)
		if perr != nil {
			return perr
		}
		defer func() { err = errors.Join(err, stop()) }()
	}
	limit, g, err := limitDisk(o.diskFlags, diskDir(o.Workdir), stderr)
	if err != nil {
		return err
	}
	o.DiskLimit = limit
	if o.dist.Trainers != 0 || dflagSet(fs) {
		defer func() { err = errors.Join(err, g.Release()) }()
		o.resume = resumeArgs(args)
		return distMain(o, format, stdout, stderr)
	}
	// The group is released before signals are given back to their
	// default action, so that no exit path leaves it behind.
	if o.compareSim {
		done := exitOnSignal(g, stderr)
		defer func() { err = errors.Join(err, g.Release()); done() }()
		return compareMain(o, stdout, stderr, format)
	}
	done := stopOnSignal(&o.Options, args, stderr, g)
	defer func() { err = errors.Join(err, g.Release()); done() }()
	out, err := job.Train(o.Options, pickProgress(o.progress, stderr), format != cli.Table, cli.RenderWriter(stderr))
	renderOutput(&out)
	if se := (*realrun.StopError)(nil); errors.As(err, &se) {
		// What completed is printed: the epochs trained, each with the
		// evaluations that finished (a stopped one is "—").
		if len(out.Epochs) > 0 {
			if perr := print(stdout, format, out, o.out.isWide()); perr != nil {
				return errors.Join(err, perr)
			}
		}
		if se.Evaluating {
			return fmt.Errorf("%w; evaluate that checkpoint with: %s eval %s; resume with: %s %s", err, prog, out.Workdir, prog, resumeArgs(args))
		}
		return fmt.Errorf("%w; resume with: %s %s", err, prog, resumeArgs(args))
	} else if err != nil {
		return asUsage(err)
	}
	if o.timeline != "" {
		if err := drawTimeline(out, o.timeline); err != nil {
			return cli.Usagef("--timeline: %w", err)
		}
		atomicfile.Announce(stderr, o.timeline)
	}
	if o.trace != "" {
		if err := cli.WriteTrace(o.trace, []chrometrace.Process{trainTrace(out)}, o.traceSpans, stderr); err != nil {
			return err
		}
	}
	return print(stdout, format, out, o.out.isWide())
}

// trainTrace is a training run as one process of a trace: its epochs one
// after another (each after the one before, its checkpoint and its
// evaluation), with a track naming them.
func trainTrace(out Output) chrometrace.Process {
	p := chrometrace.Process{Name: fmt.Sprintf("measured: %s (realrun, %s)", out.Ordering, out.Dataset)}
	var at float64
	for _, ep := range out.Epochs {
		t := ep.Trace(out.Plan)
		shift(&t, at)
		t.Spans = append(t.Spans, report.Span{Track: "epochs", Name: fmt.Sprintf("epoch %d", ep.Epoch), Start: at, End: at + ep.EpochSeconds})
		p.Trace.Spans = append(p.Trace.Spans, t.Spans...)
		p.Trace.Counters = append(p.Trace.Counters, t.Counters...)
		p.Trace.Flows = append(p.Trace.Flows, t.Flows...)
		at += ep.EpochSeconds + ep.CheckpointSeconds + ep.EvalSeconds
	}
	return p
}

// shift moves a trace by d seconds.
func shift(t *report.Trace, d float64) {
	for i := range t.Spans {
		t.Spans[i].Start += d
		t.Spans[i].End += d
	}
	for i := range t.Counters {
		t.Counters[i].Time += d
	}
	for i := range t.Flows {
		t.Flows[i].FromTime += d
		t.Flows[i].ToTime += d
	}
}

// checkFlags refuses, before any work, flags that contradict each other
// and output paths that cannot be written.
func checkFlags(fs *flag.FlagSet, o cmdOptions) error {
	if !o.compareSim && (o.Orderings != "" || o.device != "" || o.plot != "" || o.Repeats != 1) {
		return cli.Usagef("--orderings, --repeats, --device and --plot go with --compare-sim")
	}
	if o.PlanFile != "" {
		// The saved Plan fixes these; a value given beside it would be
		// silently ignored.
		var set []string
		fs.Visit(func(f *flag.Flag) {
			if slices.Contains([]string{"ordering", "orderings", "p", "c", "policy", "ordering-seed"}, f.Name) {
				set = append(set, "--"+f.Name)
			}
		})
		if len(set) > 0 {
			return cli.Usagef("--plan %s fixes the ordering, p, c, policy and ordering seed: drop %s", o.PlanFile, strings.Join(set, ", "))
		}
	}
	if err := checkBestFlags(o); err != nil {
		return err
	}
	if o.Overwrite && o.Resume {
		return cli.Usagef("--overwrite and --resume contradict each other: resume the checkpoint, or start over")
	}
	for _, f := range []struct{ name, path string }{{"timeline", o.timeline}, {"plot", o.plot}} {
		if f.path != "" {
			if err := plots.CheckPath(f.path); err != nil {
				return cli.Usagef("--%s: %w", f.name, err)
			}
		}
	}
	if o.cpuprofile != "" {
		if err := atomicfile.CheckWritable(o.cpuprofile); err != nil {
			return cli.Usagef("--cpuprofile: %w", err)
		}
	}
	if err := cli.CheckTrace(o.trace, o.traceSpans); err != nil {
		return err
	}
	if o.device != "" {
		if _, err := devices.Load(o.device); err != nil {
			return cli.Usagef("--device: %w", err)
		}
	}
	return nil
}

var help = cli.Help{
	Usage:   "realrun [flags] | realrun calibrate|trainer|gnn [flags] | realrun eval|export|neighbors|predict WORKDIR [flags]",
	Summary: "Trains graph embeddings out of core for real, executing a Plan with O_DIRECT partition I/O, and measures the simulator's Report plus MRR and Hits@k.",
	Subcommands: [][2]string{{"calibrate", "measure this machine's disk and CPU engine into a device profile (realrun calibrate --help)"},
		{"trainer", "join a distributed run as one trainer (realrun trainer --help)"},
		{"etcd-member", "one member of the etcd cluster realrun --trainers N --etcd-members 3 starts (realrun etcd-member --help)"},
		{"gnn", "train a graph neural network for node classification: GraphSAGE, GAT or an MLP (realrun gnn --help)"},
		{"eval", "evaluate a trained work directory without training (realrun eval --help)"},
		{"export", "export a trained work directory's embeddings, or a GNN work directory's node representations (realrun export --help)"},
		{"neighbors", "the nearest nodes of nodes, or their best tails under a relation (realrun neighbors --help)"},
		{"predict", "answer link-prediction queries from a file (realrun predict --help)"}},
	Groups: []cli.FlagGroup{
		{Title: "What to train", Flags: []string{"dataset", "scale", "edges", "valid", "test", "schema", "delimiter", "header", "columns", "unseen", "dim", "epochs", "batch", "negatives", "chunk", "degree-frac", "lr", "seed", "init"}},
		{Title: "Model and loss", Flags: []string{"model", "operator", "comparator", "loss", "margin", "adversarial", "regularizer", "reg-coef"}},
		{Title: "Out-of-core layout", Flags: []string{"p", "c", "ordering", "ordering-seed", "policy", "plan", "no-prefetch", "workdir"}},
		{Title: "Disk speed (kernel cgroup limits on the work directory's disk; root)", Flags: []string{"disk-read", "disk-write", "emulate-disk"}},
		{Title: "Engine and run control", Flags: []string{"engine", "buffer", "tf32", "fp32", "micro-batch-memory", "micro-batches", "duplicates", "workers", "resume", "overwrite", "checkpoint-every", "keep-checkpoints", "keep", "early-stop", "progress", "cpuprofile"}},
		{Title: "Evaluation", Flags: []string{"eval", "eval-every", "eval-edges", "eval-protocol", "eval-memory"}},
		{Title: "Output", Flags: []string{"json", "csv", "timeline", "trace", "trace-max-spans", "export", "export-format"}},
		{Title: "Checking the simulator", Flags: []string{"compare-sim", "orderings", "repeats", "device", "plot"}},
		{Title: "Several trainers (etcd)", Flags: []string{"trainers", "etcd", "etcd-cacert", "etcd-cert", "etcd-key", "etcd-user", "etcd-password-file", "etcd-members", "lease", "objects", "objects-endpoint", "objects-region", "listen"}},
	},
	Examples: []string{
		"realrun --dataset twitter                                # 1% of Twitter, p=16 c=4, BETA",
		"realrun --edges kg.tsv --model complex --epochs 5 --export emb.npy",
		"realrun --edges kg.tsv --model rotate --loss logistic --margin 9 --adversarial 1",
		"realrun --edges kg.tsv --operator translation --comparator l2 --loss ranking --margin 0.1  # PBG's TransE",
		"realrun --edges kg.tsv --epochs 30 --keep best --early-stop 3  # keep the best validation epoch",
		"realrun --dataset twitter --scale 0.002 --dim 64 --p 8 --c 3 --orderings beta,hilbert --compare-sim",
		"realrun --emulate-disk p3.2xlarge --compare-sim          # on the paper machine's 400 MB/s EBS volume",
		"realrun --trainers 2 --dataset twitter                   # two trainer processes, an embedded etcd",
		"TIERFLOW_ETCD_PASSWORD=… realrun --trainers 2 --etcd https://10.0.0.1:2379 --etcd-cacert ca.pem --etcd-user tierflow  # an existing cluster",
		"realrun --trainers 2 --dataset twitter --objects s3://my-bucket/runs  # through your S3 store (AWS_* credentials)",
	},
}

// asUsage turns the engine's bad-input errors into usage errors (exit 2).
func asUsage(err error) error {
	if u := objectiveUsage(err); u != nil {
		return u
	}
	var bad *inputerr.Error
	if errors.As(err, &bad) {
		return cli.Usagef("%w", err)
	}
	return err
}

func presetNames() string {
	var names []string
	for _, p := range graph.Presets {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// presetScales lists each preset's default scale (job.DefaultScales).
func presetScales() string {
	var s []string
	for _, p := range graph.Presets {
		s = append(s, fmt.Sprintf("%s %g", p.Name, job.DefaultScales[p.Name]))
	}
	return strings.Join(s, ", ")
}

func pickProgress(mode string, w io.Writer) realrun.Progress {
	switch mode {
	case "none":
		return discard
	case "bar":
		return barProgress(w)
	case "lines":
		return lineProgress(w)
	}
	if isTerminal(w) {
		return barProgress(w)
	}
	return lineProgress(w)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func print(w io.Writer, format cli.Format, out Output, wide bool) error {
	switch format {
	case cli.JSON:
		return cli.PrintJSON(w, out)
	case cli.CSV:
		return runCSV(out).CSV(w)
	}
	if len(out.Epochs) > 0 || out.StoppedEarly == 0 { // a run resumed after an early stop trains none
		if err := epochColumns.Select(wide).Human(out.Epochs).Render(w); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "%s: %d nodes, %d training edges; %s d=%d, %s, lr %g, batch %d, %d negatives (%.0f%% by degree), %d workers\n",
		out.Dataset, out.Nodes, out.TrainEdges, out.Model, out.Dim, objectiveString(out.Objective), out.LR, out.Batch, out.Negatives, 100*out.DegreeFrac, out.Workers)
	if s := typesSummary(out); s != "" {
		fmt.Fprintln(w, s)
	}
	fmt.Fprintf(w, "%s order (ordering seed %d%s), p=%d c=%d, partitions of %.1f MB (O_DIRECT: %v), prefetch %v; work directory %s\n",
		out.Ordering, out.OrderingSeed, planNote(out.PlanFile), out.P, out.C, float64(out.PartitionBytes)/1e6, out.DirectIO, out.Prefetch, out.Workdir)
	for _, s := range []string{checkpointSummary(out), gpuSummary(out)} {
		if s != "" {
			fmt.Fprintln(w, s)
		}
	}
	if s := evalSummary(out.Epochs); s != "" {
		fmt.Fprintln(w, s)
	}
	if s := bestSummary(out.Best, out.Workdir, out.StoppedEarly, out.EarlyStop); s != "" {
		fmt.Fprintln(w, s)
	}
	fmt.Fprintf(w, "simulate this graph on any device, at any p: simulate --graph %s (sweep: simulate sweep --graph %s)\n", out.Workdir, out.Workdir)
	return nil
}

// planNote names the saved Plan a run executed, if any.
func planNote(file string) string {
	if file == "" {
		return ""
	}
	return ", Plan from " + file
}

package realrun

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/workload"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/store"
)

// DefaultScales make one epoch of each preset take one to three minutes
// on two cores with the default training shape (twitter measured: 109 s;
// the others hold about as many edges; fb15k is small at full size).
var DefaultScales = map[string]float64{"twitter": 0.01, "livejournal": 0.2, "freebase86m": 0.04, "fb15k": 1}

// Options is one `realrun` invocation in names and numbers (its flags);
// Configure checks them and turns them into a DataSpec, a Hyper and a Plan.
type Options struct {
	Dataset, Edges, Valid, Test string
	Scale                       float64 // 0: DefaultScales
	Model                       string  // "": the dataset's (dot for edge files)
	Dim, Epochs, P, C           int
	Ordering, Policy, PlanFile  string
	Batch, Negatives, Chunk     int
	DegreeFrac, LR              float64
	Workers                     int
	Seed                        int64
	NoPrefetch, Resume          bool
	Workdir                     string // "": under the system temp dir
	Export, ExportFormat        string
	// Eval is when to evaluate: "every" (every EvalEvery-th epoch and the
	// last), "end" (after the last epoch only) or "none"; EvalProtocol is
	// "auto", "filtered" or "sampled"; EvalEdges caps the test edges
	// ranked (a seeded sample).
	Eval, EvalProtocol   string
	EvalEvery, EvalEdges int
	// MicroBatchMemory ("" for none, e.g. "2GB") is the memory one batch
	// may take; a batch that needs more is split into the fewest
	// micro-batches that fit (or MicroBatches, when positive), with one
	// Adagrad step per row after the last (see MicroBatching).
	MicroBatchMemory string
	MicroBatches     int
	// Engine is the training engine ("cpu" or "cuda"); Buffer, for the
	// CUDA engine, where the partition slots live ("gpu" or "host").
	Engine, Buffer string
	// CheckpointEvery is how often to checkpoint inside an epoch.
	CheckpointEvery workload.CheckpointInterval
	// Stop, once closed, stops training at the next bucket boundary with
	// a checkpoint: Train then returns a *StopError whose Code is
	// *StopCode (the exit status the stopper asks for; nil: 0).
	Stop     <-chan struct{}
	StopCode *int
}

// ResumeArgs are a command line's arguments with --resume added (once).
func ResumeArgs(args []string) string {
	out := append([]string(nil), args...)
	if !slices.Contains(out, "--resume") && !slices.Contains(out, "-resume") {
		out = append(out, "--resume")
	}
	for i, a := range out {
		if a == "" || strings.ContainsAny(a, " \t'\"$\\") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// Defaults are realrun's defaults, the flags' and any caller's.
var Defaults = Options{
	Dataset: "twitter", Dim: 100, Epochs: 1, P: 16, C: 4, Ordering: "beta", Policy: "belady",
	Batch: 10000, Negatives: 100, DegreeFrac: Auto, LR: 0, Workers: runtime.NumCPU(), Seed: 1,
	ExportFormat: "npy", Engine: "cpu", Eval: "every", EvalProtocol: "auto", EvalEvery: 1, EvalEdges: 10000,
}

// Auto, as Options.DegreeFrac, picks the share tuned for the kind of
// graph (GraphDefaults); so does 0 as Options.LR.
const Auto = -1

// GraphDefaults are the learning rate and the share of negatives drawn by
// degree used when none is given, per kind of graph: knowledge graphs
// (trained with a relation-aware score function) and graphs without
// relations. The KG values were tuned on the WN18-style WordNet KG (make
// reproduce-quality; REPRODUCE.md, "Link-prediction quality"): with lr 0.1
// and half the negatives by degree ComplEx reached filtered MRR 0.41 after
// 3 epochs, with lr 0.3 and uniform negatives 0.87 after 5. Uniform
// negatives match filtered evaluation, which ranks against every node
// alike. The social-graph values are the ones the sampled evaluation
// (half its negatives by degree) was measured with.
var GraphDefaults = map[bool]struct{ LR, DegreeFrac float64 }{
	true:  {LR: 0.3, DegreeFrac: 0},
	false: {LR: 0.1, DegreeFrac: 0.5},
}

// EvalNone is the Quality.Mode of an epoch that was not evaluated.
const EvalNone = "none"

// Configure validates the options and builds the data spec, the training
// hyper-parameters and the Plan. Bad input is a sim.InputError naming the
// flag.
func Configure(o Options) (DataSpec, Hyper, *orderings.Plan, error) {
	var spec DataSpec
	var h Hyper
	if err := orderings.CheckPC(o.P, o.C); err != nil {
		return spec, h, nil, inputerr.Errorf("--p %d --c %d: %w", o.P, o.C, err)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"dim", o.Dim}, {"epochs", o.Epochs}, {"batch", o.Batch}, {"negatives", o.Negatives}, {"workers", o.Workers}} {
		if f.v < 1 {
			return spec, h, nil, inputerr.Errorf("--%s %d: must be at least 1", f.name, f.v)
		}
	}
	switch {
	case o.Chunk < 0:
		return spec, h, nil, inputerr.Errorf("--chunk %d: must not be negative", o.Chunk)
	case o.DegreeFrac != Auto && !(o.DegreeFrac >= 0 && o.DegreeFrac <= 1):
		return spec, h, nil, inputerr.Errorf("--degree-frac %v: want a share between 0 and 1", o.DegreeFrac)
	case o.LR != 0 && !(o.LR > 0):
		return spec, h, nil, inputerr.Errorf("--lr %v: must be positive", o.LR)
	case o.ExportFormat != "npy" && o.ExportFormat != "tsv":
		return spec, h, nil, inputerr.Errorf("--export-format %q: want npy or tsv", o.ExportFormat)
	case o.Edges == "" && (o.Valid != "" || o.Test != ""):
		return spec, h, nil, inputerr.Errorf("--valid and --test go with --edges")
	case o.Eval != "every" && o.Eval != "end" && o.Eval != EvalNone:
		return spec, h, nil, inputerr.Errorf("--eval %q: want every, end or none", o.Eval)
	case o.EvalProtocol != "auto" && o.EvalProtocol != "filtered" && o.EvalProtocol != "sampled":
		return spec, h, nil, inputerr.Errorf("--eval-protocol %q: want auto, filtered or sampled", o.EvalProtocol)
	case o.EvalEvery < 1:
		return spec, h, nil, inputerr.Errorf("--eval-every %d: must be at least 1", o.EvalEvery)
	case o.EvalEdges < 1:
		return spec, h, nil, inputerr.Errorf("--eval-edges %d: must be at least 1", o.EvalEdges)
	}
	if err := CheckEngine(o.Engine, o.Buffer); err != nil {
		return spec, h, nil, &inputerr.Error{Err: err}
	}
	if o.Engine == "cuda" && o.Buffer != BufferHost && o.CheckpointEvery != (workload.CheckpointInterval{}) {
		return spec, h, nil, inputerr.Errorf("--checkpoint-every: not supported with --engine cuda --buffer gpu yet (the partitions live on the GPU between buckets); use --buffer host or epoch checkpoints")
	}
	policy, err := orderings.ParsePolicy(o.Policy)
	if err != nil {
		return spec, h, nil, inputerr.Errorf("--policy: %w", err)
	}
	modelName, source := o.Model, o.Dataset
	if o.Edges == "" {
		pr, err := graph.LookupPreset(o.Dataset)
		if err != nil {
			return spec, h, nil, inputerr.Errorf("--dataset: %w", err)
		}
		if modelName == "" {
			modelName = string(pr.Model)
		}
		if o.Scale == 0 {
			if o.Scale = DefaultScales[pr.Name]; o.Scale == 0 {
				o.Scale = 0.01
			}
		}
	} else {
		source = filepath.Base(o.Edges)
		if modelName == "" {
			modelName = DefaultModelFor(o.Edges)
		}
	}
	kind, err := workload.ParseModel(modelName)
	if err != nil {
		return spec, h, nil, inputerr.Errorf("--model: %w", err)
	}
	if err := kind.CheckDim(o.Dim); err != nil {
		return spec, h, nil, inputerr.Errorf("--dim %d: %w", o.Dim, err)
	}
	var plan *orderings.Plan
	if o.PlanFile != "" {
		f, err := os.Open(o.PlanFile)
		if err != nil {
			return spec, h, nil, inputerr.Errorf("--plan: %w", err)
		}
		plan, err = orderings.ReadJSON(f)
		f.Close()
		if err != nil {
			return spec, h, nil, inputerr.Errorf("--plan %s: %w", o.PlanFile, err)
		}
		o.P, o.C = plan.P, plan.C
	} else if plan, err = orderings.Build(o.Ordering, o.P, o.C, policy, o.Seed); err != nil {
		return spec, h, nil, inputerr.Errorf("--ordering: %w", err)
	}
	workdir := o.Workdir
	if workdir == "" {
		workdir = filepath.Join(os.TempDir(), "tierflow-"+source)
	}
	spec = DataSpec{Dataset: o.Dataset, Scale: o.Scale, Edges: o.Edges, Valid: o.Valid, Test: o.Test,
		Seed: o.Seed, P: o.P, Dim: o.Dim, Model: string(kind), Workdir: workdir}
	var mb MicroBatching
	if o.MicroBatchMemory != "" {
		b, err := devices.ParseBytes(o.MicroBatchMemory)
		if err != nil {
			return spec, h, nil, inputerr.Errorf("--micro-batch-memory: %w", err)
		}
		mb.Budget = int64(b)
	}
	if o.MicroBatches < 0 {
		return spec, h, nil, inputerr.Errorf("--micro-batches %d: must not be negative", o.MicroBatches)
	}
	mb.Count = o.MicroBatches
	def := GraphDefaults[kind.UsesRelations()]
	if o.LR == 0 {
		o.LR = def.LR
	}
	if o.DegreeFrac == Auto {
		o.DegreeFrac = def.DegreeFrac
	}
	h = Hyper{Training: workload.Training{Model: kind, Dim: o.Dim, Batch: o.Batch, Negatives: o.Negatives, ChunkSize: o.Chunk},
		DegreeFrac: o.DegreeFrac, LR: float32(o.LR), Workers: o.Workers, Micro: mb}
	if err := mb.Check(h); err != nil {
		return spec, h, nil, inputerr.Errorf("--micro-batch-memory %s: %w", o.MicroBatchMemory, err)
	}
	return spec, h, plan, nil
}

// OpenOrPrepare reuses a work directory built from the same generated data
// or the same edge files (unchanged: their checksums are recorded) with the
// same layout (p, d, model, seed), or builds it; reused reports which. A work directory of another format version is refused, never
// replaced.
func OpenOrPrepare(spec DataSpec) (st *store.Store, reused bool, err error) {
	if _, err := store.Open(spec.Workdir); errors.Is(err, store.ErrVersion) {
		return nil, false, inputerr.Errorf("--workdir: %v; remove it or choose another --workdir", err)
	}
	if st, err := store.Open(spec.Workdir); err == nil {
		m := st.M
		same := m.P == spec.P && m.Dim == spec.Dim && m.Model == spec.Model && m.Seed == spec.Seed
		if spec.Edges == "" {
			same = same && m.Source == fmt.Sprintf("%s@%g", spec.Dataset, spec.Scale)
		} else if same && m.Source == spec.Edges {
			// An edge file is reused only unchanged (same checksums).
			inputs, err := inputSums(spec)
			same = err == nil && maps.Equal(inputs, m.Inputs)
		} else {
			same = false
		}
		if same {
			return st, true, nil
		}
	}
	st, err = Prepare(spec)
	return st, false, err
}

// Output is one `realrun` training run: its configuration and every
// epoch's measurement (what realrun prints with --json).
type Output struct {
	Ordering       string  `json:"ordering"`
	Policy         string  `json:"policy"`
	P              int     `json:"p"`
	C              int     `json:"c"`
	PartitionBytes int64   `json:"partition_bytes"`
	Dataset        string  `json:"dataset"`
	Workdir        string  `json:"workdir"`
	Nodes          int64   `json:"nodes"`
	TrainEdges     int64   `json:"train_edges"`
	Model          string  `json:"model"`
	LR             float64 `json:"lr"`
	Dim            int     `json:"dim"`
	Batch          int     `json:"batch"`
	Negatives      int     `json:"negatives"`
	DegreeFrac     float64 `json:"degree_frac"`
	Workers        int     `json:"workers"`
	Prefetch       bool    `json:"prefetch"`
	DirectIO       bool    `json:"direct_io"`
	Histogram      string  `json:"histogram"`
	Epochs         []Epoch `json:"epochs"`
	// Resumed is the epoch training resumed after (0: from scratch).
	Resumed int `json:"resumed,omitempty"`
	// ModelChoice says why the score function was chosen when --model was
	// not given.
	ModelChoice string `json:"model_choice,omitempty"`
}

// DefaultModelFor is the score function used for an edge file when none is
// named: ComplEx when its lines carry relations (src rel dst), since Dot
// would parse and then ignore them; Dot for plain src dst graphs. An
// unreadable file gets Dot here and its error from Prepare.
func DefaultModelFor(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return string(workload.Dot)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		if len(fields) == 3 {
			return string(workload.ComplEx)
		}
		break
	}
	return string(workload.Dot)
}

// EpochColumns are realrun's table and CSV columns.
var EpochColumns = plots.Columns{
	{Field: "Epoch", Head: "epoch"},
	{Field: "EpochSeconds", Head: "epoch s", Prec: 1, CSVPrec: 3},
	{Field: "StallSeconds", Head: "stall s", Prec: 1, CSVPrec: 3},
	{Field: "ComputeSeconds", Head: "compute s", Prec: 1, CSVPrec: 3},
	{Field: "Swaps", Head: "swaps"},
	{Field: "Loads", Head: "loads"},
	{Field: "Writes", Head: "writes"},
	{Field: "FinalWrites"},
	{Field: "ReadBytes", Head: "read MB", Scale: 1e-6, Prec: 1},
	{Field: "WriteBytes", Head: "write MB", Scale: 1e-6, Prec: 1},
	{Field: "EdgesPerSecond", Head: "edges/s", Prec: 0, CSVPrec: 0},
	{Field: "Loss", CSVPrec: 2},
	{Field: "MRR", Head: "MRR", Prec: 3, CSVPrec: 4},
	{Field: "HitsAt1", Head: "Hits@1", Prec: 3, CSVPrec: 4},
	{Field: "HitsAt3", CSVPrec: 4},
	{Field: "HitsAt10", Head: "Hits@10", Prec: 3, CSVPrec: 4},
	{Field: "Quality.Mode", Key: "eval_protocol", Head: "protocol"},
	{Field: "Quality.Seconds", Key: "eval_seconds", Head: "eval s", Prec: 1, CSVPrec: 3},
}

// Train is `realrun`: it prepares (or reuses) the work directory, resumes
// from its last checkpoint if asked, trains and evaluates every epoch, and
// exports the embeddings if asked. keepEvents keeps every epoch's I/O and
// bucket events in the Output; log receives one-line notices.
func Train(o Options, progress Progress, keepEvents bool, log io.Writer) (Output, error) {
	spec, h, plan, err := Configure(o)
	if err != nil {
		return Output{}, err
	}
	unlock, err := LockWorkdir(spec.Workdir)
	if err != nil {
		return Output{}, inputerr.Errorf("--workdir: %w", err)
	}
	defer unlock()
	st, reused, err := OpenOrPrepare(spec)
	if err != nil {
		return Output{}, err
	}
	degrees, err := st.Degrees()
	if err != nil {
		return Output{}, err
	}
	eng, err := NewCompute(EngineOptions{Engine: o.Engine, Buffer: o.Buffer, Hyper: h, Store: st, Degrees: degrees, Seed: spec.Seed, C: plan.C})
	if err != nil {
		return Output{}, err
	}
	if c, ok := eng.(io.Closer); ok {
		defer c.Close()
	}
	out := Output{
		Ordering: plan.Ordering, Policy: plan.Policy, P: plan.P, C: plan.C, PartitionBytes: st.M.PartitionBytes,
		Dataset: st.M.Source, Workdir: st.Dir, Nodes: st.M.Nodes, TrainEdges: st.M.Train,
		Model: string(h.Model), LR: float64(float32ToDecimal(h.LR)), Dim: h.Dim, Batch: h.Batch, Negatives: h.Negatives, DegreeFrac: h.DegreeFrac,
		Workers: h.Workers, Prefetch: !o.NoPrefetch, DirectIO: store.DirectIO, Histogram: st.HistogramPath(),
	}
	first := 1
	var pos *Position
	switch {
	case o.Resume && reused && (st.Current > 0 || st.Bucket > 0):
		if pos, err = Resume(st, eng); err != nil {
			return out, err
		}
		first, out.Resumed = st.Current+1, st.Current
		if pos != nil {
			if err := pos.check(plan, first, st.Bucket); err != nil {
				return out, inputerr.Errorf("--resume: %w", err)
			}
			fmt.Fprintf(log, "resuming after epoch %d at bucket %d of %d (checkpoint verified)\n", st.Current, pos.Bucket, len(plan.Buckets))
		} else {
			fmt.Fprintf(log, "resuming after epoch %d (checkpoint verified)\n", st.Current)
		}
	case reused:
		if err := st.InitPartitions(spec.Seed, initScale); err != nil {
			return out, err
		}
	}
	if o.Model == "" && o.Edges != "" {
		out.ModelChoice = fmt.Sprintf("%s: %s has relations", h.Model, filepath.Base(o.Edges))
		if h.Model == workload.Dot {
			out.ModelChoice = fmt.Sprintf("dot: %s has no relations", filepath.Base(o.Edges))
		}
		fmt.Fprintf(log, "model %s (--model to choose another)\n", out.ModelChoice)
	}
	ev := DefaultEval
	ev.Seed, ev.Workers, ev.MaxEdges = spec.Seed, h.Workers, o.EvalEdges
	if o.EvalProtocol != "auto" {
		ev.Protocol = o.EvalProtocol
	}
	for e := first; e <= o.Epochs; e++ {
		if stopped(o.Stop) {
			return out, o.stopError(&StopError{Epochs: st.Current, Bucket: st.Bucket, Buckets: len(plan.Buckets)})
		}
		ep, err := RunEpoch(st, plan, eng, EpochOptions{Prefetch: !o.NoPrefetch, Seed: spec.Seed, Epoch: e, Progress: progress,
			Checkpoint: o.CheckpointEvery, Stop: o.Stop, From: pos})
		pos = nil
		if se := (*StopError)(nil); errors.As(err, &se) {
			return out, o.stopError(se)
		} else if err != nil {
			return out, err
		}
		ep.Quality.Mode = EvalNone
		if o.Eval == "every" && e%o.EvalEvery == 0 || o.Eval != EvalNone && e == o.Epochs {
			start := time.Now()
			q, err := Evaluate(st, workload.Model(h.Model), eng.Relations(), degrees, ev)
			if err != nil {
				return out, err
			}
			q.Seconds = time.Since(start).Seconds()
			ep.Quality, ep.MRR, ep.HitsAt1, ep.HitsAt3, ep.HitsAt10 = q, q.MRR, q.HitsAt1, q.HitsAt3, q.HitsAt10
		}
		if !keepEvents {
			ep.IO, ep.Buckets = ep.IO[:0:0], nil
		}
		out.Epochs = append(out.Epochs, ep)
	}
	if o.Export != "" {
		if err := ExportFile(o.Export, o.ExportFormat, st); errors.Is(err, syscall.ENOSPC) {
			return out, err
		} else if err != nil {
			return out, inputerr.Errorf("--export: %w", err)
		}
	}
	return out, nil
}

// ExportFile writes the trained node embeddings to path in input id order
// (npy or tsv), naming nodes by their ids in the input file when the work
// directory was built from one; the file is written atomically.
func ExportFile(path, format string, st *store.Store) error {
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
	// The npy header is at most a few hundred bytes; tsv needs about
	// twice the binary size.
	need := st.M.Nodes*int64(st.M.Dim)*4 + 256
	if format == "tsv" {
		need *= 2
	}
	return store.SpaceError(path, need, atomicfile.Write(path, func(w io.Writer) error { return Export(w, st, format, names) }))
}

func (o Options) stopError(se *StopError) *StopError {
	if o.StopCode != nil {
		se.Code = *o.StopCode
	}
	return se
}

// DrawTimeline plots, for the last epoch, compute and I/O busy over time,
// to path (.png or .svg).
func (out Output) DrawTimeline(path string) error {
	if len(out.Epochs) == 0 {
		return fmt.Errorf("no epoch to plot")
	}
	e := out.Epochs[len(out.Epochs)-1]
	lc := plots.LineChart{Title: fmt.Sprintf("realrun epoch %d: %s, p=%d c=%d", e.Epoch, out.Ordering, out.P, out.C), XLabel: "seconds", YLabel: "busy (fraction)"}
	series := map[string]*plots.Series{"compute": {Name: "compute"}, "read": {Name: "disk read"}, "write": {Name: "disk write"}}
	for _, pt := range e.Timeline {
		x := (pt.Start + pt.End) / 2
		for k, v := range map[string]float64{"compute": pt.Compute, "read": pt.Read, "write": pt.Write} {
			s := series[k]
			s.X, s.Y = append(s.X, x), append(s.Y, v)
		}
	}
	lc.Series = []plots.Series{*series["compute"], *series["read"], *series["write"]}
	return plots.SaveStack(path, lc)
}

// CheckpointSummary is one line on the checkpoints taken inside epochs
// ("" when none was).
func (out Output) CheckpointSummary() string {
	var n int
	var bytes int64
	var secs float64
	for _, e := range out.Epochs {
		n, bytes, secs = n+e.InsideCheckpoints, bytes+e.CheckpointBytes, secs+e.CheckpointWaitSeconds
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("checkpoints inside epochs: %d, %.1f MB written, training waited %.1f s for them", n, float64(bytes)/1e6, secs)
}

// float32ToDecimal is the shortest decimal that reads back as x (0.3, not
// 0.30000001192092896), for printing a float32 hyper-parameter.
func float32ToDecimal(x float32) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
	return v
}

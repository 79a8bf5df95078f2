package job

// The options of a run (its flags), their defaults and helpers.

import (
	"runtime"

	"github.com/tierflow/tierflow/internal/diskcap"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/workload"

	"github.com/tierflow/tierflow/realrun/eval"
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
	// Loss, Margin, Adversarial, Regularizer and RegCoef are the training
	// objective (workload.Objective): "" and nil take the model's
	// (workload.DefaultObjective; ResolveObjective).
	Loss, Regularizer            string
	Margin, Adversarial, RegCoef *float64
	Dim, Epochs, P, C            int
	Ordering, Policy, PlanFile   string
	Batch, Negatives, Chunk      int
	DegreeFrac, LR               float64
	Workers                      int
	// Seed is the data seed: generation, relabelling, initialisation,
	// sampling and evaluation; OrderingSeed seeds the seeded orderings
	// (beta, random) alone, as simulate's does, so that an ordering name
	// and seed mean the same Plan everywhere (beta: 0 is the canonical
	// order).
	Seed, OrderingSeed int64
	NoPrefetch, Resume bool
	// Overwrite lets a run start over on a work directory that holds a
	// checkpoint (which is lost); KeepCheckpoints is how many checkpoints
	// it keeps, the newest included (at least 1; Defaults: store.DefaultKeep).
	Overwrite            bool
	KeepCheckpoints      int
	Workdir              string // "": under the system temp dir
	Export, ExportFormat string // ExportFormat npy, tsv, csv or pbg; "": from Export's extension (ExportFormatOf)
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
	// Duplicates is the chunk step's rule for a row that occurs more than
	// once in a chunk: "each" or "sum" ("": realrun.DefaultDuplicates;
	// see realrun.Duplicates). The batch step always sums.
	Duplicates string
	// Engine is the training engine ("cpu" or "cuda"); Buffer, for the
	// CUDA engine, where the partition slots live ("gpu" or "host").
	Engine, Buffer string
	// TF32 and FP32 choose the CUDA engine's products: TF32 tensor cores
	// (10-bit mantissa inputs, FP32 accumulation; the default, asked for
	// by TF32 as well) or plain FP32 (FP32). The CPU engine computes in
	// FP32 and takes neither.
	TF32, FP32 bool
	// CheckpointEvery is how often to checkpoint inside an epoch.
	CheckpointEvery workload.CheckpointInterval
	// Orderings, for a comparison with the simulator, lists the orderings
	// to run one after another at the same (p, c) (comma-separated; ""
	// for the one Plan of Ordering or PlanFile; a name given twice runs
	// once); Repeats runs the whole list that many times, interleaved
	// (every ordering once, then every ordering again, …; at least 1).
	Orderings string
	Repeats   int
	// Trace keeps every epoch's events for a trace (Epoch.Trace), and in
	// a comparison records the prediction's too.
	Trace bool
	// Stop, once closed, stops training at the next bucket boundary with
	// a checkpoint: Train then returns a *StopError whose Code is
	// *StopCode (the exit status the stopper asks for; nil: 0).
	Stop     <-chan struct{}
	StopCode *int
	// DiskLimit is the kernel limit the caller holds the work directory's
	// disk to (diskcap.Apply, before the run): recorded in every epoch's
	// Report, and in a comparison the prediction's disk is capped by it.
	DiskLimit diskcap.Limits
	// Init, when training starts afresh, takes the initial embeddings of
	// the nodes it has from this file or PBG checkpoint directory
	// (initemb); its identity is one of the run's settings.
	Init string
	// EvalMemory ("" for eval.DefaultMemory, e.g. "2GB") is the memory
	// budget of evaluation; EvalProgress, if not nil, follows it.
	EvalMemory   string
	EvalProgress EvalProgress
	// EvalChosen, if not nil, is told the protocol of the run's first
	// evaluation before it begins (eval.Choose): every evaluation of a
	// run ranks with the same.
	EvalChosen func(eval.Choice)
	// Input is how the edge files are read: --delimiter, --header,
	// --columns and --unseen (graph.Format; the zero value detects them).
	Input graph.Format
	// Schema, with Edges, gives the graph entity types (--schema; nil:
	// untyped); P must be its partitioned types' count (the caller sets
	// P to it when --p is not given).
	Schema *workload.Schema
	// Prepared, if set, is called with the work directory once it is
	// ready for the run (locked, built or verified), before training
	// (realrun writes run.yaml there); its error ends the run.
	Prepared func(dir string) error
	// KeepBest keeps, beside the last checkpoints, a copy of the
	// checkpoint of the epoch with the best validation MRR (BestMetric),
	// which pruning to KeepCheckpoints never removes; EarlyStop, when
	// positive, stops training after that many validated epochs in a row
	// without improvement of the validation MRR. Both need per-epoch
	// validation (Eval "every") and a validation split, record the
	// choice in the work directory (store.BestFile) and go on from it
	// when the run resumes.
	KeepBest  bool
	EarlyStop int
	// Distributed says several trainers train the epochs (realrun/dist):
	// a checkpoint inside an epoch reads the partitions they committed,
	// never an engine's slots.
	Distributed bool
}

// Defaults are realrun's defaults, the flags' and any caller's.
var Defaults = Options{
	Dataset: "twitter", Dim: 100, Epochs: 1, P: 16, C: 4, Ordering: "beta", Policy: "belady",
	Batch: 10000, Negatives: 100, DegreeFrac: Auto, LR: 0, Workers: runtime.NumCPU(), Seed: 1, KeepCheckpoints: store.DefaultKeep, Repeats: 1,
	ExportFormat: "", Engine: "cpu", Eval: "every", EvalProtocol: "auto", EvalEvery: 1, EvalEdges: 10000,
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

func (o Options) stopError(se *realrun.StopError) *realrun.StopError {
	if o.StopCode != nil {
		se.Code = *o.StopCode
	}
	return se
}

package job

import (
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
	"github.com/tierflow/tierflow/internal/diskcap"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun"
	_ "github.com/tierflow/tierflow/realrun/cpu" // the default engine, registered as "cpu"
	"github.com/tierflow/tierflow/workload"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
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

// Config is what Configure makes of Options: where the data comes from
// and how it is laid out, the training hyper-parameters, and the Plans to
// execute.
type Config struct {
	Spec  workdir.DataSpec
	Hyper realrun.Hyper
	// Plans are the Plans to run, in order: the saved Plan (PlanFile) or
	// --ordering's; with Orderings (a comparison), each of them defined
	// at (p, c). Skipped are the ones that are not, with the reason.
	Plans   []*orderings.Plan
	Skipped []orderings.Skipped
	// Settings are what the work directory's checkpoints depend on
	// (workdir.Settings), Keep how many checkpoints are kept.
	Settings workdir.Settings
	Keep     int
	// ExportFormat is the format Options.Export is written in
	// (ExportFormatOf; "" without Export).
	ExportFormat string
}

// Configure validates the options and builds the data spec, the training
// hyper-parameters and the Plans, each step in turn (the first bad input
// found is the one reported). Bad input is an inputerr.Error naming the
// field ({Dim}).
func Configure(o Options) (Config, error) {
	var cfg Config
	var err error
	if err := checkSchema(o); err != nil {
		return cfg, err
	}
	if err := checkNumbers(o); err != nil {
		return cfg, err
	}
	if err := checkEngine(o); err != nil {
		return cfg, err
	}
	if cfg.ExportFormat, err = checkExport(o); err != nil {
		return cfg, err
	}
	if err := checkInput(o); err != nil {
		return cfg, err
	}
	if err := checkSelection(o); err != nil {
		return cfg, err
	}
	policy, err := orderings.ParsePolicy(o.Policy)
	if err != nil {
		return cfg, inputerr.Errorf("{Policy}: %w", err)
	}
	kind, source, err := chooseModel(&o)
	if err != nil {
		return cfg, err
	}
	if cfg.ExportFormat == "pbg" {
		if err := checkPBGForm(kind); err != nil {
			return cfg, err
		}
	}
	if cfg.Plans, cfg.Skipped, err = buildPlans(&o, policy); err != nil {
		return cfg, err
	}
	if o.Schema != nil {
		if _, err := workdir.CheckP(*o.Schema, o.P); err != nil {
			return cfg, inputerr.Errorf("{P} %d and {Schema}: %w", o.P, err)
		}
	}
	cfg.Keep = o.KeepCheckpoints
	if cfg.Keep == 0 {
		cfg.Keep = store.DefaultKeep
	}
	cfg.Spec = workdir.DataSpec{Dataset: o.Dataset, Scale: o.Scale, Edges: o.Edges, Valid: o.Valid, Test: o.Test,
		Seed: o.Seed, P: o.P, Dim: o.Dim, Model: string(kind), Workdir: o.Workdir, Copies: cfg.Keep + 1 + copies(o.KeepBest), Format: o.Input, Schema: o.Schema}
	if cfg.Spec.Inputs, err = workdir.InputSums(cfg.Spec); err != nil {
		return cfg, err
	}
	if cfg.Spec.Workdir == "" {
		cfg.Spec.Workdir = workdir.Default(cfg.Spec, source)
	}
	if cfg.Hyper, err = hyper(o, kind); err != nil {
		return cfg, err
	}
	if cfg.Hyper.Objective, err = ResolveObjective(o, kind); err != nil {
		return cfg, &inputerr.Error{Err: err}
	}
	cfg.Settings = settings(cfg, o)
	if err := configureInit(o, &cfg); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// settings are what the run's checkpoints depend on, by flag: the graph
// (the preset, its scale and the data seed, or each edge file's absolute
// path, size and CRC-32C, and how they are read where not by default),
// the layout, the Plan's ordering, p, c, policy and seed, and the
// training shape and update rule (micro-batching, and the duplicate-row
// rule where not the default). The number of epochs, workers, the
// engine, evaluation and outputs may change between runs. Its keys are
// training.json's (workdir.Settings), made from the fields by
// workdir.SettingKey: a file format every work directory holds.
func settings(cfg Config, o Options) workdir.Settings {
	spec, h, pl := cfg.Spec, cfg.Hyper, cfg.Plans[0]
	key := workdir.SettingKey
	s := workdir.Settings{
		key("Seed"): fmt.Sprint(spec.Seed), key("Model"): spec.Model, key("Dim"): fmt.Sprint(spec.Dim),
		key("P"): fmt.Sprint(pl.P), key("C"): fmt.Sprint(pl.C), key("Ordering"): pl.Ordering, key("Policy"): pl.Policy, key("OrderingSeed"): fmt.Sprint(pl.Seed),
		key("Batch"): fmt.Sprint(h.Batch), key("Negatives"): fmt.Sprint(h.Negatives), key("Chunk"): fmt.Sprint(h.Chunk()),
		key("DegreeFrac"): fmt.Sprint(h.DegreeFrac), key("LR"): fmt.Sprint(float32ToDecimal(h.LR)),
	}
	if spec.Edges == "" {
		s[key("Dataset")], s[key("Scale")] = spec.Dataset, fmt.Sprint(spec.Scale)
	}
	for k, path := range map[string]string{key("Edges"): spec.Edges, key("Valid"): spec.Valid, key("Test"): spec.Test} {
		if path != "" {
			s[k] = workdir.FileIdentity(path, spec.Inputs[path])
		}
	}
	if spec.Edges != "" {
		maps.Copy(s, spec.Format.NonDefault())
	}
	if spec.Schema != nil {
		s[key("Schema")] = workdir.SchemaIdentity(*spec.Schema)
	}
	if h.Micro.On() {
		s[key("MicroBatchMemory")], s[key("MicroBatches")] = o.MicroBatchMemory, fmt.Sprint(o.MicroBatches)
	}
	if h.Rule() != realrun.DefaultDuplicates {
		// The default is not recorded: older directories resume.
		s[key("Duplicates")] = string(h.Rule())
	}
	maps.Copy(s, objectiveSettings(h.Objective))
	return s
}

// objectiveSettings are the settings of objective ob: the loss, and the
// numbers and regularisation where they are not zero (a directory trained
// before the objective was recorded was trained with the softmax loss
// and no regularisation, and resumes with them: Settings.WithObjective).
func objectiveSettings(ob workload.Objective) workdir.Settings {
	key := workdir.SettingKey
	s := workdir.Settings{workdir.LossSetting: string(ob.LossKind())}
	if ob.Margin != 0 {
		s[key("Margin")] = fmt.Sprint(ob.Margin)
	}
	if ob.Adversarial != 0 {
		s[key("Adversarial")] = fmt.Sprint(ob.Adversarial)
	}
	if ob.Reg() != workload.RegNone {
		s[key("Regularizer")], s[key("RegCoef")] = string(ob.Reg()), fmt.Sprint(ob.RegCoef)
	}
	return s
}

// ResolveObjective is the objective the options give model m: its
// default (workload.DefaultObjective) with the parts the options set
// replaced. A loss other than the default's starts without the default's
// margin and self-adversarial temperature, a regularizer other than the
// default's without its coefficient. A bad objective is a
// *workload.ObjectiveError naming the field.
func ResolveObjective(o Options, m workload.Model) (workload.Objective, error) {
	ob := workload.DefaultObjective(m)
	if o.Loss != "" {
		l, err := workload.ParseLoss(o.Loss)
		if err != nil {
			return ob, &workload.ObjectiveError{Field: workload.FieldLoss, Err: err}
		}
		if l != ob.LossKind() {
			ob.Loss, ob.Margin, ob.Adversarial = l, 0, 0
		}
	}
	if o.Regularizer != "" {
		r, err := workload.ParseRegularizer(o.Regularizer)
		if err != nil {
			return ob, &workload.ObjectiveError{Field: workload.FieldRegularizer, Err: err}
		}
		if r != ob.Reg() {
			ob.Regularizer, ob.RegCoef = r, 0
		}
	}
	for _, f := range []struct {
		v   *float64
		dst *float64
	}{{o.Margin, &ob.Margin}, {o.Adversarial, &ob.Adversarial}, {o.RegCoef, &ob.RegCoef}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	ob.Loss, ob.Regularizer = ob.LossKind(), ob.Reg()
	if err := ob.Validate(m); err != nil {
		return ob, err
	}
	return ob, nil
}

// checkNumbers checks the options that are numbers or names with a fixed
// set of values.
func checkNumbers(o Options) error {
	if err := orderings.CheckPC(o.P, o.C); err != nil {
		return inputerr.Errorf("{P} %d {C} %d: %w", o.P, o.C, err)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Dim", o.Dim}, {"Epochs", o.Epochs}, {"Batch", o.Batch}, {"Negatives", o.Negatives}, {"Workers", o.Workers}} {
		if f.v < 1 {
			return inputerr.Errorf("%s %d: must be at least 1", inputerr.Field(f.name), f.v)
		}
	}
	switch {
	case o.Chunk < 0:
		return inputerr.Errorf("{Chunk} %d: must not be negative", o.Chunk)
	case o.DegreeFrac != Auto && !(o.DegreeFrac >= 0 && o.DegreeFrac <= 1):
		return inputerr.Errorf("{DegreeFrac} %v: want a share between 0 and 1", o.DegreeFrac)
	case o.LR != 0 && !(o.LR > 0):
		return inputerr.Errorf("{LR} %v: must be positive", o.LR)
	case o.ExportFormat != "" && !slices.Contains(eval.ExportFormats, strings.ToLower(o.ExportFormat)):
		return inputerr.Errorf("{ExportFormat} %q: want %s", o.ExportFormat, eval.FormatList())
	case o.Edges == "" && (o.Valid != "" || o.Test != ""):
		return inputerr.Errorf("{Valid} and {Test} go with {Edges}")
	case o.Eval != "every" && o.Eval != "end" && o.Eval != eval.None:
		return inputerr.Errorf("{Eval} %q: want every, end or none", o.Eval)
	case o.EvalEvery < 1:
		return inputerr.Errorf("{EvalEvery} %d: must be at least 1", o.EvalEvery)
	case o.EvalEdges < 1:
		return inputerr.Errorf("{EvalEdges} %d: must be at least 1", o.EvalEdges)
	case o.KeepCheckpoints < 1:
		return inputerr.Errorf("{KeepCheckpoints} %d: must be at least 1", o.KeepCheckpoints)
	case o.Repeats < 1:
		return inputerr.Errorf("{Repeats} %d: must be at least 1", o.Repeats)
	}
	if _, err := realrun.ParseDuplicates(o.Duplicates); err != nil {
		return inputerr.Errorf("{Duplicates}: %w", err)
	}
	if _, err := eval.ParseProtocol(o.EvalProtocol); err != nil {
		return inputerr.Errorf("{EvalProtocol} %w", err)
	}
	return nil
}

// checkSchema refuses entity types (Options.Schema) where they are not
// supported yet: with a generated dataset, the CUDA engine, the batch
// step (micro-batches) or several trainers, and a schema of unpartitioned
// types only (the out-of-core engine needs p ≥ 2).
func checkSchema(o Options) error {
	if o.Schema == nil {
		return nil
	}
	switch {
	case o.Edges == "":
		return inputerr.Errorf("{Schema}: entity types go with {Edges} (a generated {Dataset} has none)")
	case o.Engine == "cuda":
		return inputerr.Errorf("{Schema}: entity types are trained by the CPU engine only for now (not {Engine} cuda)")
	case o.MicroBatches > 0 || o.MicroBatchMemory != "":
		return inputerr.Errorf("{Schema}: entity types are trained with the chunk step only for now (not {MicroBatches} or {MicroBatchMemory})")
	case o.Distributed:
		return inputerr.Errorf("{Schema}: entity types are trained by one trainer only for now (not {Distributed})")
	case o.Schema.P() < 2:
		return inputerr.Errorf("{Schema}: every entity type is unpartitioned (p = 1), but the out-of-core engine needs p ≥ 2: give a type {partitions: 2} or more")
	}
	return nil
}

// checkInput checks how the edge files are to be read (--delimiter,
// --header, --columns, --unseen), which goes with --edges only.
func checkInput(o Options) error {
	if err := o.Input.Check(); err != nil {
		return &inputerr.Error{Err: err}
	}
	if flags := o.Input.NonDefault(); o.Edges == "" && len(flags) > 0 {
		return inputerr.Errorf("%s: goes with {Edges}", strings.Join(slices.Sorted(maps.Keys(flags)), ", "))
	}
	return nil
}

// checkExport checks, before any work, that --export can be written and
// that its extension, if it names a format, is --export-format's.
func checkExport(o Options) (string, error) {
	if o.Export == "" {
		return "", nil
	}
	format, err := ExportFormatOf(o.Export, o.ExportFormat, "Export", "ExportFormat")
	if err != nil {
		return "", err
	}
	if format == "pbg" {
		// A model PBG cannot express is refused first (a bad name is
		// --model's to report); the datasets' defaults all have a form.
		if m, err := workload.ParseModel(o.Model); err == nil && o.Model != "" {
			if err := checkPBGForm(m); err != nil {
				return "", err
			}
		}
		return format, checkExportPBG(o.Export)
	}
	if err := atomicfile.CheckWritable(o.Export); err != nil {
		return "", inputerr.Errorf("{Export}: %w", err)
	}
	return format, nil
}

// ExportFormatOf is the format an export to path is written in
// (eval.ExportFormat: format when given, else the one path's extension
// names), its refusals bad input naming the fields that gave path and
// format (pathField and formatField: "Export", "ExportFormat").
func ExportFormatOf(path, format, pathField, formatField string) (string, error) {
	f, err := eval.ExportFormat(path, format)
	var fe *eval.FormatError
	if !errors.As(err, &fe) {
		return f, err
	}
	pf, ff := inputerr.Field(pathField), inputerr.Field(formatField)
	switch {
	case fe.Unknown:
		return "", inputerr.Errorf("%s %q: want %s", ff, fe.Format, eval.FormatList())
	case fe.Want != "":
		return "", inputerr.Errorf("%s %s: a %s file, but %s is %s (%s %s writes it)", pf, path, fe.Ext, ff, fe.Format, ff, fe.Want)
	case fe.Ext == "":
		return "", inputerr.Errorf("%s %s: no extension to tell the format by (%s); name the file so, or give %s %s", pf, path, eval.ExtList(), ff, eval.FormatList())
	}
	return "", inputerr.Errorf("%s %s: cannot tell the format from the extension %q (%s); name the file so, or give %s %s", pf, path, fe.Ext, eval.ExtList(), ff, eval.FormatList())
}

// checkEngine checks --engine, --buffer and what the engine supports.
func checkEngine(o Options) error {
	if o.TF32 && o.FP32 {
		return inputerr.Errorf("{TF32} and {FP32}: choose one (TF32 is the CUDA engine's default)")
	}
	if o.TF32 && o.Engine != "cuda" {
		return inputerr.Errorf("{TF32}: goes with {Engine} cuda (the cpu engine computes in FP32)")
	}
	if o.FP32 && o.Engine != "cuda" {
		return inputerr.Errorf("{FP32}: goes with {Engine} cuda (the cpu engine always computes in FP32)")
	}
	if err := realrun.CheckEngine(o.Engine, o.Buffer); err != nil {
		return &inputerr.Error{Err: err}
	}
	if o.Engine == "cuda" && o.Buffer != realrun.BufferHost && o.CheckpointEvery != (workload.CheckpointInterval{}) && !o.Distributed {
		return inputerr.Errorf("{CheckpointEvery}: not supported with {Engine} cuda {Buffer} gpu yet (the partitions live on the GPU between buckets); use {Buffer} host or epoch checkpoints")
	}
	return nil
}

// chooseModel resolves the dataset preset (and its default scale into
// o.Scale) or the edge file, and the score function: --model, else the
// preset's, else the edge file's (DefaultModelFor). It returns the
// source's name for the default work directory.
func chooseModel(o *Options) (kind workload.Model, source string, err error) {
	modelName, source := o.Model, o.Dataset
	if o.Edges == "" {
		pr, err := graph.LookupPreset(o.Dataset)
		if err != nil {
			return "", "", inputerr.Errorf("{Dataset}: %w", err)
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
			modelName = workdir.DefaultModelFor(o.Edges, o.Input)
		}
	}
	if kind, err = workload.ParseModel(modelName); err != nil {
		return "", "", inputerr.Errorf("{Model}: %w", err)
	}
	if err := kind.CheckDim(o.Dim); err != nil {
		return "", "", inputerr.Errorf("{Dim} %d: %w", o.Dim, err)
	}
	return kind, source, nil
}

// buildPlans reads the saved Plan (setting o.P and o.C to its p and c) or
// builds --ordering's; with o.Orderings, the Plans are that list's
// orderings at the same (p, c), those not defined there skipped
// (orderings.Select).
func buildPlans(o *Options, policy orderings.Policy) ([]*orderings.Plan, []orderings.Skipped, error) {
	var plan *orderings.Plan
	if o.PlanFile != "" {
		f, err := os.Open(o.PlanFile)
		if err != nil {
			return nil, nil, inputerr.Errorf("{PlanFile}: %w", err)
		}
		plan, err = orderings.ReadJSON(f)
		f.Close()
		if err != nil {
			return nil, nil, inputerr.Errorf("{PlanFile} %s: %w", o.PlanFile, err)
		}
		o.P, o.C, policy = plan.P, plan.C, orderings.Policy(plan.Policy)
	} else {
		var err error
		if plan, err = orderings.Build(o.Ordering, o.P, o.C, policy, o.OrderingSeed); err != nil {
			return nil, nil, inputerr.Errorf("{Ordering}: %w", err)
		}
	}
	if o.Orderings == "" {
		return []*orderings.Plan{plan}, nil, nil
	}
	names, err := orderings.ParseList(o.Orderings)
	if err != nil {
		return nil, nil, inputerr.Errorf("{Orderings}: %w", err)
	}
	plans, skipped, err := orderings.SelectSome(names, o.P, o.C, policy, o.OrderingSeed)
	if err != nil {
		return nil, nil, inputerr.Errorf("{Orderings}: %w", err)
	}
	return plans, skipped, nil
}

// hyper builds the training hyper-parameters: the graph kind's learning
// rate and degree share where none was given (GraphDefaults), the
// micro-batching budget or count, and the duplicate-row rule.
func hyper(o Options, kind workload.Model) (realrun.Hyper, error) {
	var mb realrun.MicroBatching
	if o.MicroBatchMemory != "" {
		b, err := devices.ParseBytes(o.MicroBatchMemory)
		if err != nil {
			return realrun.Hyper{}, inputerr.Errorf("{MicroBatchMemory}: %w", err)
		}
		mb.Budget = int64(b)
	}
	if o.MicroBatches < 0 {
		return realrun.Hyper{}, inputerr.Errorf("{MicroBatches} %d: must not be negative", o.MicroBatches)
	}
	mb.Count = o.MicroBatches
	dup, err := realrun.ParseDuplicates(o.Duplicates)
	if err != nil {
		return realrun.Hyper{}, inputerr.Errorf("{Duplicates}: %w", err)
	}
	def := GraphDefaults[kind.UsesRelations()]
	if o.LR == 0 {
		o.LR = def.LR
	}
	if o.DegreeFrac == Auto {
		o.DegreeFrac = def.DegreeFrac
	}
	h := realrun.Hyper{Training: workload.Training{Model: kind, Dim: o.Dim, Batch: o.Batch, Negatives: o.Negatives, ChunkSize: o.Chunk},
		DegreeFrac: o.DegreeFrac, LR: float32(o.LR), Workers: o.Workers, Micro: mb, TF32: o.Engine == "cuda" && !o.FP32, Duplicates: dup}
	if err := mb.Check(h); err != nil {
		return h, inputerr.Errorf("{MicroBatchMemory} %s: %w", o.MicroBatchMemory, err)
	}
	return h, nil
}

// Output is one `realrun` training run: its configuration and every
// epoch's measurement (what realrun prints with --json).
type Output struct {
	Ordering     string `json:"ordering"`
	OrderingSeed int64  `json:"ordering_seed"`
	// PlanFile is the saved Plan executed (--plan), if one was given.
	PlanFile       string `json:"plan_file,omitempty"`
	Policy         string `json:"policy"`
	P              int    `json:"p"`
	C              int    `json:"c"`
	PartitionBytes int64  `json:"partition_bytes"`
	Dataset        string `json:"dataset"`
	Workdir        string `json:"workdir"`
	Nodes          int64  `json:"nodes"`
	TrainEdges     int64  `json:"train_edges"`
	Model          string `json:"model"`
	// Objective is the loss and regularisation the run trains with.
	Objective  workload.Objective `json:"objective"`
	LR         float64            `json:"lr"`
	Dim        int                `json:"dim"`
	Batch      int                `json:"batch"`
	Negatives  int                `json:"negatives"`
	DegreeFrac float64            `json:"degree_frac"`
	Workers    int                `json:"workers"`
	Prefetch   bool               `json:"prefetch"`
	DirectIO   bool               `json:"direct_io"`
	Histogram  string             `json:"histogram"`
	Epochs     []realrun.Epoch    `json:"epochs"`
	// Resumed is the epoch training resumed after (0: from scratch).
	Resumed int `json:"resumed,omitempty"`
	// ModelChoice says why the score function was chosen when --model was
	// not given.
	ModelChoice string `json:"model_choice,omitempty"`
	// Best is the run's record of its validated epochs and the best of
	// them, when it keeps the best or stops early; EarlyStop is its
	// patience and StoppedEarly the epoch after which it stopped early
	// (0: it did not).
	Best         *store.Best `json:"best,omitempty"`
	EarlyStop    int         `json:"early_stop,omitempty"`
	StoppedEarly int         `json:"stopped_early,omitempty"`
	// Plan is the Plan the epochs executed.
	Plan *orderings.Plan `json:"-"`
	// InputFiles are what the work directory's build found in each edge
	// file: its delimiter, header, columns, and the validation and test
	// edges left out for a node or relation not in the training edges.
	InputFiles []store.InputFile `json:"input_files,omitempty"`
	// EntityTypes are a typed graph's entity types (nil: untyped) and
	// ResidentNodes the nodes of its unpartitioned types, held in memory
	// for the whole run.
	EntityTypes   []EntityType `json:"entity_types,omitempty"`
	ResidentNodes int64        `json:"resident_nodes,omitempty"`
}

// EntityType is one entity type of a typed graph as Output reports it:
// its nodes and how many partitions hold them (1: resident, in memory).
type EntityType struct {
	Name       string `json:"name"`
	Nodes      int64  `json:"nodes"`
	Partitions int    `json:"partitions"`
	Resident   bool   `json:"resident"`
}

// EntityTypes are a work directory's entity types as Output reports them
// (nil for an untyped one).
func EntityTypes(m store.Manifest) []EntityType {
	var out []EntityType
	for _, t := range m.Types {
		e := EntityType{Name: t.Name, Nodes: t.Nodes, Partitions: 1, Resident: !t.Partitioned}
		if t.Partitioned {
			e.Partitions = m.P
		}
		out = append(out, e)
	}
	return out
}

// Train is `realrun`: it prepares (or reuses) the work directory, resumes
// from its last checkpoint if asked, trains and evaluates every epoch, and
// exports the embeddings if asked. keepEvents keeps every epoch's I/O and
// bucket events in the Output; log receives one-line notices.
func Train(o Options, progress realrun.Progress, keepEvents bool, log io.Writer) (Output, error) {
	cfg, err := Configure(o)
	if err != nil {
		return Output{}, err
	}
	if len(cfg.Plans) != 1 {
		return Output{}, inputerr.Errorf("{Orderings}: training runs one Plan; a list goes with a comparison ({CompareSim})")
	}
	plan := cfg.Plans[0]
	r, err := open(o, cfg, plan.C, log)
	if err != nil {
		return Output{}, err
	}
	defer r.close()
	out := newOutput(o, cfg.Hyper, plan, r.st)
	first, pos, err := r.start(plan, log)
	if err != nil {
		return out, err
	}
	out.Resumed = first - 1
	if first > o.Epochs {
		fmt.Fprintf(log, "nothing left to train: %s is trained through epoch %d, the {Epochs} asked for (it counts the total: ask for more to train on)\n", r.st.Dir, o.Epochs)
	}
	noteModelChoice(o, cfg.Hyper.Model, &out, log)
	ev, err := evalOptions(o, cfg)
	if err != nil {
		return out, err
	}
	if err := r.startSelection(o, cfg, ev, log); err != nil {
		return out, err
	}
	for e := first; e <= o.Epochs; e++ {
		if r.sel != nil && r.sel.Exhausted() {
			break // resumed after an early stop
		}
		if realrun.Stopped(o.Stop) {
			return out, o.stopError(&realrun.StopError{Epochs: r.st.Current, Bucket: r.st.Bucket, Buckets: len(plan.Buckets)})
		}
		ep, err := realrun.RunEpoch(r.st, plan, r.eng, realrun.EpochOptions{Prefetch: !o.NoPrefetch, Seed: cfg.Spec.Seed, Epoch: e, Progress: progress,
			Checkpoint: o.CheckpointEvery, Stop: o.Stop, From: pos})
		pos = nil
		if se := (*realrun.StopError)(nil); errors.As(err, &se) {
			return out, o.stopError(se)
		} else if err != nil {
			return out, err
		}
		ep.DiskReadLimit, ep.DiskWriteLimit = float64(o.DiskLimit.Read), float64(o.DiskLimit.Write)
		stop, err := r.afterEpoch(o, cfg, ev, &ep)
		if errors.Is(err, eval.ErrStopped) {
			// The epoch's checkpoint is committed; its evaluation,
			// read-only, stopped at once: the epoch is reported
			// without that split's quality.
			ep.EvalStopped = true
			out.Epochs = append(out.Epochs, trimEvents(ep, keepEvents || o.Trace))
			r.noteSelection(&out)
			return out, o.stopError(&realrun.StopError{Epochs: r.st.Current, Buckets: len(plan.Buckets), Evaluating: true})
		} else if err != nil {
			return out, err
		}
		out.Epochs = append(out.Epochs, trimEvents(ep, keepEvents || o.Trace))
		if stop {
			break
		}
	}
	r.noteSelection(&out)
	return out, export(o, cfg, r.st, log)
}

// export writes the store's current checkpoint's node embeddings to
// o.Export in cfg.ExportFormat (nothing without Export).
func export(o Options, cfg Config, st *store.Store, log io.Writer) error {
	if o.Export == "" {
		return nil
	}
	if cfg.ExportFormat == "pbg" {
		return exportPBG(o.Export, st, log)
	}
	if err := eval.ExportFile(o.Export, cfg.ExportFormat, st); errors.Is(err, syscall.ENOSPC) {
		return err
	} else if err != nil {
		return inputerr.Errorf("{Export}: %w", err)
	}
	atomicfile.Announce(log, o.Export)
	return nil
}

// trimEvents drops an epoch's I/O and bucket events unless they are kept.
func trimEvents(ep realrun.Epoch, keep bool) realrun.Epoch {
	if !keep {
		ep.IO, ep.Buckets = ep.IO[:0:0], nil
	}
	return ep
}

// run is a training run's open work directory, under its lock, and its
// engine.
type run struct {
	st      *store.Store
	resume  bool
	sel     *selecting // nil: the run does not choose a best epoch
	degrees []int32
	eng     realrun.Engine
	unlock  func()
	// chosen says the run's evaluation protocol has been told
	// (Options.EvalChosen); recorded is the evaluation record the work
	// directory holds as far as the run knows (nil: not read yet).
	chosen   bool
	recorded *workdir.EvalRecord
}

// open locks the work directory, opens or builds it for the run
// (workdir.Start: resume, start afresh, or refuse), and opens the engine
// for a buffer of c partitions.
func open(o Options, cfg Config, c int, log io.Writer) (*run, error) {
	unlock, err := workdir.LockWorkdir(cfg.Spec.Workdir)
	if errors.Is(err, workdir.ErrNotWorkdir) {
		return nil, inputerr.Errorf("{Workdir} %w; choose another {Workdir}", err)
	} else if err != nil {
		return nil, inputerr.Errorf("{Workdir}: %w", err)
	}
	r := &run{unlock: unlock}
	use := workdir.Use{Resume: o.Resume, Overwrite: o.Overwrite, Settings: cfg.Settings, Keep: cfg.Keep}
	if r.st, r.resume, err = workdir.Start(cfg.Spec, use, log); err == nil && r.resume {
		err = checkEpochs(o.Epochs, r.st)
		if err == nil {
			trains := o.Epochs > r.st.Current || r.st.Bucket > 0
			err = cfg.Spec.CheckResumeSpace(r.st, trains, o.Export)
		}
	}
	if err == nil {
		noteInputs(o, r.st.M.InputFiles, log)
		err = applyInit(o, r, log)
	}
	if err == nil && o.Prepared != nil {
		err = o.Prepared(r.st.Dir)
	}
	if err == nil {
		if r.degrees, err = r.st.Degrees(); err == nil {
			r.eng, err = realrun.NewEngine(realrun.EngineOptions{Engine: o.Engine, Buffer: o.Buffer, Hyper: cfg.Hyper, Store: r.st, Degrees: r.degrees, Seed: cfg.Spec.Seed, C: c})
		}
	}
	if err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// checkEpochs refuses, before anything is written, a resumed run asking
// for fewer epochs than the work directory is trained through (Epochs
// counts the total, not the epochs to add). Exactly as many resume with
// nothing to train (a run stopped after its last checkpoint, in its
// export, resumes as it said).
func checkEpochs(epochs int, st *store.Store) error {
	if epochs > st.Current || epochs == st.Current && st.Bucket == 0 {
		return nil
	}
	if st.Bucket == 0 {
		return inputerr.Errorf("{Epochs} %d: %s is trained through epoch %d; {Epochs} counts the total, not the epochs to add: ask for more than %d to continue ({Epochs} %d trains one more), or start over with {Overwrite}",
			epochs, st.Dir, st.Current, st.Current, st.Current+1)
	}
	return inputerr.Errorf("{Epochs} %d: %s is trained through %d buckets of epoch %d; {Epochs} counts the total, not the epochs to add: ask for %d or more to continue ({Epochs} %d finishes epoch %d), or start over with {Overwrite}",
		epochs, st.Dir, st.Bucket, st.Current+1, st.Current+1, st.Current+1, st.Current+1)
}

// noteInputs says, one line each, which input file's first line was
// taken for a header (when --header was left to detect it) and how many
// validation and test edges were left out for ids not in the training
// edges.
func noteInputs(o Options, files []store.InputFile, log io.Writer) {
	for _, f := range files {
		if f.Header != nil && (o.Input.Header == "" || o.Input.Header == graph.HeaderAuto) {
			fmt.Fprintf(log, "%s: first line read as a header, not an edge: %s ({Header} no reads it as an edge)\n", f.Path, headerColumns(f))
		}
		if n := f.SkippedUnseenNode + f.SkippedUnseenRelation; n > 0 {
			fmt.Fprintf(log, "%s: %d of %d %s edges left out, not in the training graph: %d with an unseen node, %d with an unseen relation ({Unseen} error refuses them)\n",
				f.Path, n, n+f.Edges, f.Split, f.SkippedUnseenNode, f.SkippedUnseenRelation)
		}
	}
}

// headerColumns names the header columns a file's edges were read from:
// `src "head", rel "relation", dst "tail"`.
func headerColumns(f store.InputFile) string {
	roles := []string{"src", "dst"}
	if len(f.Columns) == 3 {
		roles = []string{"src", "rel", "dst"}
	}
	var parts []string
	for i, c := range f.Columns {
		if c >= 1 && c <= len(f.Header) {
			parts = append(parts, fmt.Sprintf("%s %q", roles[i], f.Header[c-1]))
		}
	}
	return strings.Join(parts, ", ")
}

func (r *run) close() {
	if c, ok := r.eng.(io.Closer); ok {
		c.Close()
	}
	r.unlock()
}

// start returns the first epoch to train and, inside an epoch, where to
// resume: after the work directory's last checkpoint (verified) when the
// run resumes, else from the start.
func (r *run) start(plan *orderings.Plan, log io.Writer) (int, *realrun.Position, error) {
	if !r.resume {
		return 1, nil, nil
	}
	st := r.st
	pos, err := realrun.Resume(st, r.eng)
	if err != nil {
		return 0, nil, err
	}
	first := st.Current + 1
	if pos != nil {
		if err := pos.Check(plan, first, st.Bucket); err != nil {
			return 0, nil, inputerr.Errorf("{Resume}: %w", err)
		}
		fmt.Fprintf(log, "resuming after epoch %d at bucket %d of %d (checkpoint verified)\n", st.Current, pos.Bucket, len(plan.Buckets))
	} else {
		fmt.Fprintf(log, "resuming after epoch %d (checkpoint verified)\n", st.Current)
	}
	return first, pos, nil
}

// evaluate ranks split sp's edges after an epoch and records the quality
// in it; before, it records in the work directory how it evaluates
// (workdir.EvalRecord), so that a later evaluation of the checkpoint
// ranks alike. It returns eval.ErrStopped when o.Stop closes first.
func (r *run) evaluate(ep *realrun.Epoch, m workload.Model, ev eval.Options, sp store.Split, o Options) error {
	start := time.Now()
	ev.Split = sp
	if o.EvalProgress != nil {
		ev.Progress = func(phase string, done, total int) { o.EvalProgress(ep.Epoch, eval.SplitName(sp), phase, done, total) }
	}
	c, err := eval.Choose(r.st, ev)
	if err != nil {
		return err
	}
	if !r.chosen && o.EvalChosen != nil {
		o.EvalChosen(c)
	}
	r.chosen = true
	// Recorded before it begins: a checkpoint whose evaluation is stopped
	// is evaluated later as training would have.
	if err := r.recordEval(ev, c.Protocol); err != nil {
		return err
	}
	q, err := eval.Evaluate(r.st, m, r.eng.Relations(), r.degrees, ev)
	if err != nil {
		return err
	}
	q.Seconds = time.Since(start).Seconds()
	ep.EvalProtocol, ep.EvalSeconds = q.Mode, ep.EvalSeconds+q.Seconds
	if sp == store.Valid {
		ep.Valid = &q
	} else {
		ep.Test = &q
	}
	return nil
}

// recordEval writes the work directory's evaluation record when it
// differs from what it holds.
func (r *run) recordEval(ev eval.Options, ranked string) error {
	rec := workdir.EvalRecord{Protocol: ev.Protocol, Ranked: ranked, Edges: ev.MaxEdges, Seed: ev.Seed,
		Uniform: ev.Uniform, ByDegree: ev.ByDegree, FilteredMaxNodes: ev.FilteredMaxNodes}
	if rec.Protocol == "" {
		rec.Protocol = eval.Auto
	}
	if r.recorded == nil {
		old, err := workdir.RecordedEval(r.st.Dir)
		if err != nil {
			return err
		}
		r.recorded = old
	}
	if r.recorded != nil && *r.recorded == rec {
		return nil
	}
	if err := workdir.RecordEval(r.st.Dir, rec); err != nil {
		return err
	}
	r.recorded = &rec
	return nil
}

// newOutput is the run's configuration as Output reports it.
func newOutput(o Options, h realrun.Hyper, plan *orderings.Plan, st *store.Store) Output {
	return Output{
		Plan: plan, Ordering: plan.Ordering, OrderingSeed: plan.Seed, PlanFile: o.PlanFile, Policy: plan.Policy, P: plan.P, C: plan.C, PartitionBytes: st.M.PartitionBytes,
		Dataset: st.M.Source, Workdir: st.Dir, Nodes: st.M.Nodes, TrainEdges: st.M.Train,
		Model: string(h.Model), Objective: h.Objective, LR: float64(float32ToDecimal(h.LR)), Dim: h.Dim, Batch: h.Batch, Negatives: h.Negatives, DegreeFrac: h.DegreeFrac,
		Workers: h.Workers, Prefetch: !o.NoPrefetch, DirectIO: store.DirectIO, Histogram: st.HistogramPath(), InputFiles: st.M.InputFiles,
		EntityTypes: EntityTypes(st.M), ResidentNodes: st.M.Resident,
	}
}

// noteModelChoice says why the score function was chosen for an edge file
// when --model was not given.
func noteModelChoice(o Options, m workload.Model, out *Output, log io.Writer) {
	if o.Model != "" || o.Edges == "" {
		return
	}
	out.ModelChoice = fmt.Sprintf("%s: %s has relations", m, filepath.Base(o.Edges))
	if m == workload.Dot {
		out.ModelChoice = fmt.Sprintf("dot: %s has no relations", filepath.Base(o.Edges))
	}
	fmt.Fprintf(log, "model %s ({Model} to choose another)\n", out.ModelChoice)
}

func (o Options) stopError(se *realrun.StopError) *realrun.StopError {
	if o.StopCode != nil {
		se.Code = *o.StopCode
	}
	return se
}

// float32ToDecimal is the shortest decimal that reads back as x (0.3, not
// 0.30000001192092896), for printing a float32 hyper-parameter.
func float32ToDecimal(x float32) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
	return v
}

// Opened is a work directory opened for training, under its lock, with
// its engine: what a caller that drives the epochs itself (the
// distributed run, realrun/dist) needs from a `realrun` invocation.
type Opened struct {
	r      *run
	Config Config
	o      Options
}

// Open configures o, then locks, opens or builds the work directory
// (resuming, starting afresh or refusing as training does) and opens the
// engine for a buffer of c partitions.
func Open(o Options, c int, log io.Writer) (*Opened, error) {
	cfg, err := Configure(o)
	if err != nil {
		return nil, err
	}
	r, err := open(o, cfg, c, log)
	if err != nil {
		return nil, err
	}
	return &Opened{r: r, Config: cfg, o: o}, nil
}

// Store is the opened work directory.
func (x *Opened) Store() *store.Store { return x.r.st }

// Engine is the opened engine.
func (x *Opened) Engine() realrun.Engine { return x.r.eng }

// Evaluate ranks the test edges of the store's current checkpoint with
// the engine's relations, as training's evaluation does.
func (x *Opened) Evaluate() (realrun.Quality, error) {
	ev, err := evalOptions(x.o, x.Config)
	if err != nil {
		return realrun.Quality{}, err
	}
	var ep realrun.Epoch
	if err := x.r.evaluate(&ep, x.Config.Hyper.Model, ev, store.Test, x.o); err != nil {
		return realrun.Quality{}, err
	}
	return *ep.Test, nil
}

// Export writes the trained node embeddings of the store's current
// checkpoint as training does after its last epoch (Options.Export in
// its format; nothing without it).
func (x *Opened) Export(log io.Writer) error { return export(x.o, x.Config, x.r.st, log) }

// Close closes the engine and unlocks the work directory.
func (x *Opened) Close() { x.r.close() }

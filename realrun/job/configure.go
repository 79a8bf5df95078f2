package job

// Configure: the model, Plans, hyper-parameters and settings it builds from the options.

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/workload"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
)

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

// float32ToDecimal is the shortest decimal that reads back as x (0.3, not
// 0.30000001192092896), for printing a float32 hyper-parameter.
func float32ToDecimal(x float32) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
	return v
}

package job

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/workload"
)

// Trained is a trained work directory opened for reading, under its lock
// (so that no run writes it meanwhile): its store, score function and the
// relation parameters of its current checkpoint.
type Trained struct {
	Store     *store.Store
	Model     workload.Model
	Relations []float32
	// Which is the checkpoint read: CheckpointLast or CheckpointBest.
	Which  string
	unlock func()
}

// OpenTrained locks and opens the work directory dir and reads its
// current checkpoint's relation parameters. A path that is not a work
// directory, or one that holds no trained checkpoint, is bad input.
func OpenTrained(dir string) (*Trained, error) { return OpenTrainedCheckpoint(dir, CheckpointLast) }

// OpenTrainedCheckpoint is OpenTrained at checkpoint which
// (ResolveCheckpoint: CheckpointLast or "" for the current one,
// CheckpointBest for the copy of the best epoch's): Store reads that
// checkpoint. A work directory without a best checkpoint, asked for it,
// is bad input wrapping ErrNoBest.
func OpenTrainedCheckpoint(dir, which string) (*Trained, error) {
	if which == "" {
		which = CheckpointLast
	}
	if which != CheckpointLast && which != CheckpointBest {
		return nil, inputerr.Errorf("checkpoint %q: want %s or %s", which, CheckpointLast, CheckpointBest)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || !store.IsWorkdir(dir) {
		return nil, inputerr.Errorf("%s: not a work directory (no manifest.json; realrun {Workdir} DIR makes one)", dir)
	}
	unlock, err := workdir.LockWorkdir(dir)
	if errors.Is(err, workdir.ErrLocked) {
		return nil, inputerr.Errorf("%w", err)
	} else if err != nil {
		return nil, err
	}
	t := &Trained{unlock: unlock, Which: which}
	if err := t.open(dir); err != nil {
		unlock()
		return nil, err
	}
	return t, nil
}

func (t *Trained) open(dir string) error {
	st, err := store.Open(dir)
	if errors.Is(err, store.ErrVersion) {
		return &inputerr.Error{Err: err}
	} else if err != nil {
		return inputerr.Errorf("%w", err)
	}
	if st.Current == 0 && st.Bucket == 0 {
		return inputerr.Errorf("%s holds no trained checkpoint (train it first: realrun {Workdir} %s …)", dir, dir)
	}
	if _, st, err = ResolveCheckpoint(st, t.Which); err != nil {
		return err
	}
	t.Store = st
	if t.Model, err = workload.ParseModel(st.M.Model); err != nil {
		return fmt.Errorf("%s: manifest: %w", dir, err)
	}
	t.Relations, err = realrun.CheckpointRelations(st, t.Model, st.M.Seed)
	return err
}

// Close unlocks the work directory.
func (t *Trained) Close() { t.unlock() }

// Checkpoint names the checkpoint read: "epoch 3", "epoch 3 + 12
// buckets" inside an epoch, or "epoch 2 (best)".
func (t *Trained) Checkpoint() string {
	if t.Which == CheckpointBest {
		return fmt.Sprintf("epoch %d (best)", t.Store.Current)
	}
	if t.Store.Bucket == 0 {
		return fmt.Sprintf("epoch %d", t.Store.Current)
	}
	return fmt.Sprintf("epoch %d + %d buckets", t.Store.Current, t.Store.Bucket)
}

// EvalDirOptions are how to evaluate a trained work directory.
// EvalProtocol, EvalEdges and Seed, when not set, are those training
// evaluated with (its workdir.EvalRecord), or for a directory without
// that record the defaults (Defaults.EvalProtocol and Defaults.EvalEdges,
// the data seed).
type EvalDirOptions struct {
	Dir, Split string
	// EvalProtocol is auto, filtered or sampled, in any case
	// (eval.ParseProtocol); "": training's.
	EvalProtocol string
	// EvalMemory is the evaluation's memory budget ("": eval.DefaultMemory).
	EvalMemory string
	// EvalEdges is the most edges ranked (0: training's); Workers the
	// ranking goroutines.
	EvalEdges, Workers int
	// Seed seeds the sample of edges and candidates (negative: training's,
	// else the work directory's data seed).
	Seed     int64
	Progress EvalProgress
	// Chosen, if not nil, is told the protocol before the evaluation
	// begins, with where it came from (EvalDirOutput.ProtocolFrom).
	Chosen func(c eval.Choice, from string)
	// Stop, once closed, stops the evaluation at once: EvaluateDir then
	// returns eval.ErrStopped.
	Stop <-chan struct{}
	// Checkpoint is the checkpoint evaluated: CheckpointLast ("" too) or
	// CheckpointBest (ResolveCheckpoint).
	Checkpoint string
}

// Where an evaluation setting of EvaluateDir came from
// (EvalDirOutput.ProtocolFrom).
const (
	// FromTraining: the work directory's evaluation record.
	FromTraining = "training"
	// FromOptions: EvalDirOptions.
	FromOptions = "options"
	// FromDefault: the defaults, the work directory having no record.
	FromDefault = "default"
)

// EvalDirOutput is `realrun eval WORKDIR`'s result (its --json).
type EvalDirOutput struct {
	Workdir    string `json:"workdir"`
	Model      string `json:"model"`
	Dim        int    `json:"dim"`
	Nodes      int64  `json:"nodes"`
	Epochs     int    `json:"epochs"`
	Bucket     int    `json:"bucket,omitempty"`
	Checkpoint string `json:"checkpoint"`
	// Protocol is the protocol asked for (auto, filtered or sampled;
	// Quality.Mode is the one that ranked) and ProtocolFrom where it came
	// from: FromTraining, FromOptions or FromDefault. EvalEdges and Seed
	// are the sample's size and seed, training's unless given.
	Protocol     string          `json:"protocol"`
	ProtocolFrom string          `json:"protocol_from"`
	EvalEdges    int             `json:"eval_edges"`
	Seed         int64           `json:"seed"`
	Quality      realrun.Quality `json:"quality"`
}

// EvaluateDir evaluates a trained work directory's current checkpoint
// (or its best: o.Checkpoint) without training, as training's evaluation
// did: the model and d from its manifest, the relation parameters from the
// checkpoint, and the protocol, edges and seed from its evaluation record
// unless o sets them — so that it gives the figure training's evaluation
// of the same split and checkpoint gave.
func EvaluateDir(o EvalDirOptions) (EvalDirOutput, error) {
	sp, err := eval.ParseSplit(o.Split)
	if err != nil {
		return EvalDirOutput{}, inputerr.Errorf("{Split}: %w", err)
	}
	protocol := o.EvalProtocol
	if protocol != "" {
		if protocol, err = eval.ParseProtocol(protocol); err != nil {
			return EvalDirOutput{}, inputerr.Errorf("{EvalProtocol} %w", err)
		}
	}
	switch {
	case o.EvalEdges < 0:
		return EvalDirOutput{}, inputerr.Errorf("{EvalEdges} %d: must be at least 1", o.EvalEdges)
	case o.Workers < 1:
		return EvalDirOutput{}, inputerr.Errorf("{Workers} %d: must be at least 1", o.Workers)
	}
	ev := eval.DefaultEval
	ev.Split, ev.Workers, ev.Stop = sp, o.Workers, o.Stop
	if ev.Memory, err = ParseEvalMemory(o.EvalMemory); err != nil {
		return EvalDirOutput{}, err
	}
	t, err := OpenTrainedCheckpoint(o.Dir, o.Checkpoint)
	if err != nil {
		return EvalDirOutput{}, err
	}
	defer t.Close()
	st := t.Store
	if (sp == store.Valid && st.M.Valid == 0) || (sp == store.Test && st.M.Test == 0) {
		return EvalDirOutput{}, inputerr.Errorf("{Split} %s: %s has no %s edges", o.Split, o.Dir, o.Split)
	}
	rec, err := workdir.RecordedEval(st.Dir)
	if err != nil {
		return EvalDirOutput{}, err
	}
	from := FromTraining
	if rec == nil {
		// Trained before the record was kept, or never evaluated by
		// training: training's defaults.
		from = FromDefault
		rec = &workdir.EvalRecord{Protocol: Defaults.EvalProtocol, Edges: Defaults.EvalEdges, Seed: st.M.Seed,
			Uniform: ev.Uniform, ByDegree: ev.ByDegree, FilteredMaxNodes: ev.FilteredMaxNodes}
	}
	ev.Protocol, ev.MaxEdges, ev.Seed = rec.Protocol, rec.Edges, rec.Seed
	ev.Uniform, ev.ByDegree, ev.FilteredMaxNodes = rec.Uniform, rec.ByDegree, rec.FilteredMaxNodes
	if protocol != "" {
		ev.Protocol, from = protocol, FromOptions
	}
	if o.EvalEdges > 0 {
		ev.MaxEdges = o.EvalEdges
	}
	if o.Seed >= 0 {
		ev.Seed = o.Seed
	}
	if o.Progress != nil {
		ev.Progress = func(phase string, done, total int) { o.Progress(0, o.Split, phase, done, total) }
	}
	c, err := eval.Choose(st, ev)
	if err != nil {
		return EvalDirOutput{}, fmt.Errorf("%s: %s: %w", o.Dir, workdir.EvalFile, err)
	}
	if o.Chosen != nil {
		o.Chosen(c, from)
	}
	deg, err := st.Degrees()
	if err != nil {
		return EvalDirOutput{}, err
	}
	out := EvalDirOutput{Workdir: st.Dir, Model: string(t.Model), Dim: st.M.Dim, Nodes: st.M.Nodes, Epochs: st.Current, Bucket: st.Bucket, Checkpoint: t.Checkpoint(),
		Protocol: ev.Protocol, ProtocolFrom: from, EvalEdges: ev.MaxEdges, Seed: ev.Seed}
	start := time.Now()
	out.Quality, err = eval.Evaluate(st, t.Model, t.Relations, deg, ev)
	out.Quality.Seconds = time.Since(start).Seconds()
	return out, err
}

// ExportDir writes a trained work directory's node embeddings to out
// in format (as ExportFormatOf resolves it; eval.ExportFile: npy, tsv or
// csv, input id order, one partition in memory
// at a time; pbg: a directory in PyTorch-BigGraph's checkpoint layout,
// pbgio.Export, relation parameters included) and, if relations is not "", its relation parameters there
// (eval.ExportRelations) in the same format. It returns the checkpoint
// exported (Trained.Checkpoint); log gets the pbg export's summary line.
func ExportDir(dir, out, format, relations string, log io.Writer) (string, error) {
	return ExportCheckpoint(dir, CheckpointLast, out, format, relations, log)
}

// ExportCheckpoint is ExportDir at checkpoint which (ResolveCheckpoint:
// CheckpointLast or CheckpointBest).
func ExportCheckpoint(dir, which, out, format, relations string, log io.Writer) (string, error) {
	t, err := OpenTrainedCheckpoint(dir, which)
	if err != nil {
		return "", err
	}
	defer t.Close()
	if relations != "" && len(t.Relations) == 0 {
		return "", inputerr.Errorf("{Relations}: %s's model %s has no relation parameters", dir, t.Model)
	}
	if format == "pbg" {
		if relations != "" {
			return "", inputerr.Errorf("{Relations}: the pbg format holds the relation parameters already (model.vN.h5)")
		}
		if err := checkPBGForm(t.Model); err != nil {
			return "", err
		}
		if err := checkExportPBG(out); err != nil {
			return "", err
		}
		return t.Checkpoint(), exportPBG(out, t.Store, log)
	}
	if err := eval.ExportFile(out, format, t.Store); err != nil {
		return "", err
	}
	if relations != "" {
		if err := eval.ExportRelations(relations, format, t.Store, t.Relations); err != nil {
			return "", err
		}
	}
	return t.Checkpoint(), nil
}

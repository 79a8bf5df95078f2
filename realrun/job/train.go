package job

// Train, its epoch loop, and the Output it reports.

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"syscall"

	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/workload"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/store"
)

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

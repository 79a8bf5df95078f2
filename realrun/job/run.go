package job

// A run's open work directory and engine (run), and Opened for callers driving the epochs.

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

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

package job

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/store"
)

// BestMetric is the metric a run's best epoch is chosen by: the MRR on
// the validation split (higher is better), computed after every
// evaluated epoch (Eval "every", every EvalEvery-th epoch and the last).
const BestMetric = "valid_mrr"

// Selection chooses a run's best epoch by its validation MRR and counts
// the validated epochs since it, for early stopping. Its state is the
// work directory's record (store.Best), so that a resumed run goes on
// where the stopped one was.
type Selection struct {
	Best store.Best
	// Patience is how many validated epochs in a row may pass without
	// improving on the best before the run stops (0: never stop early).
	Patience int
}

// Observe records epoch e's validation MRR and reports whether it is the
// best so far: strictly higher than every earlier validated epoch's (a
// tie keeps the earlier epoch; a NaN never improves).
func (s *Selection) Observe(e int, mrr float64) (improved bool) {
	s.Best.Metric = BestMetric
	s.Best.History = append(s.Best.History, store.Validated{Epoch: e, Value: mrr})
	if !math.IsNaN(mrr) && (s.Best.Epoch == 0 || mrr > s.Best.Value) {
		s.Best.Epoch, s.Best.Value, s.Best.SinceBest = e, mrr, 0
		return true
	}
	s.Best.SinceBest++
	return false
}

// Exhausted reports whether early stopping ends the run: Patience
// validated epochs in a row have not improved on the best.
func (s *Selection) Exhausted() bool {
	return s.Patience > 0 && s.Best.Epoch > 0 && s.Best.SinceBest >= s.Patience
}

// LastValidated is the last validated epoch (0: none).
func (s *Selection) LastValidated() int {
	if len(s.Best.History) == 0 {
		return 0
	}
	return s.Best.History[len(s.Best.History)-1].Epoch
}

// checkSelection refuses keeping the best epoch or stopping early on a
// run that does not validate after its epochs.
func checkSelection(o Options) error {
	if o.EarlyStop < 0 {
		return inputerr.Errorf("EarlyStop %d: must not be negative (0: never stop early)", o.EarlyStop)
	}
	if !o.KeepBest && o.EarlyStop == 0 {
		return nil
	}
	if o.Eval != "every" {
		return inputerr.Errorf("KeepBest and EarlyStop choose by the validation MRR after every evaluated epoch: they need Eval \"every\", not %q", o.Eval)
	}
	if o.Edges != "" && o.Test != "" && o.Valid == "" {
		return inputerr.Errorf("KeepBest and EarlyStop choose by the validation MRR: a Valid file is needed beside Test")
	}
	return nil
}

// selecting is a run's Selection with what it needs to keep its state.
type selecting struct {
	Selection
	keep   bool // keep a copy of the best epoch's checkpoint
	epochs int  // the epochs the run trains in all
}

// stopsEarly reports whether early stopping ends the run after epoch e
// before its last: patience run out at the last epoch is no early stop.
func (s *selecting) stopsEarly(e int) bool { return s.Exhausted() && e < s.epochs }

// startSelection starts choosing the best epoch when the run keeps it or
// stops early: afresh, or on a resumed run from the work directory's
// record. Epochs trained without a record (or whose validation a crash
// lost) are not in it: the current checkpoint, an epoch's, is then
// validated first, so that the record ends with it.
func (r *run) startSelection(o Options, cfg Config, ev eval.Options, log io.Writer) error {
	if !o.KeepBest && o.EarlyStop == 0 {
		return nil
	}
	st := r.st
	if st.M.Valid == 0 {
		return inputerr.Errorf("%s has no validation edges: the best epoch is chosen by the validation MRR", st.Dir)
	}
	sel := &selecting{Selection: Selection{Best: store.Best{Metric: BestMetric}, Patience: o.EarlyStop}, keep: o.KeepBest, epochs: o.Epochs}
	if r.resume {
		b, ok, err := st.ReadBest()
		if err != nil {
			return err
		}
		if ok {
			var hist []store.Validated
			for _, v := range b.History {
				if v.Epoch <= st.Current {
					hist = append(hist, v)
				}
			}
			b.History, b.StoppedAt, b.Metric = hist, 0, BestMetric
			sel.Best = b
		}
		if st.Bucket == 0 && st.Current > 0 && !sel.Best.Has(st.Current) {
			var ep realrun.Epoch
			ep.Epoch = st.Current
			if err := r.evaluate(&ep, cfg.Hyper.Model, ev, store.Valid, o); err != nil {
				return err
			}
			fmt.Fprintf(log, "epoch %d's validation is not in %s: validated it on resume, MRR %.4f\n", st.Current, store.BestFile, ep.Valid.MRR)
			if err := r.record(sel, st.Current, ep.Valid.MRR); err != nil {
				return err
			}
		}
	}
	r.sel = sel
	if sel.stopsEarly(sel.LastValidated()) {
		sel.Best.StoppedAt = sel.LastValidated()
		fmt.Fprintf(log, "stopped early after epoch %d: %d validated epochs in a row without a better validation MRR than epoch %d's; nothing to train (a larger patience trains on)\n",
			sel.Best.StoppedAt, sel.Best.SinceBest, sel.Best.Epoch)
		return st.WriteBest(sel.Best)
	}
	return nil
}

// record observes epoch e's validation MRR: a copy of its checkpoint
// (the current one) is kept when it is the best and the run keeps the
// best, then the record is replaced, then the copy it replaces removed.
func (r *run) record(sel *selecting, e int, mrr float64) error {
	st := r.st
	if sel.Observe(e, mrr) {
		sel.Best.Dir = ""
		if sel.keep {
			name, err := st.CopyBest()
			if err != nil {
				return err
			}
			sel.Best.Dir = name
		}
	}
	if sel.stopsEarly(e) {
		sel.Best.StoppedAt = e
	}
	if err := st.WriteBest(sel.Best); err != nil {
		return fmt.Errorf("record of the best epoch: %w", err)
	}
	return st.TidyBest()
}

// afterEpoch evaluates after epoch ep (evalSplits), records its
// validation MRR when the run chooses its best epoch, and reports
// whether early stopping ends the run; an epoch that stops the run early
// is also evaluated on the test split, as the last epoch is.
func (r *run) afterEpoch(o Options, cfg Config, ev eval.Options, ep *realrun.Epoch) (stop bool, err error) {
	e := ep.Epoch
	for _, sp := range evalSplits(o, e, r.st.M.Valid > 0) {
		if err := r.evaluate(ep, cfg.Hyper.Model, ev, sp, o); err != nil {
			return false, err
		}
	}
	if r.sel == nil || ep.Valid == nil {
		return false, nil
	}
	if err := r.record(r.sel, e, ep.Valid.MRR); err != nil {
		return false, err
	}
	if !r.sel.Exhausted() {
		return false, nil
	}
	if e < o.Epochs && o.Eval != eval.None {
		if err := r.evaluate(ep, cfg.Hyper.Model, ev, store.Test, o); err != nil {
			return true, err
		}
	}
	return true, nil
}

// noteSelection puts the run's choice into its output.
func (r *run) noteSelection(out *Output) {
	if r.sel == nil {
		return
	}
	b := r.sel.Best
	out.Best, out.EarlyStop, out.StoppedEarly = &b, r.sel.Patience, b.StoppedAt
}

// The checkpoints a trained work directory can be read at.
const (
	CheckpointLast = "last"
	CheckpointBest = "best"
)

// ErrNoBest is wrapped when the best checkpoint is asked for and the work
// directory keeps none.
var ErrNoBest = store.ErrNoBest

// ResolveCheckpoint resolves which checkpoint of an opened work directory
// to read: CheckpointLast (or "") is its current checkpoint,
// CheckpointBest the copy of its best epoch's that a run keeping the best
// made (an error wrapping ErrNoBest when there is none). It returns the
// checkpoint (its epoch, buckets and directory) and a store whose reads
// come from it (the same store for the last). Any other name is bad
// input. Callers that read a work directory's embeddings (eval, export,
// and commands like them) resolve their checkpoint here.
func ResolveCheckpoint(st *store.Store, which string) (store.Checkpoint, *store.Store, error) {
	switch which {
	case "", CheckpointLast:
		return store.Checkpoint{Epoch: st.Current, Bucket: st.Bucket, Dir: st.CurrentDir()}, st, nil
	case CheckpointBest:
		c, _, err := st.BestCheckpoint()
		if errors.Is(err, store.ErrNoBest) {
			return c, nil, inputerr.Errorf("%s: %w (only a run that keeps its best epoch makes one)", st.Dir, ErrNoBest)
		} else if err != nil {
			return c, nil, err
		}
		return c, st.View(c), nil
	}
	return store.Checkpoint{}, nil, inputerr.Errorf("checkpoint %q: want %s or %s", which, CheckpointLast, CheckpointBest)
}

// copies is the number of extra partition copies keeping the best
// checkpoint may hold: one, when every checkpoint it shares files with is
// pruned.
func copies(keepBest bool) int {
	if keepBest {
		return 1
	}
	return 0
}

// Start readies an opened work directory for a caller that drives the
// epochs itself: when the run resumes, it verifies the current
// checkpoint and restores the engine's state from it; then it starts
// choosing the best epoch (KeepBest, EarlyStop). It returns the first
// epoch to train and, for a checkpoint inside it, its position (one
// that several trainers took: Position.Lock; one machine's is refused).
func (x *Opened) Start(log io.Writer) (first int, within *realrun.Position, err error) {
	first = 1
	if x.r.resume {
		st := x.r.st
		pos, err := realrun.Resume(st, x.r.eng)
		if err != nil {
			return 0, nil, err
		}
		if st.Bucket != 0 {
			if pos == nil || pos.Lock == nil || pos.Epoch != st.Current+1 || pos.Bucket != st.Bucket {
				return 0, nil, inputerr.Errorf("%s: the current checkpoint is %d buckets into epoch %d, taken by one machine following its Plan; resume it without {Distributed}", st.Dir, st.Bucket, st.Current+1)
			}
			within = pos
			fmt.Fprintf(log, "resuming after epoch %d at bucket %d of %d (checkpoint verified)\n", st.Current, st.Bucket, len(pos.Lock.Done))
		} else {
			fmt.Fprintf(log, "resuming after epoch %d (checkpoint verified)\n", st.Current)
		}
		first = st.Current + 1
	}
	ev, err := evalOptions(x.o, x.Config)
	if err != nil {
		return 0, nil, err
	}
	return first, within, x.r.startSelection(x.o, x.Config, ev, log)
}

// Stopped reports whether the run stopped early already (a resumed run
// whose record says so): there is nothing to train.
func (x *Opened) Stopped() bool { return x.r.sel != nil && x.r.sel.Exhausted() }

// AfterEpoch is what training does after epoch ep.Epoch, whose checkpoint
// is the store's current one: it evaluates it as scheduled (Eval,
// EvalEvery; into ep), records its validation MRR and keeps its
// checkpoint when it is the best, and reports whether early stopping
// ends the run (an epoch that does is evaluated on the test split too).
func (x *Opened) AfterEpoch(ep *realrun.Epoch) (stop bool, err error) {
	ev, err := evalOptions(x.o, x.Config)
	if err != nil {
		return false, err
	}
	return x.r.afterEpoch(x.o, x.Config, ev, ep)
}

// Selection is the run's choice of its best epoch (nil when it neither
// keeps the best nor stops early).
func (x *Opened) Selection() *Selection {
	if x.r.sel == nil {
		return nil
	}
	return &x.r.sel.Selection
}

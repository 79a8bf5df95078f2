package main

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/store"
)

// --keep and --early-stop: keeping the best epoch's checkpoint and
// stopping early, both by the validation MRR after each epoch.

const (
	keepHelp       = "`WHICH` checkpoints to keep: last (the last --keep-checkpoints) or best (also a copy of the checkpoint of the epoch with the best validation MRR among the validated epochs, never pruned; best.json in the work directory records it; needs --eval every and a validation split; realrun eval|export --checkpoint best read it, --export writes the last)"
	earlyStopHelp  = "stop after `N` validated epochs in a row (every --eval-every-th) without a better validation MRR than the best epoch's; a resumed run goes on counting (needs --eval every and a validation split; 0: never stop early)"
	checkpointHelp = "the `CHECKPOINT` to read: last (the work directory's current one) or best (the copy of the best epoch's a run with --keep best kept)"
)

// keepFlag is --keep: last or best.
type keepFlag struct{ best *bool }

func (k keepFlag) String() string {
	if k.best != nil && *k.best {
		return job.CheckpointBest
	}
	return job.CheckpointLast
}

func (k keepFlag) Set(s string) error {
	switch s {
	case job.CheckpointLast, job.CheckpointBest:
		*k.best = s == job.CheckpointBest
		return nil
	}
	return errors.New("want last or best")
}

// checkBestFlags refuses --early-stop below 0, and --keep best or
// --early-stop on a run that does not validate after its epochs.
func checkBestFlags(o cmdOptions) error {
	if o.EarlyStop < 0 {
		return cli.Usagef("--early-stop %d: must not be negative (0: never stop early)", o.EarlyStop)
	}
	if !o.KeepBest && o.EarlyStop == 0 {
		return nil
	}
	what := "--keep best"
	if !o.KeepBest {
		what = "--early-stop"
	} else if o.EarlyStop > 0 {
		what = "--keep best and --early-stop"
	}
	switch {
	case o.Eval != "every":
		return cli.Usagef("%s: needs the validation MRR after each epoch (--eval every), not --eval %s", what, o.Eval)
	case o.compareSim:
		return cli.Usagef("%s: goes with training, not --compare-sim", what)
	case o.Edges != "" && o.Test != "" && o.Valid == "":
		return cli.Usagef("%s: chooses by the validation MRR: give --valid FILE beside --test (without either, --edges is split 90/5/5)", what)
	}
	return nil
}

// checkpointFlag registers --checkpoint (realrun eval, export, neighbors
// and predict).
func checkpointFlag(fs *flag.FlagSet, which *string) {
	*which = job.CheckpointLast
	fs.Var(checkpointValue{which}, "checkpoint", checkpointHelp)
}

// checkpointValue is --checkpoint: last or best.
type checkpointValue struct{ which *string }

func (c checkpointValue) String() string {
	if c.which == nil {
		return job.CheckpointLast
	}
	return *c.which
}

func (c checkpointValue) Set(s string) error {
	if s != job.CheckpointLast && s != job.CheckpointBest {
		return errors.New("want last or best")
	}
	*c.which = s
	return nil
}

// noBest says how to get a best checkpoint when there is none.
func noBest(err error) error {
	if errors.Is(err, job.ErrNoBest) {
		return cli.Usagef("--checkpoint best: %w; train with --keep best", err)
	}
	return asUsage(err)
}

// bestSummary is the lines on the best epoch of a run in workdir and on
// early stopping ("" when the run chose no best epoch).
func bestSummary(b *store.Best, workdir string, stoppedEarly, patience int) string {
	if b == nil || b.Epoch == 0 {
		return ""
	}
	s := fmt.Sprintf("best epoch %d: validation MRR %.4f", b.Epoch, b.Value)
	if b.Dir != "" {
		s += fmt.Sprintf(", its checkpoint kept in %s (realrun eval|export %s --checkpoint best)", filepath.Join(workdir, b.Dir), workdir)
	}
	if stoppedEarly > 0 {
		s += fmt.Sprintf("\nstopped early after epoch %d: %d validated epochs in a row without a better validation MRR than epoch %d's (--early-stop %d)",
			stoppedEarly, b.SinceBest, b.Epoch, patience)
	}
	return s
}

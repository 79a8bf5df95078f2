package main

import (
	"fmt"
	"io"
	"time"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/job"
)

// discard is a Progress that prints nothing.
func discard(int, int, int, float64, float64, bool) {}

// eta estimates the time left in an epoch from the buckets done since its
// first report: the rate so far times the buckets left.
type eta struct {
	epoch, done0 int
	t0           time.Time
	now          func() time.Time
}

// left returns the estimated time left and whether there is an estimate
// yet (two reports of the epoch are needed).
func (e *eta) left(epoch, done, total int) (time.Duration, bool) {
	if e.now == nil {
		e.now = time.Now
	}
	t := e.now()
	if epoch != e.epoch || done < e.done0 || e.t0.IsZero() {
		e.epoch, e.done0, e.t0 = epoch, done, t
		return 0, false
	}
	if done == e.done0 {
		return 0, false
	}
	per := t.Sub(e.t0) / time.Duration(done-e.done0)
	return per * time.Duration(total-done), true
}

// formatETA prints a duration left as 1h02m, 4m05s or 12s, "—" without
// an estimate.
func formatETA(d time.Duration, ok bool) string {
	if !ok {
		return "—"
	}
	d = d.Round(time.Second)
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

// lineProgress prints one line per 10% of an epoch (for logs and pipes).
func lineProgress(w io.Writer) realrun.Progress {
	last := -1
	var e eta
	return func(epoch, done, total int, eps, stall float64, final bool) {
		left, ok := e.left(epoch, done, total)
		tenth := done * 10 / total
		if tenth == last && !final {
			return
		}
		last = tenth
		if final {
			last = -1
			fmt.Fprintf(w, "epoch %d: %d/%d buckets, %.0f edges/s, stall %.1f s\n", epoch, done, total, eps, stall)
			return
		}
		fmt.Fprintf(w, "epoch %d: %d/%d buckets, %.0f edges/s, stall %.1f s, ETA %s\n", epoch, done, total, eps, stall, formatETA(left, ok))
	}
}

// barProgress redraws one progress bar line on a terminal.
func barProgress(w io.Writer) realrun.Progress {
	var e eta
	return func(epoch, done, total int, eps, stall float64, final bool) {
		left, ok := e.left(epoch, done, total)
		line := fmt.Sprintf("epoch %d %s %d/%d buckets  %.0f edges/s  stall %.1f s", epoch, bar(done, total), done, total, eps, stall)
		if !final {
			line += "  ETA " + formatETA(left, ok)
		}
		fmt.Fprintf(w, "\r%-100s", line)
		if final {
			fmt.Fprintln(w)
		}
	}
}

// bar is a 30-character bar of done out of total.
func bar(done, total int) string {
	const width = 30
	filled := 0
	if total > 0 {
		filled = done * width / total
	}
	b := make([]byte, width+2)
	b[0], b[width+1] = '[', ']'
	for i := 0; i < width; i++ {
		b[i+1] = '.'
		if i < filled {
			b[i+1] = '#'
		}
	}
	return string(b)
}

// phaseUnits names the steps of an evaluation phase.
var phaseUnits = map[string]string{"reading rows": "partitions", "filtering": "buckets", "ranking": "partitions"}

// evalLabel is "evaluating valid after epoch 2" (epoch 0: outside
// training).
func evalLabel(epoch int, split string) string {
	if epoch == 0 {
		return "evaluating " + split
	}
	return fmt.Sprintf("evaluating %s after epoch %d", split, epoch)
}

// pickEvalProgress follows evaluation in the --progress mode: on the bar
// its own line, redrawn; in lines mode a line as each phase ends and at
// every tenth of ranking.
func pickEvalProgress(mode string, w io.Writer) job.EvalProgress {
	switch {
	case mode == "none":
		return nil
	case mode == "bar" || mode == "auto" && isTerminal(w):
		return func(epoch int, split, phase string, done, total int) {
			fmt.Fprintf(w, "\r%-100s", fmt.Sprintf("%s: %s %s %d/%d %s", evalLabel(epoch, split), phase, bar(done, total), done, total, phaseUnits[phase]))
			if phase == "ranking" && done == total {
				fmt.Fprintln(w)
			}
		}
	}
	last := -1
	return func(epoch int, split, phase string, done, total int) {
		tenth := done * 10 / max(total, 1)
		if done == 0 || done != total && (phase != "ranking" || tenth == last) {
			return
		}
		last = tenth
		if done == total {
			last = -1
		}
		fmt.Fprintf(w, "%s: %s %d/%d %s\n", evalLabel(epoch, split), phase, done, total, phaseUnits[phase])
	}
}

package main

import (
	"fmt"
	"io"

	"github.com/tierflow/tierflow/realrun"
)

// discard is a Progress that prints nothing.
func discard(int, int, int, float64, float64, bool) {}

// lineProgress prints one line per 10% of an epoch (for logs and pipes).
func lineProgress(w io.Writer) realrun.Progress {
	last := -1
	return func(epoch, done, total int, eps, stall float64, final bool) {
		tenth := done * 10 / total
		if tenth == last && !final {
			return
		}
		last = tenth
		if final {
			last = -1
		}
		fmt.Fprintf(w, "epoch %d: %d/%d buckets, %.0f edges/s, stall %.1f s\n", epoch, done, total, eps, stall)
	}
}

// barProgress redraws one progress bar line on a terminal.
func barProgress(w io.Writer) realrun.Progress {
	return func(epoch, done, total int, eps, stall float64, final bool) {
		const width = 30
		filled := done * width / total
		bar := make([]byte, width)
		for i := range bar {
			if i < filled {
				bar[i] = '#'
			} else {
				bar[i] = '.'
			}
		}
		fmt.Fprintf(w, "\repoch %d [%s] %d/%d buckets  %.0f edges/s  stall %.1f s", epoch, bar, done, total, eps, stall)
		if final {
			fmt.Fprintln(w)
		}
	}
}

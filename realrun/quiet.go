package realrun

import (
	"cmp"
	"slices"
)

// QuietBuckets are the buckets of e whose training ran with no partition
// transfer beside it: no load, write, checkpoint or resident transfer of
// e.IO, their checksums included, overlaps the bucket's compute (its
// span after the stall). Their compute time is the engine's alone, with
// none of the slowdown I/O on the same cores brings: what a probe reads
// the engine's rate from, so that interference the calibration got wrong
// is not taken for a slower engine. seconds is their compute time
// together.
func QuietBuckets(e Epoch) (quiet []BucketRun, seconds float64) {
	type span struct{ lo, hi float64 }
	busy := make([]span, 0, len(e.IO))
	for _, ev := range e.IO {
		lo := ev.Start
		if ev.CheckStart > 0 && ev.CheckStart < lo { // a write's checksum runs before it
			lo = ev.CheckStart
		}
		busy = append(busy, span{lo, max(ev.End, ev.CheckEnd)})
	}
	slices.SortFunc(busy, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	for _, b := range e.Buckets {
		lo, hi := b.Start+b.StallSeconds, b.End
		if b.Edges == 0 || hi <= lo {
			continue
		}
		overlaps := false
		for _, s := range busy {
			if s.lo >= hi {
				break
			}
			if s.hi > lo {
				overlaps = true
				break
			}
		}
		if !overlaps {
			quiet = append(quiet, b)
			seconds += b.Compute
		}
	}
	return quiet, seconds
}

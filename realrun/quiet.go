package realrun

import "github.com/tierflow/tierflow/report"

// QuietBuckets are the buckets of e whose training ran with no partition
// transfer beside it: no load, write, checkpoint or resident transfer of
// e.IO, their checksums included, overlaps the bucket's compute (its
// span after the stall). Their compute time is the engine's alone, with
// none of the slowdown I/O on the same cores brings: what a probe reads
// the engine's rate from, so that interference the calibration got wrong
// is not taken for a slower engine. seconds is their compute time
// together.
func QuietBuckets(e Epoch) (quiet []BucketRun, seconds float64) {
	io := make([]report.Interval, 0, len(e.IO))
	for _, ev := range e.IO {
		start := ev.Start
		if ev.CheckStart > 0 { // a write's checksum runs before it
			start = min(start, ev.CheckStart)
		}
		io = append(io, report.Interval{Start: start, End: max(ev.End, ev.CheckEnd)})
	}
	for _, b := range e.Buckets {
		compute := []report.Interval{{Start: b.Start + b.StallSeconds, End: b.End}}
		if b.Edges > 0 && b.End > compute[0].Start && report.Overlap(compute, io) == 0 {
			quiet = append(quiet, b)
			seconds += b.Compute
		}
	}
	return quiet, seconds
}

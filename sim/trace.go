package sim

import (
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/report"
)

// tracer records a simulated epoch as a report.Trace (Config.Trace): the
// transfers of each I/O track, the compute stages' work per bucket, the
// trainer's waits, buffer occupancy, and an arrow from every load to the
// bucket that first needed it.
type tracer struct {
	tr report.Trace
	// readSpan is the span of each load's read, by load.
	readSpan map[int]int
	// bucketStart is where each bucket's work begins on the first
	// compute stage (and that stage's track).
	bucketStart map[int]float64
	firstStage  string
	// last is the last span of each track (merging consecutive work of
	// one bucket).
	last map[string]int
}

func newTracer(firstStage string) *tracer {
	return &tracer{readSpan: map[int]int{}, bucketStart: map[int]float64{}, firstStage: firstStage, last: map[string]int{}}
}

// span records one span and returns its index.
func (t *tracer) span(track, name string, start, end float64, args map[string]any) int {
	t.tr.Spans = append(t.tr.Spans, report.Span{Track: track, Name: name, Start: start, End: end, Args: args})
	return len(t.tr.Spans) - 1
}

// work records the work of bucket k (or of a batch, k < 0) on a compute
// track: one span per bucket and track, from its first batch's start to
// its last's end (the stage serves batches in order, so a bucket's spans
// never overlap the next's), with the edges and the seconds it was busy.
func (t *tracer) work(track string, k int, name string, start, end float64, edges int) {
	if i, ok := t.last[track]; ok && k >= 0 {
		s := &t.tr.Spans[i]
		if s.Name == name {
			s.End = end
			s.Args["edges"] = s.Args["edges"].(int) + edges
			s.Args["busy_seconds"] = s.Args["busy_seconds"].(float64) + (end - start)
			return
		}
	}
	t.last[track] = t.span(track, name, start, end, map[string]any{"edges": edges, "busy_seconds": end - start})
	if _, ok := t.bucketStart[k]; !ok && k >= 0 && track == t.firstStage {
		t.bucketStart[k] = start
	}
}

// finish adds the flows and the bytes-in-flight counter.
func (t *tracer) finish(plan *orderings.Plan, ioTracks []string) report.Trace {
	if plan != nil {
		need := plan.Arrivals()
		first := 0 // loads [first, need[k]) are first needed by bucket k
		for k := range plan.Buckets {
			for j := first; j < need[k]; j++ {
				i, okR := t.readSpan[j]
				at, okB := t.bucketStart[k]
				if !okR || !okB {
					continue
				}
				s := t.tr.Spans[i]
				t.tr.Flows = append(t.tr.Flows, report.Flow{FromTrack: s.Track, FromTime: s.End - 0.01*(s.End-s.Start), ToTrack: t.firstStage, ToTime: at})
			}
			first = max(first, need[k])
		}
	}
	t.tr.Counters = append(t.tr.Counters, report.Transfers(t.tr.Spans, ioTracks...)...)
	return t.tr
}

package report

import (
	"fmt"
	"sort"
)

// Waiting is the track of the trainer's stalls: one span per wait, named
// by WaitName.
const Waiting = "trainer waiting"

// BucketName names a bucket's span on a compute track: "bucket (3,5)".
func BucketName(src, dst int) string { return fmt.Sprintf("bucket (%d,%d)", src, dst) }

// WaitName names the trainer's wait before a bucket, so that a predicted
// and a measured wait for the same bucket carry the same name.
func WaitName(src, dst int) string {
	return "waiting for " + BucketName(src, dst) + "'s partitions"
}

// Trace is an epoch as a timeline of events: what each resource did and
// when (Spans), how much the buffer held and how many bytes were moving
// (Counters), and which load each bucket waited for (Flows). The
// simulator records it when asked (sim.Config.Trace); the real engine's
// measured Epoch converts to it (realrun.Epoch.Trace). Times are seconds
// since the epoch began.
type Trace struct {
	Spans    []Span
	Counters []CounterPoint
	Flows    []Flow
}

// Span is one thing a resource did: Track names the resource (DiskRead,
// CPU, "checksum (loader)", …), Name what it did ("partition 7 into slot
// 2", "bucket (3,5)"), Args the figures (bytes, edges, partition, slot).
type Span struct {
	Track      string
	Name       string
	Start, End float64
	Args       map[string]any
}

// CounterPoint is the value of a counter (Name: "buffer occupancy",
// "bytes in flight", …) from Time on.
type CounterPoint struct {
	Name  string
	Time  float64
	Value float64
}

// Flow is an arrow from a moment of one track to a moment of another: a
// load (on its read track) to the bucket that waited for it (on the
// compute track). Both ends lie inside a span of their track.
type Flow struct {
	FromTrack string
	FromTime  float64
	ToTrack   string
	ToTime    float64
}

// Transfers are the counter points of bytes in flight from spans that
// moved Args["bytes"]: the sum of the bytes of the spans running at each
// moment, on the given tracks.
func Transfers(spans []Span, tracks ...string) []CounterPoint {
	on := map[string]bool{}
	for _, t := range tracks {
		on[t] = true
	}
	type step struct {
		t     float64
		delta float64
	}
	var steps []step
	for _, s := range spans {
		b, ok := s.Args["bytes"]
		if !on[s.Track] || !ok {
			continue
		}
		v := toFloat(b)
		steps = append(steps, step{s.Start, v}, step{s.End, -v})
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].t < steps[j].t })
	var out []CounterPoint
	var cur float64
	for i, st := range steps {
		cur += st.delta
		if i+1 < len(steps) && steps[i+1].t == st.t {
			continue // one point per moment
		}
		out = append(out, CounterPoint{Name: "bytes in flight", Time: st.t, Value: max(cur, 0)})
	}
	return out
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

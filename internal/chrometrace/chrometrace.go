// Package chrometrace writes report.Traces as Chrome trace-event JSON,
// the format Perfetto's UI, chrome://tracing and speedscope open — one
// process per run, one thread per resource (and per lane where a
// resource's spans overlap), complete events, counters and flow arrows —
// and checks such a file's structure.
package chrometrace

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/tierflow/tierflow/report"
)

// Process is one run on the trace's time axis: its name ("predicted:
// beta"), its trace, and where on the axis it starts (seconds).
type Process struct {
	Name   string
	Trace  report.Trace
	Offset float64
}

// Event is one trace event as the format defines it (times in
// microseconds).
type Event struct {
	Name string         `json:"name,omitempty"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	ID   int            `json:"id,omitempty"`
	BP   string         `json:"bp,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// File is a trace file.
type File struct {
	TraceEvents     []Event `json:"traceEvents"`
	DisplayTimeUnit string  `json:"displayTimeUnit"`
}

// trackOrder puts the tracks in the order a pipeline reads, top to
// bottom; others follow by name.
var trackOrder = []string{report.DiskRead, report.CheckLoad, report.PCIeH2D, report.SSDGPU, report.DiskWrite, report.CheckWrite, report.PCIeD2H, report.CPU, report.GPU, report.Waiting}

const us = 1e6

// tick rounds a time in µs to a multiple of 1/1024 µs, so that where two
// spans touch, one's ts+dur is exactly the next one's ts (a viewer nests
// them otherwise).
func tick(t float64) float64 { return math.Round(t*1024) / 1024 }

// Build turns processes into trace events: metadata naming every process
// and thread, complete events (spans placed on lanes of their track so
// that no two overlap on one thread), counters and flows. With maxSpans >
// 0 and more spans than that in all, every process is cut at the same
// moment of its run so that at most maxSpans remain (its name then says
// how much of the run it shows, naming maxSpans as the field
// {TraceMaxSpans}, which the command renders): a viewer opens it whole.
func Build(procs []Process, maxSpans int) File {
	f := File{DisplayTimeUnit: "ms"}
	procs = capSpans(procs, maxSpans)
	for i, p := range procs {
		pid := i + 1
		f.TraceEvents = append(f.TraceEvents,
			Event{Name: "process_name", Ph: "M", Pid: pid, Args: map[string]any{"name": p.Name}},
			Event{Name: "process_sort_index", Ph: "M", Pid: pid, Args: map[string]any{"sort_index": i}})
		tids := map[string][]int{} // track → thread of each lane
		lanes := assignLanes(p.Trace.Spans)
		tracks := sortedTracks(p.Trace.Spans, p.Trace.Flows)
		next := 1
		for _, tr := range tracks {
			for l := 0; l < max(lanes.count[tr], 1); l++ {
				name := tr
				if l > 0 {
					name = fmt.Sprintf("%s #%d", tr, l+1)
				}
				tids[tr] = append(tids[tr], next)
				f.TraceEvents = append(f.TraceEvents,
					Event{Name: "thread_name", Ph: "M", Pid: pid, Tid: next, Args: map[string]any{"name": name}},
					Event{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: next, Args: map[string]any{"sort_index": next}})
				next++
			}
		}
		for k, s := range p.Trace.Spans {
			ts, end := tick((p.Offset+s.Start)*us), tick((p.Offset+s.End)*us)
			d := math.Max(end-ts, 0)
			f.TraceEvents = append(f.TraceEvents, Event{Name: s.Name, Cat: s.Track, Ph: "X", Ts: ts, Dur: &d,
				Pid: pid, Tid: tids[s.Track][lanes.of[k]], Args: s.Args})
		}
		for _, c := range p.Trace.Counters {
			f.TraceEvents = append(f.TraceEvents, Event{Name: c.Name, Ph: "C", Ts: tick((p.Offset + c.Time) * us), Pid: pid, Args: map[string]any{"value": c.Value}})
		}
		for _, fl := range p.Trace.Flows {
			id := len(f.TraceEvents) + 1 // unique in the file
			from, okF := laneAt(p.Trace.Spans, lanes, fl.FromTrack, fl.FromTime)
			to, okT := laneAt(p.Trace.Spans, lanes, fl.ToTrack, fl.ToTime)
			if !okF || !okT {
				continue // an end outside every span: the viewer could not bind it
			}
			f.TraceEvents = append(f.TraceEvents,
				Event{Name: "waited for", Cat: "flow", Ph: "s", ID: id, Ts: tick((p.Offset + fl.FromTime) * us), Pid: pid, Tid: tids[fl.FromTrack][from]},
				Event{Name: "waited for", Cat: "flow", Ph: "f", BP: "e", ID: id, Ts: tick((p.Offset + fl.ToTime) * us), Pid: pid, Tid: tids[fl.ToTrack][to]})
		}
	}
	return f
}

// Write writes processes as Chrome trace-event JSON (Build).
func Write(w io.Writer, procs []Process, maxSpans int) error {
	return json.NewEncoder(w).Encode(Build(procs, maxSpans))
}

// capSpans cuts every process at the earliest moment (seconds into its
// run) before which at most maxSpans spans start in all.
func capSpans(procs []Process, maxSpans int) []Process {
	var starts []float64
	for _, p := range procs {
		for _, s := range p.Trace.Spans {
			starts = append(starts, s.Start)
		}
	}
	if maxSpans <= 0 || len(starts) <= maxSpans {
		return procs
	}
	sort.Float64s(starts)
	cut := starts[maxSpans] // spans starting at or after it go
	out := make([]Process, len(procs))
	for i, p := range procs {
		var end float64
		for _, s := range p.Trace.Spans {
			end = math.Max(end, s.End)
		}
		q := p
		q.Trace = report.Trace{}
		for _, s := range p.Trace.Spans {
			if s.Start < cut {
				q.Trace.Spans = append(q.Trace.Spans, s)
			}
		}
		for _, c := range p.Trace.Counters {
			if c.Time < cut {
				q.Trace.Counters = append(q.Trace.Counters, c)
			}
		}
		for _, fl := range p.Trace.Flows {
			if fl.FromTime < cut && fl.ToTime < cut {
				q.Trace.Flows = append(q.Trace.Flows, fl)
			}
		}
		if end > cut {
			q.Name = fmt.Sprintf("%s (its first %.3g s of %.3g s: {TraceMaxSpans})", p.Name, cut, end)
		}
		out[i] = q
	}
	return out
}

type laneSet struct {
	of    []int          // lane of each span
	count map[string]int // lanes of each track
}

// assignLanes puts each span on the first lane of its track whose last
// span has ended, so that no two spans of one lane overlap.
func assignLanes(spans []Span) laneSet {
	ls := laneSet{of: make([]int, len(spans)), count: map[string]int{}}
	idx := make([]int, len(spans))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return spans[idx[a]].Start < spans[idx[b]].Start })
	ends := map[string][]float64{}
	for _, i := range idx {
		s := spans[i]
		lane := -1
		for l, e := range ends[s.Track] {
			if e <= s.Start {
				lane = l
				break
			}
		}
		if lane < 0 {
			lane = len(ends[s.Track])
			ends[s.Track] = append(ends[s.Track], 0)
		}
		ends[s.Track][lane] = s.End
		ls.of[i] = lane
		ls.count[s.Track] = len(ends[s.Track])
	}
	return ls
}

// Span is report.Span.
type Span = report.Span

// laneAt is the lane of the span of track that holds time t.
func laneAt(spans []Span, ls laneSet, track string, t float64) (int, bool) {
	for i, s := range spans {
		if s.Track == track && s.Start <= t && t <= s.End {
			return ls.of[i], true
		}
	}
	return 0, false
}

func sortedTracks(spans []Span, flows []report.Flow) []string {
	seen := map[string]bool{}
	for _, s := range spans {
		seen[s.Track] = true
	}
	rank := func(t string) int {
		for i, o := range trackOrder {
			if o == t {
				return i
			}
		}
		return len(trackOrder)
	}
	var out []string
	for t := range seen {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		ri, rj := rank(out[i]), rank(out[j])
		if ri != rj {
			return ri < rj
		}
		return out[i] < out[j]
	})
	return out
}

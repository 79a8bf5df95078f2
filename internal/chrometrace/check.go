package chrometrace

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Check reads a trace file and checks what a viewer relies on: every
// event has a phase and non-negative microsecond times; complete events
// have a duration; no two complete events of one thread overlap; every
// flow's start has its finish and both ends lie inside a complete event
// of their thread; and metadata names every process and thread used.
func Check(data []byte) error {
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	if len(f.TraceEvents) == 0 {
		return fmt.Errorf("trace: no events")
	}
	type thread struct{ pid, tid int }
	procNames, threadNames := map[int]bool{}, map[thread]bool{}
	spans := map[thread][][2]float64{}
	flows := map[int][]Event{}
	usedP, usedT := map[int]bool{}, map[thread]bool{}
	for i, e := range f.TraceEvents {
		switch e.Ph {
		case "M":
			switch e.Name {
			case "process_name":
				procNames[e.Pid] = true
			case "thread_name":
				threadNames[thread{e.Pid, e.Tid}] = true
			}
			continue
		case "X":
			if e.Dur == nil || *e.Dur < 0 {
				return fmt.Errorf("trace: event %d (%q): a complete event without a duration", i, e.Name)
			}
			th := thread{e.Pid, e.Tid}
			spans[th] = append(spans[th], [2]float64{e.Ts, e.Ts + *e.Dur})
			usedT[th] = true
		case "C":
			if _, ok := e.Args["value"]; !ok {
				return fmt.Errorf("trace: counter %q at %g µs has no value", e.Name, e.Ts)
			}
		case "s", "f":
			flows[e.ID] = append(flows[e.ID], e)
			usedT[thread{e.Pid, e.Tid}] = true
		default:
			return fmt.Errorf("trace: event %d: unknown phase %q", i, e.Ph)
		}
		if e.Ts < 0 {
			return fmt.Errorf("trace: event %d (%q): negative time %g µs", i, e.Name, e.Ts)
		}
		usedP[e.Pid] = true
	}
	for p := range usedP {
		if !procNames[p] {
			return fmt.Errorf("trace: process %d has no name", p)
		}
	}
	for th := range usedT {
		if !threadNames[th] {
			return fmt.Errorf("trace: thread %d of process %d has no name", th.tid, th.pid)
		}
	}
	for th, ss := range spans {
		sort.Slice(ss, func(i, j int) bool { return ss[i][0] < ss[j][0] })
		for i := 1; i < len(ss); i++ {
			// Build puts times on a 1/1024 µs grid, so spans that touch
			// share their bound exactly: any overlap is one a viewer sees.
			if ss[i][0] < ss[i-1][1] {
				return fmt.Errorf("trace: thread %d of process %d: events at %.3f and %.3f µs overlap", th.tid, th.pid, ss[i-1][0], ss[i][0])
			}
		}
	}
	inside := func(e Event) bool {
		for _, s := range spans[thread{e.Pid, e.Tid}] {
			if s[0] <= e.Ts && e.Ts <= s[1] {
				return true
			}
		}
		return false
	}
	for id, es := range flows {
		if len(es) != 2 || es[0].Ph != "s" || es[1].Ph != "f" {
			return fmt.Errorf("trace: flow %d: want a start and a finish, got %d events", id, len(es))
		}
		for _, e := range es {
			if !inside(e) {
				return fmt.Errorf("trace: flow %d: its %s end at %.3f µs lies in no event of thread %d", id, e.Ph, e.Ts, e.Tid)
			}
		}
	}
	return nil
}

package realrun

import (
	"fmt"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/report"
)

// minWait is the shortest wait the trace shows: below it the trainer only
// took the buffer's lock, its partitions were there.
const minWait = 50e-6

// Trace is the measured epoch as a timeline (report.Trace), the same
// record the simulator predicts: its loads and write-backs on the disk
// read and write tracks (named by partition and slot, with their bytes),
// each bucket's training on the engine's compute track and the trainer's
// waits before it, buffer occupancy and bytes in flight, an arrow from
// every load to the bucket that first needed it, and — from a GPU engine
// — the sampled GPU utilisation. The loader's check of a load's checksum
// and the writer's checksum before a write are spans of their own on the
// checksum tracks, as the simulator draws them (a load recorded without
// its check's span keeps the check inside its disk span). It needs the
// epoch's events (IO and Buckets, kept with --json or --trace) and its
// Plan.
func (ep Epoch) Trace(plan *orderings.Plan) report.Trace {
	var tr report.Trace
	compute := report.CPU
	if ep.GPU != nil {
		compute = report.GPU
	}
	// Loads are recorded in Plan order; a resumed epoch starts past the
	// loads done before its checkpoint.
	loads := 0
	for _, e := range ep.IO {
		if e.Kind == "load" {
			loads++
		}
	}
	j := len(plan.Loads) - loads
	loadSpan := map[int]int{}
	occupied := 0
	for _, e := range ep.IO {
		args := map[string]any{"partition": e.Partition, "slot": e.Slot, "bytes": e.Bytes}
		switch e.Kind {
		case "resident-load":
			tr.Spans = append(tr.Spans, report.Span{Track: report.DiskRead, Name: "resident table", Start: e.Start, End: e.End, Args: args})
			continue
		case "resident-write":
			tr.Spans = append(tr.Spans, report.Span{Track: report.DiskWrite, Name: "resident table (final write)", Start: e.Start, End: e.End, Args: args})
			continue
		case "load", "restore":
			name := fmt.Sprintf("partition %d into slot %d", e.Partition, e.Slot)
			if e.Kind == "restore" {
				name = fmt.Sprintf("partition %d restored into slot %d", e.Partition, e.Slot)
			}
			end := e.End
			if e.CheckEnd > e.CheckStart && e.CheckStart > e.Start {
				end = e.CheckStart
				tr.Spans = append(tr.Spans, report.Span{Track: report.CheckLoad, Name: name, Start: e.CheckStart, End: e.CheckEnd, Args: args})
			}
			tr.Spans = append(tr.Spans, report.Span{Track: report.DiskRead, Name: name, Start: e.Start, End: end, Args: args})
			fills := e.Kind == "restore"
			if e.Kind == "load" {
				loadSpan[j] = len(tr.Spans) - 1
				fills = plan.Loads[j].Evicts == orderings.None
				j++
			}
			if fills { // a slot that was empty
				occupied++
				tr.Counters = append(tr.Counters, report.CounterPoint{Name: "buffer occupancy (partitions)", Time: e.End, Value: float64(occupied)})
			}
		default:
			name := fmt.Sprintf("partition %d out of slot %d", e.Partition, e.Slot)
			switch {
			case e.Kind == "checkpoint" && e.Partition == store.ResidentPart:
				name = "checkpoint: resident table"
			case e.Kind == "checkpoint":
				name = fmt.Sprintf("checkpoint: partition %d", e.Partition)
			case e.Final:
				name = fmt.Sprintf("partition %d (final flush)", e.Partition)
				occupied--
				tr.Counters = append(tr.Counters, report.CounterPoint{Name: "buffer occupancy (partitions)", Time: e.Start, Value: float64(occupied)})
			}
			if e.CheckEnd > e.CheckStart {
				tr.Spans = append(tr.Spans, report.Span{Track: report.CheckWrite, Name: name, Start: e.CheckStart, End: e.CheckEnd, Args: args})
			}
			tr.Spans = append(tr.Spans, report.Span{Track: report.DiskWrite, Name: name, Start: e.Start, End: e.End, Args: args})
		}
	}
	start := map[int]float64{} // where each bucket's training begins
	for i, b := range ep.Buckets {
		k := ep.ResumedAtBucket + i
		begin := b.Start + b.StallSeconds
		if b.StallSeconds >= minWait {
			tr.Spans = append(tr.Spans, report.Span{Track: report.Waiting, Name: report.WaitName(b.Src, b.Dst), Start: b.Start, End: begin})
		}
		tr.Spans = append(tr.Spans, report.Span{Track: compute, Name: report.BucketName(b.Src, b.Dst), Start: begin, End: b.End, Args: map[string]any{"edges": b.Edges}})
		start[k] = begin
	}
	need := plan.Arrivals()
	first := 0
	for k := range plan.Buckets {
		for l := first; l < need[k]; l++ {
			i, okL := loadSpan[l]
			at, okB := start[k]
			if okL && okB {
				s := tr.Spans[i]
				tr.Flows = append(tr.Flows, report.Flow{FromTrack: s.Track, FromTime: s.End - 0.01*(s.End-s.Start), ToTrack: compute, ToTime: at})
			}
		}
		first = max(first, need[k])
	}
	tr.Counters = append(tr.Counters, report.Transfers(tr.Spans, report.DiskRead, report.DiskWrite)...)
	if ep.GPU != nil {
		for _, s := range ep.GPU.Timeline {
			tr.Counters = append(tr.Counters, report.CounterPoint{Name: "gpu utilization", Time: s.Seconds, Value: s.Utilization})
		}
	}
	return tr
}

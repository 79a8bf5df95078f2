package sim

import (
	"fmt"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/executor"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/workload"
)

// The single-machine pipeline of engine: batches fed to the compute
// stages, buckets advanced, and the executor's actions (the Plan's loads,
// write-backs, installs and final flush, decided by orderings/executor as
// for the real engine) carried out on the modelled devices.

func (e *engine) batchesOf(k int) int {
	if e.cfg.System.Batches == OnCPU {
		if e.edges[k] > 0 {
			return 1
		}
		return 0
	}
	return workload.BatchCount(e.edges[k], e.cfg.Training.Batch)
}

func (e *engine) tryFeed() {
	sys := e.cfg.System
	for e.kb < e.nb && e.inFlight < sys.Staleness {
		k := e.kb
		if e.checkpointing {
			return
		}
		if e.bi == 0 && e.checkpointDue(k) {
			e.checkpoint(k)
			return
		}
		if e.installed < e.need[k] || !e.residentIn {
			// Stall is time the compute stages sit idle for want of a
			// partition: blocked with nothing left in flight.
			if e.waitStart < 0 && e.inFlight == 0 {
				e.waitStart = e.k.Now()
			}
			return
		}
		if e.waitStart >= 0 {
			e.stall += e.k.Now() - e.waitStart
			if e.tr != nil {
				b := e.cfg.Plan.Buckets[k]
				e.tr.span(report.Waiting, report.WaitName(b.Src, b.Dst), e.waitStart, e.k.Now(), nil)
			}
			e.waitStart = -1
		}
		n := e.batchesOf(k)
		if e.bi == 0 {
			e.remaining[k] = n
		}
		if e.bi < n {
			size := workload.BatchSize(e.edges[k], e.cfg.Training.Batch, e.bi)
			if e.cfg.System.Batches == OnCPU {
				size = int(e.edges[k])
			}
			e.bi++
			e.inFlight++
			e.feedBatch(size, k, func() { e.batchDone(k) })
		}
		if e.bi >= n {
			e.fed[k] = true
			e.kb++
			e.bi = 0
			e.advance()
		}
	}
}

func (e *engine) batchDone(k int) {
	e.inFlight--
	e.remaining[k]--
	e.advance()
	e.tryFeed()
}

// advance moves the completed-bucket counter over finished buckets (they
// finish in order: every stage is first-come first-served) and tells the
// executor, which installs, issues and, at the end of the epoch, flushes.
func (e *engine) advance() {
	moved := false
	for e.completed < e.nb && e.fed[e.completed] && e.remaining[e.completed] == 0 {
		b := e.cfg.Plan.Buckets[e.completed]
		e.dirty[b.Src], e.dirty[b.Dst] = true, true
		e.completed++
		moved = true
	}
	if moved {
		e.apply(e.x.Completed(e.completed))
	}
}

// apply carries out the executor's actions on the modelled devices, in
// order; the transfers report back to the executor as they finish.
func (e *engine) apply(acts []executor.Action) {
	pl := e.cfg.Plan
	for _, a := range acts {
		switch a.Kind {
		case executor.ReadResident:
			e.readResident()
		case executor.Read:
			l := pl.Loads[a.Load]
			e.readPartition(e.pbytes, e.loadName(l), e.partArgs(l.Partition, l.Slot), a.Load, func() {
				e.apply(e.x.ReadDone(a.Load))
			})
		case executor.Write:
			l := pl.Loads[a.Load]
			// With GPU slots the evicted partition is first copied back
			// from the GPU; the executor hears when it is out.
			e.evictAndWrite(e.pbytes, a.Load, e.evictName(l), e.partArgs(l.Evicts, l.Slot),
				func() { e.apply(e.x.Evicted(a.Load)) },
				func() { e.apply(e.x.Written(a.Load)) })
		case executor.Install:
			l := pl.Loads[a.Load]
			e.resident[l.Partition] = true
			if l.Evicts != orderings.None {
				e.resident[l.Evicts], e.dirty[l.Evicts] = false, false
			}
			if e.tr != nil {
				n := 0
				for _, r := range e.resident {
					if r {
						n++
					}
				}
				e.tr.tr.Counters = append(e.tr.tr.Counters, report.CounterPoint{Name: "buffer occupancy (partitions)", Time: e.k.Now(), Value: float64(n)})
			}
			e.installed++
			e.tryFeed()
		case executor.Flush:
			var name string
			if e.tr != nil {
				name = fmt.Sprintf("partition %d (final flush)", a.Partition)
			}
			e.writePartition(e.pbytes, name, e.partArgs(a.Partition, -1), func() { e.apply(e.x.Flushed()) })
		case executor.WriteResident:
			e.writeResident()
		}
	}
	e.writeCheckpoint() // a checkpoint under way waits for the executor to be quiet
}

// partArgs are a partition transfer's figures in the trace (slot < 0: none).
func (e *engine) partArgs(part, slot int) map[string]any {
	if e.tr == nil {
		return nil
	}
	a := map[string]any{"partition": part, "bytes": int64(e.pbytes)}
	if slot >= 0 {
		a["slot"] = slot
	}
	return a
}

// evictName names the write-back of the partition load l evicts.
func (e *engine) evictName(l orderings.Load) string {
	if e.tr == nil {
		return ""
	}
	return fmt.Sprintf("partition %d out of slot %d", l.Evicts, l.Slot)
}

// loadName names load l's read in the trace.
func (e *engine) loadName(l orderings.Load) string {
	if e.tr == nil {
		return ""
	}
	return fmt.Sprintf("partition %d into slot %d", l.Partition, l.Slot)
}

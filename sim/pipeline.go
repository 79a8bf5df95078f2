package sim

import (
	"fmt"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/report"
)

// The single-machine pipeline of engine: batches fed to the compute
// stages, buckets advanced, and the Plan's loads issued and installed as
// slots free up.

func (e *engine) batchesOf(k int) int {
	if e.cfg.System.Batches == OnCPU {
		if e.edges[k] > 0 {
			return 1
		}
		return 0
	}
	b := int64(e.cfg.Training.Batch)
	return int((e.edges[k] + b - 1) / b)
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
		if e.loadsDone < e.need[k] || !e.residentIn {
			// Stall is time the compute stages sit idle for want of a
			// partition: blocked with nothing left in flight.
			if e.waitStart < 0 && e.inFlight == 0 {
				e.waitStart = e.k.Now()
			}
			e.tryIssue()
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
			size := e.cfg.Training.Batch
			if e.bi == n-1 {
				size = int(e.edges[k] - int64(n-1)*int64(size))
			}
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
// finish in order: every stage is first-come first-served) and, at the
// end of the epoch, flushes the resident partitions.
func (e *engine) advance() {
	moved := false
	for e.completed < e.nb && e.fed[e.completed] && e.remaining[e.completed] == 0 {
		b := e.cfg.Plan.Buckets[e.completed]
		e.dirty[b.Src], e.dirty[b.Dst] = true, true
		e.completed++
		moved = true
	}
	if !moved {
		return
	}
	e.tryInstall()
	e.tryIssue()
	if e.completed == e.nb {
		for _, x := range e.cfg.Plan.FinalResident {
			if x != orderings.None {
				var name string
				if e.tr != nil {
					name = fmt.Sprintf("partition %d (final flush)", x)
				}
				e.finalWrites++
				e.writePartition(e.pbytes, name, e.partArgs(x, -1), func() {
					if e.finalWrites--; e.finalWrites == 0 {
						e.writeResident()
					}
				})
			}
		}
		if e.finalWrites == 0 {
			e.writeResident()
		}
	}
}

// tryIssue starts reading the next load when the reader is idle and
// either its slot is free (the partition it replaces has had its last use)
// or, with prefetch, a staging buffer is free (System.PrefetchDepth).
func (e *engine) tryIssue() {
	pl := e.cfg.Plan
	sys := e.cfg.System
	if e.reading || !e.residentIn || e.nextRead >= len(pl.Loads) {
		return
	}
	j := e.nextRead
	l := pl.Loads[j]
	slotFree := l.SlotFree(e.completed) && e.loadsDone == j
	switch {
	case !l.MayIssue(e.completed, sys.Prefetch):
		return // on demand: wait until every earlier bucket is done
	case !slotFree && (!sys.Prefetch || e.staged >= sys.PrefetchDepth):
		return
	}
	e.reading = true
	read := func() {
		e.readPartition(e.pbytes, e.loadName(l), e.partArgs(l.Partition, l.Slot), j, func() {
			e.reading = false
			e.nextRead++
			e.staged++
			e.tryInstall()
			e.tryIssue()
		})
	}
	if slotFree && l.Evicts != orderings.None && sys.SyncWrites {
		e.evictionWritten[j] = true
		e.writePartition(e.pbytes, e.evictName(l), e.partArgs(l.Evicts, l.Slot), read)
		return
	}
	if slotFree && l.Evicts != orderings.None && sys.WriteBuffers > 0 {
		if e.pendingWrites >= sys.WriteBuffers {
			e.reading = false
			return // wait for the writer to free a buffer
		}
		e.evictionWritten[j] = true
		e.pendingWrites++
		// The loader hands the evicted partition to the writer (with GPU
		// slots, once it is back from the GPU) and reads the new one.
		e.evictAndWrite(e.pbytes, e.evictName(l), e.partArgs(l.Evicts, l.Slot), read, func() {
			e.pendingWrites--
			e.tryIssue()
		})
		return
	}
	read()
}

// tryInstall moves read partitions into their slots, in Plan order, once
// the partition each replaces has had its last use; the replaced partition
// goes to the writer (or, with synchronous writes, is written first). With
// WriteBuffers set, an evicted partition needs a free write buffer, so a
// load waits while the writer is still busy with earlier evictions.
func (e *engine) tryInstall() {
	pl := e.cfg.Plan
	sys := e.cfg.System
	for e.staged > 0 {
		j := e.loadsDone
		l := pl.Loads[j]
		if !l.SlotFree(e.completed) {
			return
		}
		install := func() {
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
			e.loadsDone++
			e.tryFeed()
			e.tryIssue()
		}
		if l.Evicts == orderings.None || e.evictionWritten[j] {
			e.staged--
			install()
			continue
		}
		if !sys.SyncWrites && sys.WriteBuffers > 0 && e.pendingWrites >= sys.WriteBuffers {
			return // retried when a write completes
		}
		e.staged--
		e.evictionWritten[j] = true
		if sys.SyncWrites {
			e.writePartition(e.pbytes, e.evictName(l), e.partArgs(l.Evicts, l.Slot), func() {
				install()
				e.tryInstall()
			})
			return
		}
		if sys.WriteBuffers > 0 {
			e.pendingWrites++
			e.writePartition(e.pbytes, e.evictName(l), e.partArgs(l.Evicts, l.Slot), func() {
				e.pendingWrites--
				e.tryInstall()
				e.tryIssue()
			})
		} else {
			e.writePartition(e.pbytes, e.evictName(l), e.partArgs(l.Evicts, l.Slot), func() {})
		}
		install()
	}
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

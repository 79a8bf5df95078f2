// Package executor carries out a Plan's buffer schedule as plain state,
// with no clock and no I/O: events in (a read, an eviction or a write
// finished, buckets completed), actions out (read load J's partition,
// write back the partition it evicts, install it in its slot, flush a
// slot at the end), so that the simulator drives it under simulated time
// and the real engines under the wall clock, and the two can differ only
// in how long each action takes.
//
// The rules it keeps are those of a buffer of Plan.C slots with one
// reader, loads read one at a time in Plan order:
//
//   - a load is issued once its slot is free (the partition it replaces
//     has had its last use: orderings.Load.SlotFree), or earlier into a
//     staging buffer when the Policy has one free, and never before
//     orderings.Load.MayIssue allows (without prefetch, only once every
//     bucket before the one that needs it is done);
//   - the partition it evicts is written back before the read
//     (Policy.SyncWrites), or handed to a writer that writes it while the
//     read goes on, bounded by Policy.WriteBuffers evicted partitions
//     waiting at once (0: unbounded);
//   - loads are installed in Plan order, each once its slot is free;
//   - when every bucket is done and every load installed, the partitions
//     still resident (Plan.FinalResident) are flushed, and then the
//     resident table (Policy.Resident) is written.
//
// A driver calls the event methods as its transfers finish and carries
// out the actions they return, in order. Which buckets may train is the
// driver's to decide from the Install actions it has carried out and
// Plan.Arrivals; how batches are fed and how long anything takes are its
// own.
package executor

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tierflow/tierflow/orderings"
)

// Policy is how a buffer manager may use its memory and its writer.
type Policy struct {
	// Prefetch lets a load be issued as soon as a buffer can take it;
	// without it a load waits until every bucket before the one that
	// needs it is done (on demand).
	Prefetch bool `json:"prefetch"`
	// Staging is the number of staging buffers a prefetched partition
	// may be read into before its slot is free.
	Staging int `json:"staging"`
	// SyncWrites makes a load wait until the partition it replaces has
	// been written back.
	SyncWrites bool `json:"sync_writes"`
	// WriteBuffers, when positive, bounds the evicted partitions waiting
	// to be written at once; a load that evicts waits for one.
	WriteBuffers int `json:"write_buffers"`
	// Resident says a resident table is read before any partition (no
	// load is issued until it is in) and written after the final flush.
	Resident bool `json:"resident"`
	// EagerWrites writes an evicted partition back as soon as its last
	// use has passed, in the order of those last uses, beside whatever
	// is being read (GE2's copy back to CPU memory, so that another GPU
	// may take the partition); the load into its slot does not wait for
	// the write.
	EagerWrites bool `json:"eager_writes,omitempty"`
	// WriteAfterRead holds an evicted partition's write-back off the
	// device until the read it made way for has arrived (the driver's
	// part: the write's own preparation, a checksum, may run beside the
	// read). Reads and writes of one device then never share it: the
	// read the trainer waits for goes at the device's rate alone, and the
	// write follows it, done before the next load that evicts may start.
	WriteAfterRead bool `json:"write_after_read,omitempty"`
}

// Engine is the Policy of tierflow's own engines (realrun's buffer
// manager, the CPU and CUDA engines alike): no staging buffer, one spare
// buffer for the evicted partition, which the writer checksums while the
// next load reads and writes once that read has arrived (WriteAfterRead),
// prefetch as asked.
func Engine(prefetch bool) Policy {
	return Policy{Prefetch: prefetch, WriteBuffers: 1, WriteAfterRead: true}
}

// Kind is what an action does.
type Kind uint8

// The actions.
const (
	// ReadResident reads the resident table; the driver reports
	// ResidentRead when it is in memory.
	ReadResident Kind = iota + 1
	// Read reads load Load's partition (into its slot, or into a staging
	// buffer when the slot is not free yet); the driver reports ReadDone.
	Read
	// Write writes back the partition load Load evicts, out of Slot: the
	// driver reports Evicted once the partition has left the slot's
	// memory (at once unless the slot lives on a GPU) and Written once it
	// is on disk.
	Write
	// Install puts load Load's partition into its slot: the partition it
	// evicts is gone, the loaded one resident. It takes no time and has
	// no event.
	Install
	// Flush writes the partition still in Slot at the epoch's end; the
	// driver reports Flushed.
	Flush
	// WriteResident writes the resident table after the final flush.
	WriteResident
)

var kindNames = [...]string{ReadResident: "read-resident", Read: "read", Write: "write", Install: "install", Flush: "flush", WriteResident: "write-resident"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Action is one thing the driver must do.
type Action struct {
	Kind Kind
	// Load is the Plan load (index into Plan.Loads) of a Read, Write or
	// Install; -1 otherwise.
	Load int
	// Partition and Slot: the partition read and its slot (Read,
	// Install), the partition written back and the slot it leaves
	// (Write), the partition flushed and its slot (Flush); None for the
	// resident table.
	Partition, Slot int
}

func (a Action) String() string {
	switch a.Kind {
	case Read, Install:
		return fmt.Sprintf("%s load %d: partition %d into slot %d", a.Kind, a.Load, a.Partition, a.Slot)
	case Write:
		return fmt.Sprintf("write load %d: partition %d out of slot %d", a.Load, a.Partition, a.Slot)
	case Flush:
		return fmt.Sprintf("flush partition %d out of slot %d", a.Partition, a.Slot)
	}
	return a.Kind.String()
}

// after is what a write's Evicted and Written events lead to.
type after uint8

const (
	none              after = iota
	readAfterWrite          // issued with SyncWrites: the read waits for the write
	readAfterEvict          // issued with a write buffer: the read starts once evicted
	installAfterWrite       // installed with SyncWrites
	installBuffered         // installed with a write buffer
)

// Executor is one epoch's buffer schedule in progress.
type Executor struct {
	plan *orderings.Plan
	pol  Policy

	completed  int // buckets done, in order
	nextRead   int // the next load to read
	reading    bool
	staged     int // read, not yet installed
	loadsDone  int // installed
	pending    int // evicted partitions being written (WriteBuffers)
	residentIn bool
	paused     bool
	flushed    bool // the final flush was issued
	flushing   int  // final writes in flight
	// then is what each load's write leads to; evictionWritten says the
	// write of the partition it evicts was issued.
	then            []after
	evictionWritten []bool
	// evictions are the loads that evict, by (IssueAt, index), and
	// nextEvict the first not yet written (EagerWrites).
	evictions []int
	nextEvict int
	// gate, when set, must allow a load before it is issued.
	gate func(load int) bool

	out []Action
	// observe, when set, sees every action as it is emitted.
	observe func(Action)
}

// New starts executing plan under pol, from the epoch's beginning.
func New(plan *orderings.Plan, pol Policy) *Executor {
	x := &Executor{plan: plan, pol: pol, residentIn: !pol.Resident,
		then: make([]after, len(plan.Loads)), evictionWritten: make([]bool, len(plan.Loads))}
	if pol.EagerWrites {
		for j, l := range plan.Loads {
			if l.Evicts != orderings.None {
				x.evictions = append(x.evictions, j)
			}
		}
		slices.SortStableFunc(x.evictions, func(a, b int) int { return cmp.Compare(plan.Loads[a].IssueAt, plan.Loads[b].IssueAt) })
	}
	return x
}

// Observe calls f with every action from now on, as it is emitted (for
// tests and traces that compare drivers).
func (x *Executor) Observe(f func(Action)) { x.observe = f }

// Gate makes every load wait, beyond the Policy's rules, until allow
// says it may be issued (several GPUs sharing partitions: a partition's
// previous holder must have written it back first); Retry asks again.
func (x *Executor) Gate(allow func(load int) bool) { x.gate = allow }

// Retry reports that a gate may now allow the next load.
func (x *Executor) Retry() []Action {
	x.issue()
	return x.flush()
}

// Policy is the executor's policy.
func (x *Executor) Policy() Policy { return x.pol }

// Restore puts the executor where a checkpoint inside the epoch left it:
// the first bucket buckets done, the first loads loads installed, the
// resident table (if any) in memory.
func (x *Executor) Restore(buckets, loads int) error {
	if buckets < 0 || buckets > len(x.plan.Buckets) || loads < 0 || loads > len(x.plan.Loads) {
		return fmt.Errorf("executor: position bucket %d, load %d outside a Plan of %d buckets and %d loads", buckets, loads, len(x.plan.Buckets), len(x.plan.Loads))
	}
	x.completed, x.nextRead, x.loadsDone = buckets, loads, loads
	x.residentIn = true
	return nil
}

// Start begins the epoch: the resident table's read, or the first loads.
func (x *Executor) Start() []Action {
	if !x.residentIn {
		x.emit(Action{Kind: ReadResident, Load: -1, Partition: orderings.None, Slot: orderings.None})
	}
	x.issue()
	return x.flush()
}

// ResidentRead reports the resident table in memory.
func (x *Executor) ResidentRead() []Action {
	x.residentIn = true
	x.issue()
	return x.flush()
}

// ReadDone reports load j's read finished.
func (x *Executor) ReadDone(j int) []Action {
	x.reading = false
	x.nextRead++
	x.staged++
	x.install()
	x.issue()
	return x.flush()
}

// Evicted reports that the partition load j evicts has left its slot.
func (x *Executor) Evicted(j int) []Action {
	if x.then[j] == readAfterEvict {
		x.emitLoad(Read, j)
	}
	return x.flush()
}

// Written reports the write-back of the partition load j evicts on disk.
func (x *Executor) Written(j int) []Action {
	switch x.then[j] {
	case readAfterWrite:
		x.emitLoad(Read, j)
	case readAfterEvict:
		x.pending--
		x.issue()
	case installAfterWrite:
		x.installed(j)
		x.install()
	case installBuffered:
		x.pending--
		x.install()
		x.issue()
	}
	x.then[j] = none
	return x.flush()
}

// Completed reports the first n buckets done (n never decreases).
func (x *Executor) Completed(n int) []Action {
	if n > x.completed {
		x.completed = n
		x.evict()
		x.install()
		x.issue()
		x.finish()
	}
	return x.flush()
}

// Flushed reports one final write on disk.
func (x *Executor) Flushed() []Action {
	x.flushing--
	if x.flushing == 0 && x.pol.Resident {
		x.emit(Action{Kind: WriteResident, Load: -1, Partition: orderings.None, Slot: orderings.None})
	}
	return x.flush()
}

// Pause holds back every load not yet issued (a checkpoint is being
// taken); Quiet says when nothing issued is still in flight.
func (x *Executor) Pause() { x.paused = true }

// Resume lets loads be issued again after Pause.
func (x *Executor) Resume() []Action {
	x.paused = false
	x.issue()
	return x.flush()
}

// Quiet says no read and no counted write-back of an evicted partition
// (Policy.WriteBuffers) is in flight or waiting to start; a partition
// read into a staging buffer may wait there for its slot.
func (x *Executor) Quiet() bool { return !x.reading && x.pending == 0 }

// Installed is the number of loads installed.
func (x *Executor) Installed() int { return x.loadsDone }

// Done says every load is installed and the final flush issued.
func (x *Executor) Done() bool { return x.flushed }

func (x *Executor) emit(a Action) {
	x.out = append(x.out, a)
	if x.observe != nil {
		x.observe(a)
	}
}

func (x *Executor) emitLoad(k Kind, j int) {
	l := x.plan.Loads[j]
	a := Action{Kind: k, Load: j, Partition: l.Partition, Slot: l.Slot}
	if k == Write {
		a.Partition = l.Evicts
	}
	x.emit(a)
}

func (x *Executor) flush() []Action {
	out := x.out
	x.out = nil
	return out
}

// issue starts reading the next load when the reader is idle and either
// its slot is free or, with prefetch, a staging buffer is.
func (x *Executor) issue() {
	loads := x.plan.Loads
	if x.reading || !x.residentIn || x.paused || x.nextRead >= len(loads) {
		return
	}
	j := x.nextRead
	l := loads[j]
	slotFree := l.SlotFree(x.completed) && x.loadsDone == j
	switch {
	case !l.MayIssue(x.completed, x.pol.Prefetch):
		return // on demand: wait until every earlier bucket is done
	case !slotFree && (!x.pol.Prefetch || x.staged >= x.pol.Staging):
		return
	}
	if x.gate != nil && !x.gate(j) {
		return
	}
	evicts := slotFree && l.Evicts != orderings.None && !x.evictionWritten[j]
	switch {
	case evicts && x.pol.SyncWrites:
		x.reading, x.then[j], x.evictionWritten[j] = true, readAfterWrite, true
		x.emitLoad(Write, j)
	case evicts && x.pol.WriteBuffers > 0:
		if x.pending >= x.pol.WriteBuffers {
			return // wait for the writer to free a buffer
		}
		x.reading, x.then[j], x.evictionWritten[j] = true, readAfterEvict, true
		x.pending++
		x.emitLoad(Write, j)
	default:
		x.reading = true
		x.emitLoad(Read, j)
	}
}

// evict writes back, with EagerWrites, every evicted partition whose last
// use has passed.
func (x *Executor) evict() {
	for x.nextEvict < len(x.evictions) && x.plan.Loads[x.evictions[x.nextEvict]].SlotFree(x.completed) {
		j := x.evictions[x.nextEvict]
		x.nextEvict++
		x.evictionWritten[j] = true
		x.emitLoad(Write, j)
	}
}

// install installs read loads, in Plan order, once the partition each
// replaces has had its last use; the replaced partition goes to the
// writer first when nobody wrote it yet (with SyncWrites, the install
// waits for the write; with write buffers, for a free one).
func (x *Executor) install() {
	loads := x.plan.Loads
	for x.staged > 0 {
		j := x.loadsDone
		l := loads[j]
		if !l.SlotFree(x.completed) {
			return
		}
		if l.Evicts == orderings.None || x.evictionWritten[j] {
			x.staged--
			x.installed(j)
			continue
		}
		if !x.pol.SyncWrites && x.pol.WriteBuffers > 0 && x.pending >= x.pol.WriteBuffers {
			return // retried when a write completes
		}
		x.staged--
		x.evictionWritten[j] = true
		switch {
		case x.pol.SyncWrites:
			x.then[j] = installAfterWrite
			x.emitLoad(Write, j)
			return
		case x.pol.WriteBuffers > 0:
			x.pending++
			x.then[j] = installBuffered
		default:
			x.then[j] = none
		}
		x.emitLoad(Write, j)
		x.installed(j)
	}
}

// installed installs load j and issues what it frees.
func (x *Executor) installed(j int) {
	x.loadsDone++
	x.emitLoad(Install, j)
	x.issue()
	x.finish()
}

// finish issues the final flush once every bucket is done and every load
// installed, and the resident table's write after it (at once when no
// partition is resident).
func (x *Executor) finish() {
	if x.flushed || x.completed < len(x.plan.Buckets) || x.loadsDone < len(x.plan.Loads) {
		return
	}
	x.flushed = true
	for s, p := range x.plan.FinalResident {
		if p != orderings.None {
			x.flushing++
			x.emit(Action{Kind: Flush, Load: -1, Partition: p, Slot: s})
		}
	}
	if x.flushing == 0 && x.pol.Resident {
		x.emit(Action{Kind: WriteResident, Load: -1, Partition: orderings.None, Slot: orderings.None})
	}
}

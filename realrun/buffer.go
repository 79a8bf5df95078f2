package realrun

import (
	"fmt"
	"sync"
	"time"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/executor"
	"github.com/tierflow/tierflow/realrun/store"
)

// IOEvent is one partition read or write as it happened.
type IOEvent struct {
	// Kind is "load" or "write" (the Plan's I/O), "checkpoint" (a
	// resident partition written by a checkpoint inside the epoch) or
	// "restore" (a resident partition read back on resuming inside one);
	// for a typed store "resident-load" and "resident-write" (its resident
	// table, store.ResidentPart, read at the epoch's start and written at
	// its end; Slot is -1) and "checkpoint" with store.ResidentPart.
	Kind      string `json:"kind"`
	Partition int    `json:"partition"`
	// Slot is the buffer slot the partition was loaded into or written
	// out of.
	Slot  int     `json:"slot"`
	Start float64 `json:"start"` // seconds since the epoch began
	End   float64 `json:"end"`
	Bytes int64   `json:"bytes"`
	Final bool    `json:"final,omitempty"` // an end-of-epoch flush
	// CheckStart and CheckEnd are the checksum's own span for a load or
	// a write: a load's check of what it read runs after the transfer,
	// inside Start..End (CheckEnd = End); a write's checksum runs before
	// it (CheckEnd = Start). Zero where none was taken.
	CheckStart float64 `json:"check_start,omitempty"`
	CheckEnd   float64 `json:"check_end,omitempty"`
}

// bufferManager carries out a Plan's buffer schedule with real I/O: the
// executor (orderings/executor, under executor.Engine's policy, the same
// one the simulator's models of this engine drive) decides which load is
// read, which partition written back and when; a loader goroutine carries
// out its actions in order, with c slots and one spare buffer, and an
// async writer writes evicted partitions back from the spare. It never
// derives a schedule of its own.
type bufferManager struct {
	st       *store.Store
	plan     *orderings.Plan
	prefetch bool
	t0       time.Time
	// bufferSeconds is the time the buffers took to allocate, before t0.
	bufferSeconds float64
	// from is the checkpoint directory the epoch reads (the last
	// checkpoint, inside the epoch too) and fromSums its partitions'
	// checksums; every write goes to directory to, and a partition saved
	// there since from was committed is read back from it.
	from, to string
	fromSums map[int]uint64
	// saved is indexed by partition: written to to since from; checksums
	// are the checksums of the partitions written to to.
	saved     []bool
	checksums map[int]uint64
	// dirty is indexed by partition: resident and trained since loaded
	// or checkpointed.
	dirty []bool

	mu   sync.Mutex
	cond *sync.Cond
	// x decides the schedule; todo are its actions not yet carried out,
	// in the order it emitted them; into is the buffer the read in
	// progress fills (the spare, when the load evicted a partition).
	x        *executor.Executor
	todo     []executor.Action
	into     *store.Buffer
	slots    []*store.Buffer
	where    []int // partition → slot, or None
	resident int   // slots holding a partition
	// loadsDone counts the Install actions carried out: bucket k may
	// train once the first Plan.Arrivals()[k] are.
	loadsDone int
	// arrived is indexed by Plan load: its read's bytes are in memory
	// (executor.Policy.WriteAfterRead: the write-back of the partition it
	// evicts waits for them).
	arrived []bool
	// residentDue says the executor asked for the resident table's
	// end-of-epoch write (carried out by RunEpoch after finish).
	residentDue bool
	// slotEngine, when the engine keeps the partition slots in its own
	// memory (the CUDA engine's --buffer gpu), is told of every partition
	// installed into a slot and asked for every one leaving it.
	slotEngine SlotResident
	// counts are the loads, swaps and writes performed, counted as they
	// happen (never copied from the Plan).
	counts orderings.Counts
	failed error

	spare      chan *store.Buffer // free write buffers
	writes     chan writeJob
	loaderDone chan struct{}
	wg         sync.WaitGroup // the writer

	evMu   sync.Mutex
	events []IOEvent

	// res is a typed store's resident table (nil: none), read once at the
	// epoch's start and held for the whole epoch (loadResident); resSum is
	// the checksum of its latest copy written to to (writeResident).
	res    *store.Buffer
	resSum uint64
}

type writeJob struct {
	load       int // the Plan load whose eviction this is (-1: a final flush)
	part, slot int
	buf        *store.Buffer
	final      bool
}

// spareBuffers is how many evicted partitions may be waiting to be written
// at once (executor.Engine's WriteBuffers); the executor holds back a load
// that evicts while all are busy. It must stay 1: a later load of a
// partition evicted earlier in the epoch reads its file, and only because
// every load that evicts waits for the previous write to finish is that
// write guaranteed to be on disk before the partition is read again.
var spareBuffers = executor.Engine(true).WriteBuffers

func newBufferManager(st *store.Store, plan *orderings.Plan, prefetch bool, from, to string, fromSums map[int]uint64) (*bufferManager, error) {
	pol := executor.Engine(prefetch)
	pol.Resident = st.M.Resident > 0
	m := &bufferManager{st: st, plan: plan, prefetch: prefetch, from: from, to: to, fromSums: fromSums,
		saved: make([]bool, plan.P), checksums: map[int]uint64{}, dirty: make([]bool, plan.P), arrived: make([]bool, len(plan.Loads)),
		x: executor.New(plan, pol), loaderDone: make(chan struct{})}
	m.cond = sync.NewCond(&m.mu)
	alloc := time.Now()
	m.where = make([]int, plan.P)
	for i := range m.where {
		m.where[i] = orderings.None
	}
	m.spare = make(chan *store.Buffer, spareBuffers+plan.C)
	for i := 0; i < plan.C; i++ {
		b, err := st.NewBuffer()
		if err != nil {
			m.free()
			return nil, err
		}
		m.slots = append(m.slots, b)
	}
	for i := 0; i < spareBuffers; i++ {
		b, err := st.NewBuffer()
		if err != nil {
			m.free()
			return nil, err
		}
		m.spare <- b
	}
	// The epoch's clock starts with its buffers allocated and their
	// pages faulted in (store.NewBuffer); that time is the Epoch's
	// BufferSeconds.
	m.t0 = time.Now()
	m.bufferSeconds = m.t0.Sub(alloc).Seconds()
	return m, nil
}

func (m *bufferManager) free() {
	for _, b := range m.slots {
		b.Free()
	}
	if m.res != nil {
		m.res.Free()
		m.res = nil
	}
	for {
		select {
		case b := <-m.spare:
			b.Free()
		default:
			return
		}
	}
}

func (m *bufferManager) since() float64 { return time.Since(m.t0).Seconds() }

// read reads partition p into buf from wherever its latest copy is and
// checks it against the checksum recorded when that copy was written; it
// says when the bytes had arrived and the check began (since the epoch
// began). load, when not -1, is the Plan load it reads: it is marked
// arrived before the check.
func (m *bufferManager) read(p, load int, buf *store.Buffer) (n int64, arrived float64, err error) {
	m.mu.Lock()
	dir, want, ok := m.from, m.fromSums[p], true
	if m.saved[p] {
		dir, want = m.to, m.checksums[p]
	} else {
		_, ok = m.fromSums[p]
	}
	m.mu.Unlock()
	if !ok {
		return 0, m.since(), fmt.Errorf("%s: no checksum recorded: %w", store.PartitionIn(dir, p), store.ErrCorrupt)
	}
	n, err = store.ReadPartitionIn(dir, p, buf)
	arrived = m.since()
	if load >= 0 {
		m.mu.Lock()
		m.arrived[load] = true
		m.cond.Broadcast()
		m.mu.Unlock()
	}
	if err != nil {
		return n, arrived, err
	}
	return n, arrived, store.CheckSum(store.PartitionIn(dir, p), buf.Bytes(), want)
}

func (m *bufferManager) record(e IOEvent) {
	m.evMu.Lock()
	m.events = append(m.events, e)
	m.evMu.Unlock()
}

func (m *bufferManager) fail(err error) {
	m.mu.Lock()
	if m.failed == nil {
		m.failed = err
	}
	m.cond.Broadcast()
	m.mu.Unlock()
}

// start launches the loader and the writer with the executor's first
// actions.
func (m *bufferManager) start() {
	m.writes = make(chan writeJob, len(m.slots)+spareBuffers)
	m.wg.Add(1)
	go m.writer()
	m.mu.Lock()
	m.take(m.x.Start())
	m.mu.Unlock()
	go m.loader()
}

// take queues the executor's actions for the loader; the resident
// table's write is RunEpoch's, after finish. Call with m.mu held.
func (m *bufferManager) take(acts []executor.Action) {
	for _, a := range acts {
		if a.Kind == executor.WriteResident {
			m.residentDue = true
			continue
		}
		m.todo = append(m.todo, a)
	}
	m.cond.Broadcast()
}

// step hands one event's actions to take, under the lock.
func (m *bufferManager) step(event func() []executor.Action) {
	m.mu.Lock()
	m.take(event())
	m.mu.Unlock()
}

func (m *bufferManager) writer() {
	defer m.wg.Done()
	for job := range m.writes {
		summing := m.since()
		sum := store.Checksum(job.buf.Bytes())
		if job.load >= 0 && m.x.Policy().WriteAfterRead {
			m.mu.Lock()
			for !m.arrived[job.load] && m.failed == nil {
				m.cond.Wait()
			}
			m.mu.Unlock()
		}
		start := m.since()
		n, err := store.WritePartitionIn(m.to, job.part, job.buf)
		m.record(IOEvent{Kind: "write", Partition: job.part, Slot: job.slot, Start: start, End: m.since(), Bytes: n, Final: job.final, CheckStart: summing, CheckEnd: start})
		if err != nil {
			m.fail(err)
		}
		m.mu.Lock()
		m.saved[job.part] = true
		m.checksums[job.part] = sum
		if job.final {
			m.counts.FinalWrites++
			m.take(m.x.Flushed())
		} else {
			m.counts.Writes++
			m.take(m.x.Written(job.load))
		}
		m.mu.Unlock()
		if !job.final {
			m.spare <- job.buf
		}
	}
}

// loader carries out the executor's actions in order until the final
// flush is handed to the writer or the epoch fails.
func (m *bufferManager) loader() {
	defer close(m.loaderDone)
	for {
		m.mu.Lock()
		for m.failed == nil && len(m.todo) == 0 && !m.x.Done() {
			m.cond.Wait()
		}
		if m.failed != nil || len(m.todo) == 0 {
			m.mu.Unlock()
			return
		}
		a := m.todo[0]
		m.todo = m.todo[1:]
		m.mu.Unlock()
		if err := m.carry(a); err != nil {
			m.fail(err)
			return
		}
	}
}

// carry carries out one action with real I/O.
func (m *bufferManager) carry(a executor.Action) error {
	switch a.Kind {
	case executor.ReadResident:
		// loadResident read the table before the loader started.
		m.step(m.x.ResidentRead)
	case executor.Write:
		// Hand the evicted partition's buffer to the writer and read the
		// next one into the spare, so the write overlaps the read.
		buf := m.slots[a.Slot]
		spare := <-m.spare
		if m.slotEngine != nil {
			if err := m.slotEngine.Evict(a.Slot, a.Partition, buf); err != nil {
				m.spare <- spare
				return fmt.Errorf("load %d: %w", a.Load, err)
			}
		}
		m.writes <- writeJob{load: a.Load, part: a.Partition, slot: a.Slot, buf: buf}
		m.mu.Lock()
		m.into = spare
		m.take(m.x.Evicted(a.Load))
		m.mu.Unlock()
	case executor.Read:
		buf := m.into
		if buf == nil {
			buf = m.slots[a.Slot]
		}
		start := m.since()
		n, arrived, err := m.read(a.Partition, a.Load, buf)
		end := m.since()
		m.record(IOEvent{Kind: "load", Partition: a.Partition, Slot: a.Slot, Start: start, End: end, Bytes: n, CheckStart: arrived, CheckEnd: end})
		if err == nil && m.slotEngine != nil {
			err = m.slotEngine.Install(a.Slot, a.Partition, buf)
		}
		if err != nil {
			return fmt.Errorf("load %d: %w", a.Load, err)
		}
		m.mu.Lock()
		m.into = nil
		m.slots[a.Slot] = buf
		m.take(m.x.ReadDone(a.Load))
		m.mu.Unlock()
	case executor.Install:
		l := m.plan.Loads[a.Load]
		m.mu.Lock()
		m.dirty[l.Partition] = false
		m.counts.Loads++
		if m.resident == len(m.slots) {
			m.counts.Swaps++ // the buffer was full: this load replaced a partition
		} else {
			m.resident++
		}
		if l.Evicts != orderings.None {
			m.where[l.Evicts] = orderings.None
			m.dirty[l.Evicts] = false
		}
		m.where[l.Partition] = l.Slot
		m.loadsDone++
		m.cond.Broadcast()
		m.mu.Unlock()
	case executor.Flush:
		if m.slotEngine != nil {
			if err := m.slotEngine.Evict(a.Slot, a.Partition, m.slots[a.Slot]); err != nil {
				return err
			}
		}
		m.writes <- writeJob{load: -1, part: a.Partition, slot: a.Slot, buf: m.slots[a.Slot], final: true}
	default:
		return fmt.Errorf("buffer manager: %v is not one of its actions", a)
	}
	return nil
}

// acquire blocks until every load the bucket at position k needs has
// arrived and returns the buffers of its source and destination.
func (m *bufferManager) acquire(k, need int, src, dst int) (*store.Buffer, *store.Buffer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for m.failed == nil && m.loadsDone < need {
		m.cond.Wait()
	}
	if m.failed != nil {
		return nil, nil, m.failed
	}
	s, d := m.where[src], m.where[dst]
	if s == orderings.None || d == orderings.None {
		return nil, nil, fmt.Errorf("bucket %d (%d,%d): partition not resident after its loads (plan and buffer disagree)", k, src, dst)
	}
	return m.slots[s], m.slots[d], nil
}

// done marks bucket k, which trained partitions src and dst, finished,
// which may open prefetch windows.
func (m *bufferManager) done(k, src, dst int) {
	m.mu.Lock()
	m.dirty[src], m.dirty[dst] = true, true
	m.take(m.x.Completed(k + 1))
	m.mu.Unlock()
}

// finish lets the executor finish the epoch (every remaining load, then
// the final flush), waits for the loader and then for the writer.
func (m *bufferManager) finish() error {
	m.mu.Lock()
	if m.failed == nil {
		m.take(m.x.Completed(len(m.plan.Buckets)))
	}
	m.cond.Broadcast()
	m.mu.Unlock()
	if m.writes != nil {
		<-m.loaderDone
		close(m.writes)
	}
	m.wg.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failed
}

// quiesce holds the loader back and waits until no load or write-back is
// in flight: then slots, where, saved and dirty describe the state after
// the buckets completed so far, and every saved partition is on disk.
func (m *bufferManager) quiesce() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.x.Pause()
	for m.failed == nil && !(m.x.Quiet() && len(m.todo) == 0) {
		m.cond.Wait()
	}
	return m.failed
}

// checkpointed records that checkpoint directory dir, with checksums
// sums, now holds the latest copy of every partition, and lets the loader
// go on.
func (m *bufferManager) checkpointed(dir string, sums map[int]uint64) {
	m.mu.Lock()
	m.from, m.fromSums = dir, sums
	clear(m.saved)
	clear(m.dirty)
	m.checksums = map[int]uint64{}
	m.take(m.x.Resume())
	m.mu.Unlock()
}

// restore puts the buffer where a checkpoint inside the epoch left it:
// bucket and load positions, counts, and the resident partitions read
// back into their slots from the checkpoint.
func (m *bufferManager) restore(pos *Position) error {
	if len(pos.Slots) != len(m.slots) {
		return fmt.Errorf("checkpoint holds %d buffer slots, the Plan has c = %d", len(pos.Slots), len(m.slots))
	}
	if err := m.x.Restore(pos.Bucket, pos.Loads); err != nil {
		return err
	}
	m.loadsDone, m.counts = pos.Loads, pos.Counts
	for s, p := range pos.Slots {
		if p == orderings.None {
			continue
		}
		if p < 0 || p >= m.plan.P {
			return fmt.Errorf("checkpoint slot %d holds partition %d of %d", s, p, m.plan.P)
		}
		start := m.since()
		n, arrived, err := m.read(p, -1, m.slots[s])
		end := m.since()
		m.record(IOEvent{Kind: "restore", Partition: p, Slot: s, Start: start, End: end, Bytes: n, CheckStart: arrived, CheckEnd: end})
		if err == nil && m.slotEngine != nil {
			err = m.slotEngine.Install(s, p, m.slots[s])
		}
		if err != nil {
			return err
		}
		m.where[p] = s
		m.resident++
	}
	return nil
}

// loadResident reads a typed store's resident table (store.ResidentFile)
// from the checkpoint the epoch starts from into a buffer of its own,
// checked against its recorded checksum, and records the read as a
// "resident-load" event (its bytes are the epoch's reads: the simulator
// predicts the table read once at the epoch's start). A store without
// resident types has none.
func (m *bufferManager) loadResident() error {
	if m.st.M.Resident == 0 {
		return nil
	}
	buf, err := m.st.NewResidentBuffer()
	if err != nil {
		return err
	}
	m.res = buf
	want, ok := m.fromSums[store.ResidentPart]
	if !ok {
		return fmt.Errorf("%s: no checksum recorded: %w", store.ResidentIn(m.from), store.ErrCorrupt)
	}
	start := m.since()
	n, err := store.ReadPartitionChecked(m.from, store.ResidentPart, buf, want)
	m.record(IOEvent{Kind: "resident-load", Partition: store.ResidentPart, Slot: orderings.None, Start: start, End: m.since(), Bytes: n})
	return err
}

// writeResident writes the resident table into checkpoint directory dir
// as an event of kind (its bytes counted by measure for
// "resident-write", by the checkpoint's cost for "checkpoint") and
// returns its checksum.
func (m *bufferManager) writeResident(dir, kind string) (int64, uint64, error) {
	sum := store.Checksum(m.res.Bytes())
	start := m.since()
	n, err := store.WritePartitionIn(dir, store.ResidentPart, m.res)
	m.record(IOEvent{Kind: kind, Partition: store.ResidentPart, Slot: orderings.None, Start: start, End: m.since(), Bytes: n, Final: kind == "resident-write"})
	return n, sum, err
}

// slotPartitions is the partition in every slot (None: empty).
func (m *bufferManager) slotPartitions() []int {
	out := make([]int, len(m.slots))
	for s := range out {
		out[s] = orderings.None
	}
	for p, s := range m.where {
		if s != orderings.None {
			out[s] = p
		}
	}
	return out
}

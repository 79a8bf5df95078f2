package sim

import (
	"container/heap"
	"math"

	"github.com/tierflow/tierflow/report"
)

// Kernel is a discrete-event kernel: a virtual clock and a queue of events
// ordered by time, ties broken by scheduling order, so a run is fully
// deterministic.
type Kernel struct {
	now    float64
	seq    uint64
	q      eventQueue
	events int
}

type event struct {
	t   float64
	seq uint64
	fn  func()
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// Now is the current virtual time in seconds.
func (k *Kernel) Now() float64 { return k.now }

// Events is the number of events run so far.
func (k *Kernel) Events() int { return k.events }

// At schedules fn at virtual time t (not before now).
func (k *Kernel) At(t float64, fn func()) {
	if t < k.now {
		t = k.now
	}
	k.seq++
	heap.Push(&k.q, event{t: t, seq: k.seq, fn: fn})
}

// After schedules fn d seconds from now.
func (k *Kernel) After(d float64, fn func()) { k.At(k.now+d, fn) }

// Run executes events until none is left.
func (k *Kernel) Run() {
	for k.q.Len() > 0 {
		e := heap.Pop(&k.q).(event)
		k.now = e.t
		k.events++
		e.fn()
	}
}

// busyLog accumulates busy intervals, merging those that touch.
type busyLog struct {
	spans []report.Interval
	total float64
}

func (b *busyLog) add(start, end float64) {
	if end <= start {
		return
	}
	b.total += end - start
	if n := len(b.spans); n > 0 && start <= b.spans[n-1].End+1e-12 {
		if end > b.spans[n-1].End {
			b.spans[n-1].End = end
		}
		return
	}
	b.spans = append(b.spans, report.Interval{Start: start, End: end})
}

// Server is a first-come-first-served server with one unit of capacity:
// a GPU stream or a pool of CPU workers treated as one.
type Server struct {
	k    *Kernel
	Name string
	free float64
	log  busyLog
}

// NewServer returns an idle server.
func NewServer(k *Kernel, name string) *Server { return &Server{k: k, Name: name} }

// Do queues d seconds of work and calls done when it finishes.
func (s *Server) Do(d float64, done func()) {
	start := math.Max(s.k.now, s.free)
	s.free = start + d
	s.log.add(start, s.free)
	s.k.At(s.free, done)
}

// Busy is the total time the server has worked.
func (s *Server) Busy() float64 { return s.log.total }

// Dir is the direction of a transfer on a Link.
type Dir int

// The directions.
const (
	Read Dir = iota
	Write
)

// Sharing says how a link's reads and writes share it.
type Sharing struct {
	// ReadBW and WriteBW are the bandwidths of reads alone and writes alone.
	ReadBW, WriteBW float64
	// FullDuplex: reads and writes never slow each other.
	FullDuplex bool
	// Combined, when positive, caps reads and writes together: running at
	// once they split it fairly, each direction at most its own bandwidth.
	// When zero and not full duplex they split the device's time evenly.
	Combined float64
	// ReadShare is the share of Combined reads get when both run (0: a
	// fair half); what either direction cannot use goes to the other.
	ReadShare float64
	// KeepPace: a transfer that has moved beside the other direction
	// keeps that rate (its share then) to its end when the other
	// direction's transfers are done, rather than speeding up to its
	// direction's rate alone (devices.Disk.KeepSharedRate).
	KeepPace bool
	// Limit, by direction (Read, Write), when positive, holds the
	// direction's sustained rate below the link's own as Linux
	// blk-throttle holds a cgroup's disk I/O (devices.Throttle): the
	// allowance is granted a Slice (seconds) at a time, Limit × Slice
	// bytes at the start of each slice of a busy stretch, and the
	// direction moves at the link's own rate while allowance is left and
	// not at all until the next slice once it is spent.
	Limit [2]float64
	Slice float64
}

// throttled is the time bytes take in direction d alone from a fresh
// slice, at least bytes ÷ bw (the link's own rate): the fewest seconds a
// limited direction needs for them.
func (s Sharing) throttled(d Dir, bytes, bw float64) float64 {
	t := bytes / bw
	if lim := s.Limit[d]; lim > 0 && s.Slice > 0 {
		// The last slice's grant is spent at the link's rate.
		grant := lim * s.Slice
		full := math.Ceil(bytes/grant) - 1
		t = math.Max(t, full*s.Slice+(bytes-full*grant)/bw)
	} else if lim > 0 {
		t = math.Max(t, bytes/lim)
	}
	return t
}

// Rates returns the bandwidth of the read and write directions given which
// are active.
func (s Sharing) Rates(reading, writing bool) (r, w float64) {
	switch {
	case !reading || !writing || s.FullDuplex:
		return s.ReadBW, s.WriteBW
	case s.Combined > 0:
		share := s.ReadShare
		if share <= 0 || share >= 1 {
			share = 0.5
		}
		r = math.Min(s.ReadBW, math.Max(s.Combined*share, s.Combined-s.WriteBW))
		return r, math.Min(s.WriteBW, s.Combined-r)
	default:
		return s.ReadBW / 2, s.WriteBW / 2
	}
}

// Link is a transfer resource (a disk, a PCIe direction, an SSD-to-GPU
// path). Transfers in the same direction share its bandwidth equally
// (processor sharing); reads and writes share it as Sharing says. A
// transfer first waits the link's per-request latency, then moves its
// bytes: alone on the link it takes latency + bytes ÷ bandwidth.
type Link struct {
	k       *Kernel
	Name    string
	Latency float64
	share   Sharing
	// scale multiplies every rate (1 unless SetScale changed it); busy is
	// whether a transfer is moving, onBusy is told when that changes.
	scale   float64
	busy    bool
	onBusy  func(busy bool)
	flows   []*flow
	last    float64
	version uint64
	log     busyLog
	bytes   float64
	// dirLog and dirBytes are the busy time and bytes of each direction.
	dirLog   [2]busyLog
	dirBytes [2]float64
	// slice is each limited direction's throttle state (Sharing.Limit).
	slice [2]throttleSlice
}

// throttleSlice is blk-throttle's state for one direction of a group
// (block/blk-throttle.c): the current slice's start and end and the bytes
// dispatched since its start. The allowance at time t is Limit ×
// Slice × (slices begun since start) − disp: a busy stretch is granted a
// slice's worth at the start of each slice. A stretch that begins after
// the slice has ended starts a fresh slice; one that begins sooner goes
// on in it. Slices more than one slice old are trimmed from the start,
// their unspent allowance dropped.
type throttleSlice struct {
	start, end, disp float64
	// busy: the direction had transfers at the last reschedule.
	busy bool
}

// sliceEps absorbs rounding in slice arithmetic: a time within a
// billionth of a slice of a slice's start is at it.
const sliceEps = 1e-9

// begun is the number of slices begun by now (at least 1).
func (t *throttleSlice) begun(now, slice float64) float64 {
	return math.Floor((now-t.start)/slice+sliceEps) + 1
}

type flow struct {
	left  float64 // bytes still to move
	bytes float64
	dir   Dir
	rate  float64
	// paced is the rate (unscaled) the flow had while both directions
	// moved, for Sharing.KeepPace; 0 until then.
	paced float64
	done  func()
}

// NewLink returns an idle link.
func NewLink(k *Kernel, name string, latency float64, share Sharing) *Link {
	l := &Link{k: k, Name: name, Latency: latency, share: share, scale: 1}
	for d := range l.slice {
		l.slice[d].end = math.Inf(-1) // the first transfer starts a fresh slice
	}
	return l
}

// SetScale multiplies the link's bandwidth by x from now on (transfers in
// flight keep what they have moved and continue at the new rate): how a
// shared resource slows it.
func (l *Link) SetScale(x float64) {
	if x == l.scale {
		return
	}
	l.advance()
	l.scale = x
	l.reschedule()
}

// OnBusy calls f whenever the link starts or stops moving bytes.
func (l *Link) OnBusy(f func(busy bool)) { l.onBusy = f }

// Transfer moves bytes in direction dir and calls done when the last byte
// has arrived.
func (l *Link) Transfer(bytes float64, dir Dir, done func()) {
	l.k.After(l.Latency, func() {
		l.advance()
		l.flows = append(l.flows, &flow{left: bytes, bytes: bytes, dir: dir, done: done})
		l.reschedule()
	})
}

// advance moves every flow's bytes up to now at the current rates, and
// counts them against their direction's throttle slice.
func (l *Link) advance() {
	now := l.k.now
	var moved [2]float64
	if len(l.flows) > 0 {
		var active [2]bool
		for _, f := range l.flows {
			f.left -= f.rate * (now - l.last)
			moved[f.dir] += f.rate * (now - l.last)
			active[f.dir] = true
		}
		l.log.add(l.last, now)
		for d, a := range active {
			if a {
				l.dirLog[d].add(l.last, now)
			}
		}
	}
	for d := range l.slice {
		l.slice[d].disp += moved[d]
	}
	l.last = now
}

// allowanceEps is the allowance below which a direction counts as spent:
// a byte, rounding in the allowance's arithmetic.
const allowanceEps = 1

// throttle updates each limited direction's slice for the transfers now
// on the link (n by direction): a fresh slice for a stretch that begins
// after the last has ended, the end extended while busy, old slices
// trimmed. It returns which directions have spent their allowance and,
// for those, the time the next slice begins; for the others the
// allowance left.
func (l *Link) throttle(n [2]int) (spent [2]bool, until, left [2]float64) {
	now, sl := l.k.now, l.share.Slice
	for d, lim := range l.share.Limit {
		t := &l.slice[d]
		if lim <= 0 || sl <= 0 {
			continue
		}
		busy := n[d] > 0
		switch {
		case busy && !t.busy && now > t.end+sliceEps*sl:
			t.start, t.disp = now, 0
		case busy && now-t.start >= 2*sl:
			// Keep the slice in progress and the one before it.
			k := math.Floor((now-t.start)/sl+sliceEps) - 1
			t.start += k * sl
			t.disp = math.Max(0, t.disp-lim*k*sl)
		}
		if busy || t.busy {
			t.end = now + sl
		}
		t.busy = busy
		if !busy {
			continue
		}
		begun := t.begun(now, sl)
		left[d] = lim*sl*begun - t.disp
		if left[d] < allowanceEps {
			spent[d], until[d] = true, t.start+begun*sl
		}
	}
	return spent, until, left
}

// bytesEps and timeEps absorb rounding: a flow with less than a
// millionth of a byte, or a nanosecond of transfer, left is done.
const (
	bytesEps = 1e-6
	timeEps  = 1e-9
)

func (l *Link) reschedule() {
	l.version++
	if busy := len(l.flows) > 0; busy != l.busy {
		l.busy = busy
		if l.onBusy != nil {
			l.onBusy(busy)
		}
	}
	var n [2]int
	for _, f := range l.flows {
		n[f.dir]++
	}
	// A limited direction that has spent its slice's allowance waits,
	// off the device, for the next slice (the next event); otherwise it
	// moves at the link's own rate until the allowance is spent.
	spent, until, left := l.throttle(n)
	if len(l.flows) == 0 {
		return
	}
	r, w := l.share.Rates(n[Read] > 0 && !spent[Read], n[Write] > 0 && !spent[Write])
	rate := [2]float64{r * l.scale, w * l.scale}
	next := math.Inf(1)
	for d, lim := range l.share.Limit {
		switch {
		case lim <= 0 || n[d] == 0:
		case l.share.Slice <= 0: // no slices: every byte paced at the limit
			rate[d] = math.Min(rate[d], lim)
		case spent[d]:
			rate[d] = 0
			next = math.Min(next, until[d]-l.k.now)
		default:
			next = math.Min(next, left[d]/rate[d])
		}
	}
	both := n[Read] > 0 && !spent[Read] && n[Write] > 0 && !spent[Write]
	for _, f := range l.flows {
		f.rate = rate[f.dir] / float64(n[f.dir])
		if l.share.KeepPace && !l.share.FullDuplex {
			if both {
				f.paced = f.rate / l.scale
			} else if f.paced > 0 {
				f.rate = math.Min(f.rate, f.paced*l.scale)
			}
		}
		if f.rate > 0 {
			next = math.Min(next, math.Max(f.left, 0)/f.rate)
		}
	}
	v := l.version
	l.k.After(next, func() {
		if v != l.version {
			return
		}
		l.advance()
		var done []func()
		kept := l.flows[:0]
		for _, f := range l.flows {
			// Done when what is left would take under a nanosecond: the
			// clock cannot resolve less and would never advance.
			if f.left <= bytesEps || f.rate > 0 && f.left/f.rate <= timeEps {
				done = append(done, f.done)
				l.bytes += f.bytes
				l.dirBytes[f.dir] += f.bytes
			} else {
				kept = append(kept, f)
			}
		}
		l.flows = kept
		l.reschedule()
		for _, fn := range done {
			fn()
		}
	})
}

// Busy is the total time at least one transfer was moving bytes.
func (l *Link) Busy() float64 { return l.log.total }

// Bytes is the number of bytes delivered so far.
func (l *Link) Bytes() float64 { return l.bytes }

// DirBusy is the total time at least one transfer in direction d was
// moving bytes.
func (l *Link) DirBusy(d Dir) float64 { return l.dirLog[d].total }

// DirBytes is the number of bytes delivered so far in direction d.
func (l *Link) DirBytes(d Dir) float64 { return l.dirBytes[d] }

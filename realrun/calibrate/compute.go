package calibrate

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/cpu"
	"github.com/tierflow/tierflow/realrun/store"
)

// ComputeRate is the CPU engine's measured training rate at one shape:
// the median of timed rounds with their spread, what it trained on and
// for how long.
type ComputeRate struct {
	// Edges is the median round's rate in edges/s, as the simulator's
	// realrun model reads cpu.train.<model>.edges: each round's rate is
	// the model's time for the round's buckets at 1 edge/s over the time
	// they took, so the last round of batches' imbalance, which the
	// model adds for every bucket itself, is not counted twice.
	Edges float64 `json:"edges_per_s"`
	// Low and High are the slowest and fastest rounds, or, when the
	// rounds are shorter than StretchSeconds and make two stretches of
	// it or more, the slowest and fastest such stretch of consecutive
	// rounds (Stretches); Rates every round's rate, in the order
	// measured.
	Low   float64   `json:"low_edges_per_s"`
	High  float64   `json:"high_edges_per_s"`
	Rates []float64 `json:"rates"`
	// Rounds are the timed rounds (one more warmed up untimed), Seconds
	// the time they took, TrainedEdges the edges they trained.
	Rounds       int     `json:"rounds"`
	Seconds      float64 `json:"seconds"`
	TrainedEdges int64   `json:"trained_edges"`
	// On says what the engine trained: the graph's own buckets (which
	// ones, from which work directory) or synthetic buckets.
	On string `json:"on"`
	// Reference and Relative, for a rate on one ordering's bucket
	// sequence (MeasureOrderings): the bench's rate (newBench) over
	// rounds taken in turn with the ordering's, and Edges over it. A
	// profile gives the ordering Relative times the bench's rate over
	// the whole calibration (Calibration.OrderingRatio), so that a fast
	// or slow minute while the orderings were measured does not set it.
	Reference float64 `json:"reference_edges_per_s,omitempty"`
	Relative  float64 `json:"relative,omitempty"`
	// RelativeSE is the standard error of the ordering's paired rounds'
	// log ratios to the bench's (pairedSE). Own, when set, is the
	// ordering's own ratio, Edges over Reference, which its rounds could
	// not tell apart from the orderings' median: Relative is then the
	// ratio it shares with the others so pooled (poolOrderings).
	RelativeSE float64 `json:"relative_se,omitempty"`
	Own        float64 `json:"own_relative,omitempty"`
	// At, for a rate on one ordering's bucket sequence, is the bucket of
	// its Plan each round started at (they sample the whole Plan).
	At []int `json:"at_buckets,omitempty"`
	// InTurns, for the bench's rate, is how many of its rounds were
	// timed in the orderings' turns (Calibration.AddOrderings folds them
	// in), after the ones before and after the disk.
	InTurns int `json:"in_turns,omitempty"`
	// Tail, for the bench's rate, is how many of its rounds were timed
	// at the end of the calibration so that its rounds took Span seconds
	// in all (spanFor); Span is 0 when no such least time applied.
	Tail int     `json:"tail_rounds,omitempty"`
	Span float64 `json:"span_seconds,omitempty"`
}

// TrainCost is the rate as a profile's cpu.train cost.
func (r ComputeRate) TrainCost() devices.TrainCost {
	return devices.TrainCost{Edges: devices.EdgeRate(r.Edges)}
}

// computeBench trains buckets of one shape on two partition buffers and
// times them: the graph's own buckets on its own partitions (graphBench),
// or synthetic ones (syntheticBench). Build one, take rounds, close it.
type computeBench struct {
	h        realrun.Hyper
	eng      *cpu.Engine
	src, dst *store.Buffer
	// res is a typed graph's resident table (nil untyped).
	res    *store.Buffer
	si, di int
	// buckets are the edge lists a round cycles through, each trained
	// with (si, di) or, for the second of a graph's pair, (di, si).
	buckets []benchBucket
	next    int
	rng     *rand.Rand
	on      string
	// perRound is the least edges a round trains.
	perRound int64
	// pb, for a bench on one ordering's bucket sequence (planBench),
	// walks its Plan.
	pb *planWalk
}

// planWalk is where a plan bench is in its Plan: the next bucket k, the
// next load li, the slot buffers and the partition each holds (held, by
// slot; -1 for none).
type planWalk struct {
	st    *store.Store
	plan  *orderings.Plan
	slots *slotSet
	held  []int
	k, li int
	// ownSlots: the bench allocated slots and frees them when closed.
	ownSlots bool
}

// slotSet are slot buffers that one plan bench or several in turn
// (MeasureOrderings) load partitions into; owner is the walk whose
// partitions they hold now.
type slotSet struct {
	bufs  []*store.Buffer
	owner *planWalk
}

// newSlots allocates n slot buffers for st's partitions.
func newSlots(st *store.Store, n int) (*slotSet, error) {
	s := &slotSet{}
	for range n {
		buf, err := st.NewBuffer()
		if err != nil {
			s.free()
			return nil, err
		}
		s.bufs = append(s.bufs, buf)
	}
	return s, nil
}

func (s *slotSet) free() {
	for _, b := range s.bufs {
		b.Free()
	}
	s.bufs = nil
}

// buffer is the slot buffer holding partition part, nil for none.
func (w *planWalk) buffer(part int) *store.Buffer {
	if i := slices.Index(w.held, part); i >= 0 {
		return w.slots.bufs[i]
	}
	return nil
}

// claim gives w the slots: when another walk had them, the partitions
// w holds are read into their slots again and checksummed, as the loader
// leaves a partition it reads (untimed: only the training is measured).
func (w *planWalk) claim() error {
	if w.slots.owner == w {
		return nil
	}
	w.slots.owner = w
	for slot, part := range w.held {
		if part < 0 {
			continue
		}
		if _, err := w.st.ReadPartition(part, w.slots.bufs[slot]); err != nil {
			return fmt.Errorf("calibrate on %s's buckets: %w", w.plan.Ordering, err)
		}
		store.Checksum(w.slots.bufs[slot].Bytes())
	}
	return nil
}

type benchBucket struct {
	si, di int
	edges  []store.Edge
}

// roundFLOPs is about how much score arithmetic one timed round does:
// half a second or so of this engine on two cores.
const roundFLOPs = 2e9

func perRoundEdges(h realrun.Hyper) int64 {
	perEdge := h.Training.PerEdgeFLOPs() + 200 // rough FLOPs, to size the round
	round := float64(h.Batch * max(h.Workers, 1))
	return int64(math.Max(2, math.Round(roundFLOPs/perEdge/round)) * round)
}

// graphBench is a bench on st's own data: two of its partitions, i and j
// (benchPair, seeded; p = 1: partition 0 alone), read from the work
// directory, and the buckets (i, j) and (j, i) read from it — the
// graph's real endpoints, degrees and relations, so that the engine's
// row gathers hit the caches and TLB as the run's will at this partition
// size. A diagonal bucket is used only when p = 1 (the others are most
// of an epoch's edges).
func graphBench(st *store.Store, h realrun.Hyper, seed int64) (*computeBench, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xca1b))
	i, j := benchPair(st.M.Buckets, rng)
	deg, err := st.Degrees()
	if err != nil {
		return nil, fmt.Errorf("calibrate on the graph: %w", err)
	}
	b := &computeBench{h: h, si: i, di: j, rng: rng, perRound: perRoundEdges(h)}
	pairs := [][2]int{{i, j}, {j, i}}
	if i == j {
		pairs = pairs[:1]
	} else if st.M.Typed() {
		// A typed graph's edges with a resident end are in the diagonal
		// buckets: partition i's are part of the bench too.
		pairs = append(pairs, [2]int{i, i})
	}
	var n int64
	for _, pr := range pairs {
		es, err := st.ReadBucket(pr[0], pr[1])
		if err != nil {
			return nil, fmt.Errorf("calibrate on the graph: %w", err)
		}
		if len(es) > 0 {
			b.buckets = append(b.buckets, benchBucket{si: pr[0], di: pr[1], edges: es})
			n += int64(len(es))
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("calibrate on the graph: buckets (%d,%d) and (%d,%d) of %s hold no edges", i, j, j, i, st.Dir)
	}
	if b.src, err = st.NewBuffer(); err != nil {
		return nil, err
	}
	if _, err := st.ReadPartition(i, b.src); err != nil {
		b.close()
		return nil, fmt.Errorf("calibrate on the graph: %w", err)
	}
	b.dst = b.src
	if j != i {
		if b.dst, err = st.NewBuffer(); err != nil {
			b.close()
			return nil, err
		}
		if _, err := st.ReadPartition(j, b.dst); err != nil {
			b.close()
			return nil, fmt.Errorf("calibrate on the graph: %w", err)
		}
	}
	if err := b.newEngine(st, h, deg, seed); err != nil {
		return nil, fmt.Errorf("calibrate on the graph: %w", err)
	}
	b.on = fmt.Sprintf("the graph's own buckets (%d,%d) and (%d,%d), %d edges, on partitions of %d rows from %s", i, j, j, i, n, st.M.Rows, st.Dir)
	if i == j {
		b.on = fmt.Sprintf("the graph's own bucket (0,0), %d edges, on its partition of %d rows from %s", n, st.M.Rows, st.Dir)
	}
	return b, nil
}

// newEngine gives the bench its CPU engine on st's graph, with a typed
// graph's resident table read from the work directory; on an error the
// bench is closed.
func (b *computeBench) newEngine(st *store.Store, h realrun.Hyper, deg []int32, seed int64) error {
	b.eng = cpu.New(h, st, deg, seed)
	if !st.M.Typed() {
		return nil
	}
	var err error
	if b.res, err = st.NewResidentBuffer(); err == nil {
		_, err = st.ReadResident(b.res)
	}
	if err != nil {
		b.close()
		return err
	}
	b.eng.SetResident(b.res)
	return nil
}

// benchPair chooses the partitions a graph bench trains: a seeded pair
// i ≠ j — the first, from a seeded start, whose buckets (i, j) and
// (j, i) hold edges (a sparse graph may leave a pair empty) — or (0, 0)
// when p = 1.
func benchPair(buckets [][]int64, rng *rand.Rand) (i, j int) {
	p := len(buckets)
	if p < 2 {
		return 0, 0
	}
	n := p * (p - 1)
	start := rng.IntN(n)
	for k := 0; k < n; k++ {
		idx := (start + k) % n
		a, b := idx/(p-1), idx%(p-1)
		if b >= a {
			b++
		}
		if buckets[a][b]+buckets[b][a] > 0 {
			return a, b
		}
	}
	a, b := start/(p-1), start%(p-1)
	if b >= a {
		b++
	}
	return a, b
}

// syntheticBench is a bench on two synthetic partitions of rows rows at
// random values: endpoints uniform over the rows, degrees uniform in
// 1–20, 10 relations — for a shape with no work directory yet. Uniform
// endpoints miss the caches as no real (skewed) graph does: at
// partitions of a gigabyte this rate can be several times slower than
// the run's (graphBench measures the run's own).
func syntheticBench(h realrun.Hyper, rows int64) (*computeBench, error) {
	rng := rand.New(rand.NewPCG(uint64(h.Dim), uint64(h.Negatives)))
	st := &store.Store{M: store.Manifest{P: 2, Rows: rows, Nodes: 2 * rows, Relations: 10, Dim: h.Dim,
		PartitionBytes: (8*rows*int64(h.Dim) + store.Align - 1) / store.Align * store.Align}}
	b := &computeBench{h: h, si: 0, di: 1, rng: rng, perRound: perRoundEdges(h)}
	var err error
	for _, buf := range []**store.Buffer{&b.src, &b.dst} {
		if *buf, err = st.NewBuffer(); err != nil {
			b.close()
			return nil, err
		}
		f := (*buf).Floats()
		for k := 0; k < int(rows)*h.Dim; k++ {
			f[k] = 0.1 * (2*rng.Float32() - 1)
		}
	}
	deg := make([]int32, 2*rows)
	for k := range deg {
		deg[k] = int32(1 + rng.IntN(20))
	}
	es := make([]store.Edge, b.perRound)
	for k := range es {
		es[k] = store.Edge{Src: int32(rng.Int64N(rows)), Rel: int32(rng.IntN(10)), Dst: int32(rows + rng.Int64N(rows))}
	}
	b.buckets = []benchBucket{{si: 0, di: 1, edges: es}}
	b.eng = cpu.New(h, st, deg, 1)
	b.on = fmt.Sprintf("synthetic buckets (uniform endpoints over partitions of %d rows)", rows)
	return b, nil
}

func (b *computeBench) close() {
	if b.pb != nil {
		if b.pb.ownSlots {
			b.pb.slots.free()
		}
		b.pb = nil
	}
	if b.src != nil {
		b.src.Free()
	}
	if b.dst != nil && b.dst != b.src {
		b.dst.Free()
	}
	if b.res != nil {
		b.res.Free()
	}
	b.src, b.dst, b.res = nil, nil, nil
}

// buffers are the partition buffers a bucket trains on.
func (b *computeBench) buffers(k benchBucket) (*store.Buffer, *store.Buffer) {
	of := func(p int) *store.Buffer {
		if p == b.si {
			return b.src
		}
		return b.dst
	}
	return of(k.si), of(k.di)
}

// round trains buckets (cycling through the bench's) until at least
// perRound edges are done and returns the round's rate as the realrun
// model reads it: the model's time for those buckets at 1 edge/s over
// the measured time.
func (b *computeBench) round() (rate, sec float64, edges int64, err error) {
	if b.pb != nil {
		return b.planRound()
	}
	var model float64
	start := time.Now()
	for edges < b.perRound {
		k := b.buckets[b.next%len(b.buckets)]
		b.next++
		es := append([]store.Edge(nil), k.edges...) // the engine shuffles its bucket
		src, dst := b.buffers(k)
		if _, err := b.eng.TrainBucket(es, k.si, src, k.di, dst, b.rng); err != nil {
			return 0, 0, 0, err
		}
		edges += int64(len(es))
		model += unitBucketTime(b.h, int64(len(es)))
	}
	sec = time.Since(start).Seconds()
	return model / sec, sec, edges, nil
}

// planBench is a bench on st's own data in the order plan trains it:
// each bucket in turn, on partitions read into plan.C slot buffers as
// the Plan loads them (with O_DIRECT from the work directory, then
// checksummed as the loader verifies them; an evicted partition
// checksummed as the writer does), from the start of the Plan again
// after its last bucket. Only the training is timed. The rows a bucket
// touches are in the caches as far as the buckets before it left them
// there — as in the run, and unlike a bench that trains the same two
// buckets over and over, whose rows stay cached.
func planBench(st *store.Store, h realrun.Hyper, plan *orderings.Plan, seed int64, slots *slotSet) (*computeBench, error) {
	deg, err := st.Degrees()
	if err != nil {
		return nil, fmt.Errorf("calibrate on %s's buckets: %w", plan.Ordering, err)
	}
	w := &planWalk{st: st, plan: plan, slots: slots}
	if w.slots == nil {
		if w.slots, err = newSlots(st, plan.C); err != nil {
			return nil, err
		}
		w.ownSlots = true
	}
	if len(w.slots.bufs) < plan.C {
		return nil, fmt.Errorf("calibrate on %s's buckets: %d slot buffers for c = %d", plan.Ordering, len(w.slots.bufs), plan.C)
	}
	w.held = slices.Repeat([]int{-1}, plan.C)
	b := &computeBench{h: h, rng: rand.New(rand.NewPCG(uint64(seed), 0x91a4)), perRound: perRoundEdges(h), pb: w}
	if err := b.newEngine(st, h, deg, seed); err != nil {
		b.close()
		return nil, fmt.Errorf("calibrate on %s's buckets: %w", plan.Ordering, err)
	}
	b.on = fmt.Sprintf("%s's bucket sequence (p=%d, c=%d) on partitions of %d rows from %s", plan.Ordering, plan.P, plan.C, st.M.Rows, st.Dir)
	return b, nil
}

// planRound trains the Plan's next buckets until at least perRound edges
// are done, loading partitions as the Plan does, and returns the rate as
// round does, over the training time alone.
func (b *computeBench) planRound() (rate, sec float64, edges int64, err error) {
	if err := b.pb.claim(); err != nil {
		return 0, 0, 0, err
	}
	model, sec, edges, err := b.trainPlan(b.perRound)
	if err != nil {
		return 0, 0, 0, err
	}
	return model / sec, sec, edges, nil
}

// trainPlan trains the Plan's next buckets, from where its walk is (from
// its start again after its last bucket), until at least least edges are
// done, loading partitions as the Plan does, and returns the realrun
// model's time for them at 1 edge/s, the training time alone and the
// edges. The walk must hold the slots (claim).
func (b *computeBench) trainPlan(least int64) (model, sec float64, edges int64, err error) {
	w := b.pb
	for edges < least {
		if w.k == len(w.plan.Buckets) {
			w.restart()
		}
		for w.li < len(w.plan.Loads) && w.plan.Loads[w.li].NeededAt <= w.k {
			l := w.plan.Loads[w.li]
			buf := w.slots.bufs[l.Slot]
			if l.Evicts != orderings.None {
				store.Checksum(buf.Bytes())
			}
			if _, err := w.st.ReadPartition(l.Partition, buf); err != nil {
				return 0, 0, 0, fmt.Errorf("calibrate on %s's buckets: %w", w.plan.Ordering, err)
			}
			store.Checksum(buf.Bytes())
			w.held[l.Slot] = l.Partition
			w.li++
		}
		bk := w.plan.Buckets[w.k]
		w.k++
		es, err := w.st.ReadBucket(bk.Src, bk.Dst)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("calibrate on %s's buckets: %w", w.plan.Ordering, err)
		}
		if len(es) == 0 {
			continue
		}
		src, dst := w.buffer(bk.Src), w.buffer(bk.Dst)
		if src == nil || dst == nil {
			return 0, 0, 0, fmt.Errorf("calibrate on %s's buckets: bucket (%d,%d) has a partition its Plan did not load", w.plan.Ordering, bk.Src, bk.Dst)
		}
		t0 := time.Now()
		if _, err := b.eng.TrainBucket(es, bk.Src, src, bk.Dst, dst, b.rng); err != nil {
			return 0, 0, 0, err
		}
		sec += time.Since(t0).Seconds()
		edges += int64(len(es))
		model += unitBucketTime(b.h, int64(len(es)))
	}
	return model, sec, edges, nil
}

// restart puts the walk at the start of its Plan, holding nothing.
func (w *planWalk) restart() {
	w.k, w.li = 0, 0
	for i := range w.held {
		w.held[i] = -1
	}
}

// seek puts the walk at bucket k of its Plan, holding the partitions the
// Plan holds when bucket k trains (its loads up to and including bucket
// k's, as bookkeeping), and gives up the slots so that the next claim
// reads those partitions into them.
func (w *planWalk) seek(k int) {
	w.restart()
	w.k = k
	for w.li < len(w.plan.Loads) && w.plan.Loads[w.li].NeededAt <= k {
		l := w.plan.Loads[w.li]
		w.held[l.Slot] = l.Partition
		w.li++
	}
	if w.slots.owner == w {
		w.slots.owner = nil
	}
}

// roundAt is where timed round r of rounds starts in a Plan of n
// buckets: the middle of the r-th of rounds equal stretches, so that the
// rounds sample the whole Plan — its first buckets, trained on a buffer
// filled with a few partitions, are not like the rest of it.
func roundAt(r, rounds, n int) int {
	return (2*r + 1) * n / (2 * rounds)
}

// spreadRound is a timed round of a plan bench at the r-th of rounds
// stretches of its Plan (roundAt): the walk is put at the bucket before
// that round's first, whose partitions are read into the slots and which
// trains untimed (so that the rows it shares with the next buckets are
// in the caches, as the run leaves them), then the round trains on from
// there and is timed as planRound is. at is the bucket it started at.
func (b *computeBench) spreadRound(r, rounds int) (rate, sec float64, edges int64, at int, err error) {
	w := b.pb
	at = roundAt(r, rounds, len(w.plan.Buckets))
	if at > 0 {
		w.seek(at - 1)
		if err := w.claim(); err != nil {
			return 0, 0, 0, 0, err
		}
		if _, _, _, err := b.trainPlan(1); err != nil {
			return 0, 0, 0, 0, err
		}
		at = w.k % len(w.plan.Buckets) // past any empty bucket the warm-up skipped
	} else {
		w.seek(0)
	}
	rate, sec, edges, err = b.planRound()
	return rate, sec, edges, at, err
}

// OrderingRounds are the timed rounds of an ordering's rate, each at its
// own stretch of the Plan (roundAt) after an untimed bucket that warms
// the caches.
const OrderingRounds = 6

// MeasureOrderings measures the CPU engine at shape h on each Plan's own
// bucket sequence over st's work directory (planBench): the rate over
// the timed rounds together (the realrun model's time for the buckets
// they trained over their training time), with the rounds' spread, keyed
// by ordering. The rounds sample the whole Plan (spreadRound: one at the
// middle of each of OrderingRounds equal stretches), not its first
// buckets: at partitions of 1.5 GB a round is about one bucket, and the
// first few of a Plan are no sample of it. The orderings take their
// rounds in turn — one round of each, then the next — on one set of slot
// buffers (each round reads the partitions its stretch holds, untimed),
// so that the machine's drift over the calibration's minutes falls on
// every ordering alike instead of on whichever was measured when the
// machine was slow. Each turn starts with a timed round of the bench
// (newBench, the one the profile's rate comes from) after an untimed one
// that warms its rows in the caches again, and every ordering's rate is
// also given over the bench's in those turns (ComputeRate.Relative): the
// machine's speed in the minutes the orderings were measured cancels out
// of that ratio. The bench's timed rounds in the turns are returned
// beside the orderings' rates. A store that is not a work directory
// holding its buckets gives none.
func MeasureOrderings(st *store.Store, h realrun.Hyper, plans []*orderings.Plan) (map[string]ComputeRate, ComputeRate, error) {
	out := map[string]ComputeRate{}
	var bench ComputeRate
	if st.Dir == "" || !store.IsWorkdir(st.Dir) || len(st.M.Buckets) != st.M.P || len(plans) == 0 {
		return out, bench, nil
	}
	c := 0
	for _, pl := range plans {
		if pl.P != st.M.P {
			return nil, bench, fmt.Errorf("calibrate on %s's buckets: its Plan has p = %d, the work directory %d", pl.Ordering, pl.P, st.M.P)
		}
		c = max(c, pl.C)
	}
	slots, err := newSlots(st, c)
	if err != nil {
		return nil, bench, err
	}
	defer slots.free()
	benches := make([]*computeBench, len(plans))
	defer func() {
		for _, b := range benches {
			if b != nil {
				b.close()
			}
		}
	}()
	for i, pl := range plans {
		if benches[i], err = planBench(st, h, pl, st.M.Seed, slots); err != nil {
			return nil, bench, err
		}
	}
	ref, err := newBench(st, h)
	if err != nil {
		return nil, bench, err
	}
	defer ref.close()
	var refModel float64
	rates := make([]ComputeRate, len(plans))
	model := make([]float64, len(plans))
	for round := range OrderingRounds {
		// The orderings' rounds evict the bench's rows from the caches:
		// a bench round right after them ran at 0.77× its rate over the
		// calibration at partitions of 27.6 MB, which would set every
		// ordering's ratio 1.3× too high. One round warms it again, the
		// next is timed.
		if _, _, _, err := ref.round(); err != nil {
			return nil, bench, err
		}
		rate, sec, edges, err := ref.round()
		if err != nil {
			return nil, bench, err
		}
		refModel += rate * sec
		bench.Rates = append(bench.Rates, rate)
		bench.Seconds += sec
		bench.TrainedEdges += edges
		for i, b := range benches {
			rate, sec, edges, at, err := b.spreadRound(round, OrderingRounds)
			if err != nil {
				return nil, bench, err
			}
			r := &rates[i]
			r.Rates = append(r.Rates, rate)
			r.At = append(r.At, at)
			r.Seconds += sec
			r.TrainedEdges += edges
			model[i] += rate * sec
		}
	}
	bench.On = ref.on
	bench.Rounds = len(bench.Rates)
	bench.Edges = refModel / bench.Seconds
	bench.Low, bench.High = slices.Min(bench.Rates), slices.Max(bench.Rates)
	for i, pl := range plans {
		r := rates[i]
		r.On = fmt.Sprintf("%s, in %d rounds spread over its %d buckets, each after an untimed bucket that warms the caches", benches[i].on, len(r.Rates), len(pl.Buckets))
		r.Rounds = len(r.Rates)
		r.Edges = model[i] / r.Seconds
		r.Low, r.High = slices.Min(r.Rates), slices.Max(r.Rates)
		r.Reference = bench.Edges
		r.Relative = r.Edges / r.Reference
		r.RelativeSE = pairedSE(r.Rates, bench.Rates)
		out[pl.Ordering] = r
	}
	poolOrderings(out)
	return out, bench, nil
}

// TellApart is how many standard errors of its paired rounds an
// ordering's ratio to the bench must stand from the orderings' median
// ratio to be its own (poolOrderings).
const TellApart = 2.0

// pairedSE is the standard error of the mean of log(rates[k] /
// bench[k]), the ordering's rounds over the bench's in the same turns,
// whose pairing takes the machine's drift between turns out; 0 (not
// known) with fewer than two pairs.
func pairedSE(rates, bench []float64) float64 {
	n := min(len(rates), len(bench))
	if n < 2 {
		return 0
	}
	logs := make([]float64, n)
	var mean float64
	for k := range n {
		logs[k] = math.Log(rates[k] / bench[k])
		mean += logs[k] / float64(n)
	}
	var ss float64
	for _, l := range logs {
		ss += (l - mean) * (l - mean)
	}
	return math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
}

// poolOrderings gives the orderings whose own ratios to the bench their
// rounds cannot tell apart from the orderings' median ratio (less than
// TellApart standard errors of their paired rounds from it, in logs) one
// shared ratio: their rounds' pooled rate over the bench's. Six rounds
// of a fraction of a second each leave an ordering's own ratio
// uncertain by several percent (RelativeSE), more than what sets apart
// orderings that do the same arithmetic on partitions that miss the
// caches alike; an ordering whose rows stay in the caches (Hilbert's at
// partitions of 13.8 MB, 0.70× the bench against 0.87–0.89× for the
// others) is told apart and keeps its own, as does one whose standard
// error is not known. Own keeps each pooled ordering's own ratio.
func poolOrderings(rates map[string]ComputeRate) {
	if len(rates) < 2 {
		return
	}
	var own []float64
	for _, r := range rates {
		own = append(own, r.Relative)
	}
	slices.Sort(own)
	n := len(own)
	med := own[n/2]
	if n%2 == 0 {
		med = math.Sqrt(own[n/2-1] * own[n/2])
	}
	var model, secs, ref float64
	var pooled []string
	for _, name := range slices.Sorted(maps.Keys(rates)) { // one order: the sums are the same to the last bit every time
		r := rates[name]
		if r.RelativeSE > 0 && math.Abs(math.Log(r.Relative/med)) < TellApart*r.RelativeSE {
			pooled = append(pooled, name)
			model += r.Edges * r.Seconds
			secs += r.Seconds
			ref = r.Reference
		}
	}
	if len(pooled) < 2 || secs <= 0 || ref <= 0 {
		return
	}
	shared := model / secs / ref
	for _, name := range pooled {
		r := rates[name]
		r.Own, r.Relative = r.Relative, shared
		rates[name] = r
	}
}

// unitBucketTime is the realrun model's time for a bucket of edges at
// shape h with an engine of 1 edge/s (devices.CPUBucketTime): the rate the
// model needs to match a measured time is this over that time.
func unitBucketTime(h realrun.Hyper, edges int64) float64 {
	var prof devices.Profile
	prof.CPU.Workers = max(h.Workers, 1)
	prof.CPU.Train.Set(string(h.Model), devices.TrainCost{Edges: 1})
	return devices.CPUBucketTime(prof, h.Training, edges)
}

// measure warms up with one round and times rounds more: the median
// round's rate with the slowest and fastest beside it.
func (b *computeBench) measure(rounds int) (ComputeRate, error) {
	r := ComputeRate{On: b.on}
	if _, _, _, err := b.round(); err != nil { // the first round warms up
		return r, err
	}
	return r, b.more(&r, rounds)
}

// more times rounds more rounds into r (a later stretch of the same
// calibration: the spread then spans the time between) and sets its
// median and extent over all of them.
func (b *computeBench) more(r *ComputeRate, rounds int) error {
	for k := 0; k < rounds; k++ {
		if err := b.timeRound(r); err != nil {
			return err
		}
	}
	r.median()
	return nil
}

// median sets r's rate, extent and round count from its rounds' rates:
// the median round's rate, the extent of its stretches.
func (r *ComputeRate) median() {
	s := slices.Clone(r.Rates)
	slices.Sort(s)
	r.Rounds = len(s)
	r.Edges = s[len(s)/2]
	st := r.Stretches()
	r.Low, r.High = slices.Min(st), slices.Max(st)
}

// StretchSeconds is the least time one sample of the engine's spread
// lasts. Rounds of a fraction of a second scatter by more than the
// seconds-long stretches of an epoch do: timed for 15 minutes at
// Twitter d=64 on this machine (make reproduce-engine-drift), single
// rounds of 0.14 s spanned 0.45–1.08× their median, and the extent of a
// minute's stretches of 2 s held the median of the 150 s starting 20 s
// after them at 131 of 135 starts.
const StretchSeconds = 2.0

// Stretches are r's rates over runs of consecutive rounds lasting
// StretchSeconds or more each (the last run takes the rounds left
// over), each the edges they trained over the time they took; its
// rounds' rates themselves when they are that long already or make
// fewer than two such runs. The bench's rounds train as many edges
// each, so a stretch's rate is the harmonic mean of its rounds'.
func (r ComputeRate) Stretches() []float64 {
	n := len(r.Rates)
	if n == 0 || r.Seconds <= 0 {
		return r.Rates
	}
	k := int(math.Ceil(StretchSeconds / (r.Seconds / float64(n))))
	if k <= 1 || n/k < 2 {
		return r.Rates
	}
	var out []float64
	for lo := 0; lo+k <= n; lo += k {
		hi := lo + k
		if n-hi < k {
			hi = n
		}
		var inv float64
		for _, v := range r.Rates[lo:hi] {
			inv += 1 / v
		}
		out = append(out, float64(hi-lo)/inv)
	}
	return out
}

// ComputeSpan is how long a calibration times the engine for at most
// to match the runs it predicts (spanFor). This machine's speed wanders
// over tens of seconds: over 15 minutes of rounds at Twitter d=64 (make
// reproduce-engine-drift), a sample of 2 s put the median of the 150 s
// starting 20 s after it within 10% at 75% of the starts, one of 30 s
// at 84%, one of 60 s at 91% and one of 90 s at 98% (the error's sd
// 13.8%, 7.5%, 5.5%, 4.3%).
const ComputeSpan = 60 * time.Second

// spanFor is how long in all the bench's rounds of a calibration of
// st's graph are timed: as long as the engine trains epochs epochs of
// its training edges at rate edges/s (the runs the calibration
// predicts), up to ComputeSpan; 0 for a store without its edges.
func spanFor(st *store.Store, rate float64, epochs int) float64 {
	if rate <= 0 || st.M.Train <= 0 {
		return 0
	}
	return min(ComputeSpan.Seconds(), float64(max(epochs, 1))*float64(st.M.Train)/rate)
}

// until times rounds into r until its rounds have taken span seconds
// in all (Tail counts them, Span records span) and sets its median and
// extent over all of them.
func (b *computeBench) until(r *ComputeRate, span float64) error {
	r.Span = max(r.Span, span)
	for r.Seconds < span {
		if err := b.timeRound(r); err != nil {
			return err
		}
		r.Tail++
	}
	r.median()
	return nil
}

// timeRound times one round into r (its rate, time and edges), without
// setting r's median.
func (b *computeBench) timeRound(r *ComputeRate) error {
	rate, sec, edges, err := b.round()
	if err != nil {
		return err
	}
	r.Rates = append(r.Rates, rate)
	r.Seconds += sec
	r.TrainedEdges += edges
	return nil
}

// fold adds the timed rounds of another stretch of the same bench
// (MeasureOrderings' rounds of the bench in the orderings' turns) to r
// and sets its median and extent over all of them; InTurns
// counts the rounds so added.
func (r *ComputeRate) fold(more ComputeRate) {
	if len(more.Rates) == 0 {
		return
	}
	r.Rates = append(r.Rates, more.Rates...)
	r.Seconds += more.Seconds
	r.TrainedEdges += more.TrainedEdges
	r.InTurns += len(more.Rates)
	r.median()
}

// ComputeRounds are the timed rounds of a compute calibration (after one
// that warms up): a passing slow spell of a shared machine does not
// decide the median, and their range is the rate's measured spread.
const ComputeRounds = 7

// MeasureCompute measures the CPU engine's rate at shape h on st's own
// data (graphBench) when st is a work directory holding its buckets and
// partitions, else on synthetic partitions of st.M.Rows rows
// (syntheticBench).
func MeasureCompute(st *store.Store, h realrun.Hyper, rounds int) (ComputeRate, error) {
	b, err := newBench(st, h)
	if err != nil {
		return ComputeRate{}, err
	}
	defer b.close()
	return b.measure(rounds)
}

// newBench is graphBench on a work directory, else syntheticBench.
func newBench(st *store.Store, h realrun.Hyper) (*computeBench, error) {
	if st.Dir != "" && store.IsWorkdir(st.Dir) && len(st.M.Buckets) == st.M.P {
		return graphBench(st, h, st.M.Seed)
	}
	return syntheticBench(h, st.M.Rows)
}

// TimedRound is one timed round of the bench in a trace of the engine
// (TraceEngine): when it ended, counted from the trace's start, its rate
// and how long it took.
type TimedRound struct {
	At      time.Duration
	Rate    float64
	Seconds float64
}

// TraceEngine times the engine's bench at shape h on st (newBench, as
// MeasureCompute) round after round for d, after one round that warms
// up: how its rate wanders over the time a calibration and the runs it
// predicts take.
func TraceEngine(st *store.Store, h realrun.Hyper, d time.Duration) ([]TimedRound, error) {
	b, err := newBench(st, h)
	if err != nil {
		return nil, err
	}
	defer b.close()
	if _, _, _, err := b.round(); err != nil {
		return nil, err
	}
	var out []TimedRound
	start := time.Now()
	for time.Since(start) < d {
		rate, sec, _, err := b.round()
		if err != nil {
			return out, err
		}
		out = append(out, TimedRound{At: time.Since(start), Rate: rate, Seconds: sec})
	}
	return out, nil
}

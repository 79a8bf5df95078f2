package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/executor"
	"github.com/tierflow/tierflow/workload"
)

// MultiGPUConfig is one simulated epoch of a system on several GPUs of one
// machine.
type MultiGPUConfig struct {
	// System is ge2 (a GPU buffer of c partitions per GPU, fed over PCIe
	// from CPU memory) or dglke (everything in CPU memory, synchronous
	// per-batch transfers).
	System   System
	Profile  devices.Profile
	Dataset  workload.Dataset
	Training workload.Training
	// GPUs is the number of GPUs trained on (0: Profile.GPU.Count).
	GPUs int
	// Plan is the epoch's COVER plan (ge2 only): p = 4^k, c = 4.
	Plan *orderings.Plan
	// BucketEdges are the training edges per bucket, row-major; nil
	// spreads Dataset.TrainEdges() uniformly (ge2 only).
	BucketEdges []int64
	// HostBW, when positive, caps in bytes/s every GPU's PCIe copies
	// together, both directions: host memory and the CPUs' root complexes
	// shared by GPUs that each have a link of their own (pcie.h2d and
	// pcie.d2h per GPU). Zero: no shared cap.
	HostBW float64
}

// GPUUsage is one GPU's share of a multi-GPU epoch.
type GPUUsage struct {
	GPU int `json:"gpu"`
	// BusySeconds is the GPU's compute time; StallSeconds the time it sat
	// idle for want of a partition (ge2) or of its next batch from the
	// CPU and PCIe (dglke); EndSeconds when its last work (the final
	// flush included) finished.
	BusySeconds  float64 `json:"busy_s"`
	StallSeconds float64 `json:"stall_s"`
	EndSeconds   float64 `json:"end_s"`
	// H2D and D2H are the bytes and busy time of its PCIe link.
	H2DBytes       float64 `json:"h2d_bytes"`
	D2HBytes       float64 `json:"d2h_bytes"`
	H2DBusySeconds float64 `json:"h2d_busy_s"`
	D2HBusySeconds float64 `json:"d2h_busy_s"`
	// Buckets, Loads and Batches are its work: buckets trained, partitions
	// loaded (ge2) and batches.
	Buckets int   `json:"buckets"`
	Loads   int   `json:"loads"`
	Batches int   `json:"batches"`
	Edges   int64 `json:"edges"`
}

// MultiGPUReport is a multi-GPU epoch's outcome.
type MultiGPUReport struct {
	System  string `json:"system"`
	Device  string `json:"device"`
	Dataset string `json:"dataset"`
	GPUs    int    `json:"gpus"`
	// P and C are the plan's (ge2); Rounds the parallel classes of COVER
	// lines it was split into (ge2).
	P      int `json:"p,omitempty"`
	C      int `json:"c,omitempty"`
	Rounds int `json:"rounds,omitempty"`
	// PartitionBytes is one partition's size (ge2).
	PartitionBytes int64      `json:"partition_bytes,omitempty"`
	EpochSeconds   float64    `json:"epoch_s"`
	PerGPU         []GPUUsage `json:"per_gpu"`
	// H2DBytes and D2HBytes are all GPUs' PCIe bytes.
	H2DBytes float64 `json:"h2d_bytes"`
	D2HBytes float64 `json:"d2h_bytes"`
	// HostCappedSeconds is the time the shared host cap (HostBW) held the
	// active links below their own bandwidth.
	HostCappedSeconds float64 `json:"host_capped_s"`
	// CPUBusySeconds is the shared CPU's batch construction time (dglke).
	CPUBusySeconds float64 `json:"cpu_busy_s,omitempty"`
	// Conflicts counts loads that found their partition resident on
	// another GPU (ge2; the schedule makes it zero).
	Conflicts int `json:"conflicts"`
	Events    int `json:"events"`
}

// SimulateMultiGPU simulates one epoch of the ge2 or dglke system on G
// GPUs of one machine, on the same Kernel, Server and Link primitives as
// Run.
//
// Every GPU has a compute Server and a PCIe link each way of its own
// (pcie.h2d, pcie.d2h); when HostBW is set, the links that are moving
// bytes are scaled down together so that their sum never exceeds it (a
// link's rate is scaled when another starts or stops, as Run's CPU/disk
// interference is).
//
// ge2. The Plan must be COVER's: its states are the lines of the affine
// geometry AG(k,4) over the p = 4^k partitions, and the lines of one
// direction (a parallel class) are pairwise disjoint and cover every
// partition. The epoch is split into rounds, one per parallel class, in
// the order the Plan first reaches each class. A round's lines are dealt
// largest first (in edges) to the GPU with the fewest edges so far, at
// most ceil(lines/G) a GPU, and each GPU trains its lines of the round in
// Plan order: the GPUs of a round train disjoint groups, never the same
// bucket, and with p/4 divisible by G each gets the same number of lines. A line's buckets are the Plan's
// buckets of that state, in Plan order (a diagonal bucket (x,x) belongs to
// the first state holding x, as the Plan emits it). Each GPU replays its
// own bucket sequence on its buffer of c slots (orderings.Replay, Belady)
// and runs it as Run runs ge2's: loads in order, each issued once its
// slot's partition has had its last use (the prefetch window) and read
// straight into the slot over H2D; a bucket's batches (GPUBatchCost) are
// fed once its loads are in, at most Staleness in flight. Across GPUs a
// partition is owned by one GPU at a time: an evicted partition is copied
// back D2H as soon as its last use on its GPU is done (GE2 writes back a
// group's partitions when it leaves them), and a load of partition x waits
// until the previous holder's copy of x (in the rounds' order) is back in
// CPU memory; the copy back of the slot's own previous partition runs
// beside the load (on the other direction), as Run's ge2 assumes. At the
// end each GPU flushes its resident
// partitions D2H. With G = 1 there are no rounds: the GPU runs the Plan's
// states in Plan order, with the Plan's loads, and its epoch is within 1%
// of Run's (tested).
//
// dglke. Batches of Training.Batch edges (the last one smaller) are dealt
// round-robin to the GPUs; each GPU runs its batches one after another:
// CPU batch construction (CPUBatchCost's CPU term, at the whole machine's
// rates, on one CPU shared by every GPU's trainer: processor sharing),
// the batch's rows over its H2D link, the arithmetic on its GPU, the rows
// back over D2H. With G = 1 this is Run's dglke epoch.
func SimulateMultiGPU(cfg MultiGPUConfig) (MultiGPUReport, error) {
	if err := cfg.Training.Validate(); err != nil {
		return MultiGPUReport{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := cfg.Profile.Validate(); err != nil {
		return MultiGPUReport{}, fmt.Errorf("%w: device: %w", ErrConfig, err)
	}
	g := cfg.GPUs
	if g == 0 {
		g = cfg.Profile.GPU.Count
	}
	switch {
	case g < 1:
		return MultiGPUReport{}, fmt.Errorf("%w: multi-GPU needs at least one GPU, got %d", ErrConfig, g)
	case cfg.Profile.GPU.Count > 0 && g > cfg.Profile.GPU.Count:
		return MultiGPUReport{}, fmt.Errorf("%w: %d GPUs asked for and device %s has %d", ErrConfig, g, cfg.Profile.Name, cfg.Profile.GPU.Count)
	case cfg.HostBW < 0 || math.IsNaN(cfg.HostBW):
		return MultiGPUReport{}, fmt.Errorf("%w: host bandwidth must be non-negative, got %v", ErrConfig, cfg.HostBW)
	case cfg.System.Staleness < 1:
		return MultiGPUReport{}, fmt.Errorf("%w: staleness must be at least 1, got %d", ErrConfig, cfg.System.Staleness)
	}
	m := newMulti(cfg, g)
	var err error
	switch {
	case cfg.System.IO == PCIePath && cfg.System.Partitioned && cfg.System.Batches == OnGPU:
		err = m.runGE2()
	case !cfg.System.Partitioned && cfg.System.Batches == Synchronous && cfg.System.Resident == "ram":
		err = m.runDGLKE()
	default:
		err = fmt.Errorf("%w: system %s has no multi-GPU model (want ge2 or dglke)", ErrConfig, cfg.System.Name)
	}
	if err != nil {
		return MultiGPUReport{}, err
	}
	return m.report(), nil
}

// multi is one multi-GPU epoch in progress.
type multi struct {
	cfg  MultiGPUConfig
	k    Kernel
	gpus []*gpuRun
	cpu  *Server // dglke: the shared CPU
	// host cap bookkeeping: the nominal bandwidth of the links moving
	// bytes, and since when the cap has bound.
	active      float64
	cappedSince float64
	capped      float64
	rep         MultiGPUReport
	// ge2: partitions, per partition the writes back completed (in the
	// rounds' holding order), and the GPU holding it (-1: CPU memory).
	pbytes   float64
	full     Cost // ge2: a full batch's cost
	released []int
	holder   []int
}

// gpuRun is one GPU: its compute, its PCIe links and (ge2) its share of
// the Plan as a bucket sequence with its own load schedule.
type gpuRun struct {
	m        *multi
	id       int
	gpu      *Server
	h2d, d2h *Link

	// ge2 trainer (as engine's)
	buckets   []orderings.Bucket
	edges     []int64
	loads     []orderings.Load
	final     []int
	need      []int
	holding   []int // by load: its index in its partition's holding order
	evictions []int // loads that evict, by (IssueAt, index)
	kb, bi    int
	inFlight  int
	remaining []int
	fed       []bool
	completed int
	// x is this GPU's buffer manager (orderings/executor): its share of
	// the Plan's loads, write-backs and final flush; installed counts
	// the installs carried out.
	x         *executor.Executor
	installed int
	waitStart float64
	stall     float64
	batches   int
	edgeCount int64
	end       float64
}

func newMulti(cfg MultiGPUConfig, g int) *multi {
	m := &multi{cfg: cfg, cappedSince: -1}
	pc := cfg.Profile.PCIe
	for i := 0; i < g; i++ {
		r := &gpuRun{m: m, id: i, waitStart: -1}
		r.gpu = NewServer(&m.k, fmt.Sprintf("gpu %d", i))
		r.h2d = NewLink(&m.k, fmt.Sprintf("pcie h2d %d", i), 0, Sharing{ReadBW: float64(pc.H2D), WriteBW: float64(pc.H2D)})
		r.d2h = NewLink(&m.k, fmt.Sprintf("pcie d2h %d", i), 0, Sharing{ReadBW: float64(pc.D2H), WriteBW: float64(pc.D2H)})
		m.gpus = append(m.gpus, r)
	}
	if cfg.HostBW > 0 {
		for _, r := range m.gpus {
			m.shareHost(r.h2d, float64(pc.H2D))
			m.shareHost(r.d2h, float64(pc.D2H))
		}
	}
	return m
}

// shareHost puts link l, of nominal bandwidth bw, under the host cap:
// while the links moving bytes would together exceed HostBW, each is
// scaled by HostBW ÷ their sum.
func (m *multi) shareHost(l *Link, bw float64) {
	l.OnBusy(func(busy bool) {
		if busy {
			m.active += bw
		} else {
			m.active -= bw
		}
		if m.active < 1 { // rounding: nothing moving
			m.active = 0
		}
		scale := 1.0
		if m.active > m.cfg.HostBW {
			scale = m.cfg.HostBW / m.active
		}
		now := m.k.Now()
		switch {
		case scale < 1 && m.cappedSince < 0:
			m.cappedSince = now
		case scale == 1 && m.cappedSince >= 0:
			m.capped += now - m.cappedSince
			m.cappedSince = -1
		}
		for _, r := range m.gpus {
			r.h2d.SetScale(scale)
			r.d2h.SetScale(scale)
		}
	})
}

// coverDirection is the direction of a line of AG(k,4) given as four
// partitions: the difference of two of its points (XOR of their base-4
// digits) whose most significant non-zero digit is 1. Lines of the same
// direction are parallel: disjoint, and together they cover every point.
func coverDirection(line []int) (int, error) {
	if len(line) != 4 {
		return 0, fmt.Errorf("state %v is not a line of 4 partitions", line)
	}
	pts := slices.Clone(line)
	slices.Sort(pts)
	dir := -1
	for _, x := range pts[1:] {
		d := x ^ pts[0]
		lead := 0
		for v := d; v > 0; v >>= 2 {
			lead = v & 3
		}
		if lead == 1 {
			if dir >= 0 {
				return 0, fmt.Errorf("state %v is not a line of AG(k,4)", line)
			}
			dir = d
		}
	}
	if dir < 0 {
		return 0, fmt.Errorf("state %v is not a line of AG(k,4)", line)
	}
	// A line is {a + t·b}: the other differences must be ω·b and ω²·b.
	for _, x := range pts[1:] {
		d := x ^ pts[0]
		ok := false
		for t := 1; t < 4; t++ {
			if gf4Scale(dir, t) == d {
				ok = true
			}
		}
		if !ok {
			return 0, fmt.Errorf("state %v is not a line of AG(k,4)", line)
		}
	}
	return dir, nil
}

// gf4Scale multiplies every base-4 digit of x by t in GF(4) (0, 1, ω, ω²
// encoded 0..3, ω² = ω + 1).
func gf4Scale(x, t int) int {
	mul := [4][4]int{{0, 0, 0, 0}, {0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}}
	out, shift := 0, 0
	for v := x; v > 0; v >>= 2 {
		out |= mul[t][v&3] << shift
		shift += 2
	}
	return out
}

// ge2Split assigns the Plan's buckets to GPUs: per GPU, its bucket
// sequence and, per bucket, its round; it returns the number of rounds.
func (m *multi) ge2Split(edges []int64) (perGPU [][]orderings.Bucket, rounds [][]int, nRounds int, err error) {
	pl := m.cfg.Plan
	if len(pl.States) == 0 {
		return nil, nil, 0, fmt.Errorf("%w: the ge2 multi-GPU model needs a COVER plan (with buffer states), got ordering %q", ErrConfig, pl.Ordering)
	}
	// Each bucket's state: states are emitted in order, so a pointer
	// moves forward to the first state holding both its partitions.
	stateBuckets := make([][]orderings.Bucket, len(pl.States))
	member := make([][]bool, len(pl.States))
	for s, st := range pl.States {
		member[s] = make([]bool, pl.P)
		for _, x := range st {
			member[s][x] = true
		}
	}
	cur := 0
	for _, b := range pl.Buckets {
		for cur < len(pl.States) && !(member[cur][b.Src] && member[cur][b.Dst]) {
			cur++
		}
		if cur == len(pl.States) {
			return nil, nil, 0, fmt.Errorf("%w: bucket %v lies in no buffer state after the previous bucket's", ErrConfig, b)
		}
		stateBuckets[cur] = append(stateBuckets[cur], b)
	}
	// Rounds: parallel classes, in the order the Plan first reaches them.
	roundOf := map[int]int{} // direction → round; looked up only, never ranged
	var classes [][]int      // round → states in Plan order
	for s, st := range pl.States {
		d, err := coverDirection(st)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%w: the ge2 multi-GPU model needs a COVER plan: %w", ErrConfig, err)
		}
		r, ok := roundOf[d]
		if !ok {
			r = len(classes)
			roundOf[d] = r
			classes = append(classes, nil)
		}
		classes[r] = append(classes[r], s)
	}
	g := len(m.gpus)
	if g == 1 {
		// One GPU needs no rounds: it runs the Plan's states in Plan order.
		all := make([]int, len(pl.States))
		for s := range all {
			all[s] = s
		}
		classes = [][]int{all}
	}
	perGPU = make([][]orderings.Bucket, g)
	rounds = make([][]int, g)
	var load []int64 // edges dealt to each GPU so far
	load = make([]int64, g)
	edgesOf := func(s int) (n int64) {
		for _, b := range stateBuckets[s] {
			n += edges[b.Src*pl.P+b.Dst]
		}
		return n
	}
	for r, states := range classes {
		// Largest line first to the GPU with the fewest edges so far
		// (ties: lowest index), at most ceil(lines/G) lines a GPU.
		order := slices.Clone(states)
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(edgesOf(b), edgesOf(a)) })
		quota := (len(states) + g - 1) / g
		taken := make([]int, g)
		mine := make([][]int, g)
		for _, s := range order {
			best := -1
			for i := range g {
				if taken[i] < quota && (best < 0 || load[i] < load[best]) {
					best = i
				}
			}
			taken[best]++
			load[best] += edgesOf(s)
			mine[best] = append(mine[best], s)
		}
		for i := range g {
			slices.Sort(mine[i]) // Plan order within the round
			for _, s := range mine[i] {
				perGPU[i] = append(perGPU[i], stateBuckets[s]...)
				for range stateBuckets[s] {
					rounds[i] = append(rounds[i], r)
				}
			}
		}
	}
	return perGPU, rounds, len(classes), nil
}

func (m *multi) runGE2() error {
	cfg := m.cfg
	pl := cfg.Plan
	if pl == nil {
		return fmt.Errorf("%w: system %s needs a Plan", ErrConfig, cfg.System.Name)
	}
	if cfg.Profile.GPU.BatchEdges <= 0 {
		return fmt.Errorf("%w: system %s builds batches on the GPU and device %s gives no gpu.batch_edges", ErrConfig, cfg.System.Name, cfg.Profile.Name)
	}
	p := pl.P
	edges := cfg.BucketEdges
	if edges == nil {
		var err error
		if edges, err = BucketEdges(cfg.Dataset.TrainEdges(), p, Uniform, 0); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
	} else if len(edges) != p*p {
		return fmt.Errorf("%w: %d bucket counts for p = %d", ErrConfig, len(edges), p)
	}
	perGPU, rounds, nRounds, err := m.ge2Split(edges)
	if err != nil {
		return err
	}
	m.pbytes = float64(cfg.System.DataPartitionBytes(cfg.Dataset, p, cfg.Training.Dim))
	m.rep.P, m.rep.C, m.rep.Rounds, m.rep.PartitionBytes = p, pl.C, nRounds, int64(m.pbytes)
	m.released = make([]int, p)
	m.holder = make([]int, p)
	for x := range m.holder {
		m.holder[x] = -1
	}
	// Holdings: every load starts one; per partition they are ordered by
	// (round, GPU, load index), and holding h may load only once holding
	// h-1 has been copied back.
	type holding struct{ round, gpu, load int }
	holdings := make([][]holding, p)
	for i, r := range m.gpus {
		r.buckets = perGPU[i]
		if len(r.buckets) == 0 {
			continue
		}
		s, err := orderings.Replay(p, pl.C, r.buckets, orderings.Belady)
		if err != nil {
			return fmt.Errorf("%w: GPU %d: %w", ErrConfig, i, err)
		}
		r.loads, r.final = s.Loads, s.FinalResident
		sub := &orderings.Plan{P: p, C: pl.C, Buckets: r.buckets, Loads: r.loads, FinalResident: r.final}
		r.need = sub.Arrivals()
		// GE2's GPU buffer: a partition goes back to CPU memory as soon
		// as its last use here has passed (so another GPU may take it),
		// and a load waits until the partition's previous holder has
		// copied it back.
		pol := cfg.System.Policy(false)
		pol.EagerWrites = true
		r.x = executor.New(sub, pol)
		r.x.Gate(func(j int) bool { return m.released[r.loads[j].Partition] >= r.holding[j] })
		r.edges = make([]int64, len(r.buckets))
		for k, b := range r.buckets {
			r.edges[k] = edges[b.Src*p+b.Dst]
		}
		r.remaining = make([]int, len(r.buckets))
		r.fed = make([]bool, len(r.buckets))
		r.holding = make([]int, len(r.loads))
		for j, l := range r.loads {
			holdings[l.Partition] = append(holdings[l.Partition], holding{rounds[i][l.NeededAt], i, j})
		}
	}
	for _, hs := range holdings {
		slices.SortFunc(hs, func(a, b holding) int {
			return cmp.Or(cmp.Compare(a.round, b.round), cmp.Compare(a.gpu, b.gpu), cmp.Compare(a.load, b.load))
		})
		for h, x := range hs {
			m.gpus[x.gpu].holding[x.load] = h
		}
	}
	m.full = GPUBatchCost(cfg.Profile, cfg.Training, cfg.Training.Batch)
	m.k.At(0, func() {
		for _, r := range m.gpus {
			if r.x != nil {
				r.apply(r.x.Start())
			}
			r.tryFeed(m.full)
		}
	})
	m.k.Run()
	for _, r := range m.gpus {
		if r.completed != len(r.buckets) {
			return fmt.Errorf("%w: GPU %d finished %d of %d buckets (a partition dependency never resolved)", ErrConfig, r.id, r.completed, len(r.buckets))
		}
	}
	return nil
}

// tryFeed feeds the next buckets' batches while their partitions are in.
func (r *gpuRun) tryFeed(full Cost) {
	m := r.m
	tr := m.cfg.Training
	for r.kb < len(r.buckets) && r.inFlight < m.cfg.System.Staleness {
		k := r.kb
		if r.installed < r.need[k] {
			if r.waitStart < 0 && r.inFlight == 0 {
				r.waitStart = m.k.Now()
			}
			return
		}
		if r.waitStart >= 0 {
			r.stall += m.k.Now() - r.waitStart
			r.waitStart = -1
		}
		n := workload.BatchCount(r.edges[k], tr.Batch)
		if r.bi == 0 {
			r.remaining[k] = n
		}
		if r.bi < n {
			size := workload.BatchSize(r.edges[k], tr.Batch, r.bi)
			c := full
			if size != tr.Batch {
				c = GPUBatchCost(m.cfg.Profile, tr, size)
			}
			r.bi++
			r.inFlight++
			r.batches++
			r.edgeCount += int64(size)
			r.gpu.Do(c.GPU, func() {
				r.inFlight--
				r.remaining[k]--
				r.advance(full)
				r.tryFeed(full)
			})
		}
		if r.bi >= n {
			r.fed[k] = true
			r.kb++
			r.bi = 0
			r.advance(full)
		}
	}
}

// advance counts finished buckets and tells the executor, which writes
// back the partitions whose last use on this GPU has passed, issues
// loads and at the end flushes the resident partitions.
func (r *gpuRun) advance(full Cost) {
	moved := false
	for r.completed < len(r.buckets) && r.fed[r.completed] && r.remaining[r.completed] == 0 {
		r.completed++
		moved = true
	}
	if !moved {
		return
	}
	r.apply(r.x.Completed(r.completed))
	if r.completed == len(r.buckets) {
		r.end = math.Max(r.end, r.m.k.Now())
	}
}

// apply carries out this GPU's executor's actions: a write-back or flush
// copies the partition to CPU memory and releases it to its next holder,
// a read copies the next load into its slot.
func (r *gpuRun) apply(acts []executor.Action) {
	m := r.m
	for _, a := range acts {
		switch a.Kind {
		case executor.Write:
			r.writeBack(a.Partition, func() {
				r.apply(r.x.Evicted(a.Load))
				r.apply(r.x.Written(a.Load))
			})
		case executor.Flush:
			r.writeBack(a.Partition, func() { r.apply(r.x.Flushed()) })
		case executor.Read:
			if m.holder[a.Partition] >= 0 {
				m.rep.Conflicts++
			}
			m.holder[a.Partition] = r.id
			r.h2d.Transfer(m.pbytes, Read, func() { r.apply(r.x.ReadDone(a.Load)) })
		case executor.Install:
			r.installed++
			r.tryFeed(m.full)
		}
	}
}

// writeBack copies partition x back to CPU memory and releases it to its
// next holder.
func (r *gpuRun) writeBack(x int, done func()) {
	m := r.m
	r.d2h.Transfer(m.pbytes, Read, func() {
		m.holder[x] = -1
		m.released[x]++
		r.end = math.Max(r.end, m.k.Now())
		done()
		for _, o := range m.gpus { // in GPU order: deterministic
			if o.x != nil {
				o.apply(o.x.Retry())
			}
		}
	})
}

// runDGLKE deals the batches round-robin to the GPUs; each GPU's trainer
// runs its batches one after another through the shared CPU, its PCIe
// links and its GPU.
func (m *multi) runDGLKE() error {
	cfg := m.cfg
	tr := cfg.Training
	m.cpu = NewServer(&m.k, "cpu")
	total := cfg.Dataset.TrainEdges()
	fullN, rest := workload.SplitBatches(total, tr.Batch)
	g := int64(len(m.gpus))
	for i, r := range m.gpus {
		// Batches i, i+G, … of the epoch's sequence (the remainder last).
		n := fullN / g
		if int64(i) < fullN%g {
			n++
		}
		sizes := make([]int, 0, n+1)
		for b := int64(0); b < n; b++ {
			sizes = append(sizes, tr.Batch)
		}
		if rest > 0 && int64(i) == fullN%g {
			sizes = append(sizes, rest)
		}
		next := 0
		var step func()
		step = func() {
			if next >= len(sizes) {
				r.end = m.k.Now()
				return
			}
			b := sizes[next]
			next++
			r.batches++
			r.edgeCount += int64(b)
			c := CPUBatchCost(cfg.Profile, tr, b)
			arith := tr.PaperBatchFLOPs(b) / float64(cfg.Profile.GPU.FLOPS)
			m.cpu.Do(c.CPU, func() {
				r.h2d.Transfer(c.H2D, Read, func() {
					r.stall += math.Max(0, m.k.Now()-r.gpu.free)
					r.gpu.Do(arith, func() {
						r.d2h.Transfer(c.D2H, Read, step)
					})
				})
			})
		}
		m.k.At(0, step)
	}
	m.k.Run()
	return nil
}

func (m *multi) report() MultiGPUReport {
	cfg := m.cfg
	rep := m.rep
	rep.System, rep.Device, rep.Dataset, rep.GPUs = cfg.System.Name, cfg.Profile.Name, cfg.Dataset.Name, len(m.gpus)
	rep.EpochSeconds = m.k.Now()
	rep.Events = m.k.Events()
	if m.cappedSince >= 0 {
		m.capped += rep.EpochSeconds - m.cappedSince
	}
	rep.HostCappedSeconds = m.capped
	if m.cpu != nil {
		rep.CPUBusySeconds = m.cpu.Busy()
	}
	for _, r := range m.gpus {
		u := GPUUsage{GPU: r.id, BusySeconds: r.gpu.Busy(), StallSeconds: r.stall, EndSeconds: r.end,
			H2DBytes: r.h2d.Bytes(), D2HBytes: r.d2h.Bytes(), H2DBusySeconds: r.h2d.Busy(), D2HBusySeconds: r.d2h.Busy(),
			Buckets: len(r.buckets), Loads: len(r.loads), Batches: r.batches, Edges: r.edgeCount}
		rep.PerGPU = append(rep.PerGPU, u)
		rep.H2DBytes += u.H2DBytes
		rep.D2HBytes += u.D2HBytes
	}
	return rep
}

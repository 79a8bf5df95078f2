package sim

import (
	"errors"
	"fmt"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/lockserver"
	"github.com/tierflow/tierflow/workload"
)

// PBGConfig is PyTorch-BigGraph training as its paper (§4, §5) and its
// released trainer loop describe it, on one machine or several: each
// trainer holds the two partitions of its bucket (HOGWILD threads on the
// CPU train the bucket's edges), and between buckets it saves the
// partitions the next bucket does not use, then loads the ones it lacks,
// then the next bucket's edges, one after another.
//
// On one machine (Machines = 1) the buckets come in PBG's inside-out
// order and partitions are swapped to the machine's disk, edges read from
// it. On several, each machine runs one trainer, buckets come from the
// lock server (orderings/lockserver: one policy, shared with the real
// distributed engine), partition i lives on the partition server of
// machine i mod Machines and moves over the network (Profile.Network),
// edges come from the shared filesystem, and a trainer that gets no
// bucket saves its partitions, gives them back, and asks again every
// PollSeconds. Shared parameters (relation operators) are synchronised in
// the background with the parameter server, which takes its share of
// every machine's link.
type PBGConfig struct {
	Profile  devices.Profile
	Dataset  workload.Dataset
	Training workload.Training
	// P is the number of partitions (1: the model is not partitioned and
	// stays in memory).
	P int
	// Machines is the number of machines, one trainer each.
	Machines int
	// Epochs is the number of epochs simulated (0: 2 — the first, under
	// the lock server's initialisation rule, and one after it).
	Epochs int
	// BucketEdges are the training edges per bucket, row-major; nil
	// spreads Dataset.TrainEdges() uniformly.
	BucketEdges []int64
	// PollSeconds is how long a trainer that got no bucket sleeps before
	// asking again (0: PBG's 1 s).
	PollSeconds float64
	// MaxEdgesPerChunk bounds the edges of a bucket loaded at once: an
	// epoch makes ceil(largest bucket ÷ it) passes over all buckets, each
	// with its share of every bucket's edges (0: PBG's default, 10⁹).
	MaxEdgesPerChunk int64
	// Engine, when set, models tierflow's own distributed engine
	// (realrun/dist) instead of PBG's trainer loop; see EngineModel.
	Engine *EngineModel
}

// EngineModel is tierflow's distributed engine as the simulator sees it:
// the same lock server, but every partition and edge lives on one shared
// store (an object store, or a filesystem server) that each trainer
// reaches over its own link; a trainer loads the partitions of its bucket
// it does not already hold at their latest version, reads the bucket's
// edges, trains, then writes both partitions back and releases the bucket
// (write-through: a crash loses at most the bucket in hand); and a trainer
// with no bucket is woken as soon as one is released.
type EngineModel struct {
	// PartitionBytes and EdgeBytes are the real store's partition and
	// per-edge sizes.
	PartitionBytes, EdgeBytes int64
	// EdgeSeconds is one trainer's training time per edge, as calibrated.
	EdgeSeconds float64
	// PollSeconds is how soon a waiting trainer asks again (0: 50 ms).
	PollSeconds float64
}

// PBGTraining is PyTorch-BigGraph's default training shape (its config
// schema): batches of 1,000 edges in chunks of 50, each chunk scored
// against 50 negatives from its own edges and 50 sampled uniformly.
func PBGTraining(ds workload.Dataset, d int) workload.Training {
	m := ds.Model
	if m == "" {
		m = workload.Dot
	}
	return workload.Training{Model: m, Dim: d, Batch: 1000, Negatives: 100, ChunkSize: 50}
}

// PBGTrainer is one trainer's epoch.
type PBGTrainer struct {
	Machine int `json:"machine"`
	Buckets int `json:"buckets"`
	// TrainSeconds is the time its threads trained; WaitBucketSeconds the
	// time it had no bucket (the lock server had none whose partitions
	// were free: PBG's incomplete occupancy); TransferSeconds the time it
	// waited for partitions and edges to move.
	TrainSeconds      float64 `json:"train_s"`
	WaitBucketSeconds float64 `json:"wait_bucket_s"`
	TransferSeconds   float64 `json:"transfer_s"`
	// Occupancy is TrainSeconds over the epoch.
	Occupancy float64 `json:"occupancy"`
	// Loads and Saves are partitions moved in and out.
	Loads int `json:"loads"`
	Saves int `json:"saves"`
	// SentBytes and ReceivedBytes are its machine's network traffic
	// (partitions, edges and parameter synchronisation); zero on one machine.
	SentBytes     float64 `json:"sent_bytes"`
	ReceivedBytes float64 `json:"received_bytes"`
	// PeakMemoryBytes is its machine's peak: the partitions and edges the
	// trainer holds, the partitions its partition server keeps, and its
	// share of the shared parameters.
	PeakMemoryBytes int64 `json:"peak_memory_bytes"`
}

// PBGEpoch is one simulated epoch.
type PBGEpoch struct {
	Seconds  float64      `json:"seconds"`
	Passes   int          `json:"passes"`
	Trainers []PBGTrainer `json:"trainers"`
	// NetworkBytes is everything sent over the network (each byte once),
	// SyncBytes the parameter synchronisation's part of it, EdgeBytes the
	// edges read; DiskReadBytes and DiskWriteBytes the local disk's
	// traffic (one machine).
	NetworkBytes   float64 `json:"network_bytes"`
	SyncBytes      float64 `json:"sync_bytes"`
	EdgeBytes      float64 `json:"edge_bytes"`
	DiskReadBytes  float64 `json:"disk_read_bytes"`
	DiskWriteBytes float64 `json:"disk_write_bytes"`
}

// PBGReport is the simulation of a PBGConfig.
type PBGReport struct {
	Dataset  string `json:"dataset"`
	Device   string `json:"device"`
	P        int    `json:"p"`
	Machines int    `json:"machines"`
	// MaxParallel is the most trainers that can train at once (P/2).
	MaxParallel    int        `json:"max_parallel"`
	PartitionBytes int64      `json:"partition_bytes"`
	Epochs         []PBGEpoch `json:"epochs"`
	// PeakMemoryBytes is the largest machine's peak.
	PeakMemoryBytes int64    `json:"peak_memory_bytes"`
	Warnings        []string `json:"warnings,omitempty"`
}

// Seconds is the time of n epochs: the first simulated epoch, then the
// last one repeated.
func (r PBGReport) Seconds(n int) float64 {
	if len(r.Epochs) == 0 || n < 1 {
		return 0
	}
	return r.Epochs[0].Seconds + float64(n-1)*r.Epochs[len(r.Epochs)-1].Seconds
}

// Steady is the last simulated epoch (after the first's initialisation).
func (r PBGReport) Steady() PBGEpoch { return r.Epochs[len(r.Epochs)-1] }

// ErrPBG wraps every PBGConfig error.
var ErrPBG = errors.New("bad PyTorch-BigGraph simulation")

// SharedParamBytes is the size of PBG's unpartitioned parameters, the
// relations' (workload.Model.ResidentRelationBytes): RelWidth(d) floats a
// relation and as many of Adagrad state — for DistMult and ComplEx d
// floats twice, which is also PBG's two operators of d floats a relation
// (PBG §5.4.1: separate operators for source and destination negatives);
// a PBG pair's two operators with their state; none for dot.
//
// A typed graph's unpartitioned entity types (ResidentNodes) are PBG's
// shared parameters too: their embeddings, with row-wise Adagrad state,
// stay in memory and, on several machines, are synchronised through the
// parameter server like the relations'.
func SharedParamBytes(ds workload.Dataset, t workload.Training) int64 {
	return t.Model.ResidentRelationBytes(t.Dim, max(ds.Relations, 1)) + workload.PartitionBytes(ds.ResidentNodes, 1, t.Dim, true)
}

// EdgeBytes is the size of one stored edge: source and destination as
// 64-bit ids, and a relation id when the graph has several relations.
func EdgeBytes(ds workload.Dataset) int64 {
	if ds.Relations > 1 {
		return 24
	}
	return 16
}

func (c *PBGConfig) validate() error {
	if err := c.Training.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrPBG, err)
	}
	if err := c.Profile.Validate(); err != nil {
		return fmt.Errorf("%w: device: %w", ErrPBG, err)
	}
	if c.Engine != nil {
		if c.Engine.PartitionBytes <= 0 || c.Engine.EdgeBytes <= 0 || !(c.Engine.EdgeSeconds >= 0) {
			return fmt.Errorf("%w: the engine model needs partition and edge sizes and a time per edge", ErrPBG)
		}
	} else if c.Profile.GPU.Count > 0 {
		return fmt.Errorf("%w: device %s has a GPU; the PyTorch-BigGraph model trains on the CPU (HOGWILD threads) as in its paper: use a CPU machine such as pbg-paper", ErrPBG, c.Profile.Name)
	}
	switch {
	case c.P < 1:
		return fmt.Errorf("%w: p must be at least 1, got %d", ErrPBG, c.P)
	case c.Machines < 1:
		return fmt.Errorf("%w: machines must be at least 1, got %d", ErrPBG, c.Machines)
	case c.Machines > 1 && c.P < 2:
		return fmt.Errorf("%w: %d machines need at least 2 partitions to share, got p = %d", ErrPBG, c.Machines, c.P)
	case (c.Machines > 1 || c.Engine != nil) && c.Profile.Network.Bandwidth <= 0:
		return fmt.Errorf("%w: %d machines need a network and device %s has none (network.bandwidth)", ErrPBG, c.Machines, c.Profile.Name)
	case c.Epochs < 0 || c.PollSeconds < 0 || c.MaxEdgesPerChunk < 0:
		return fmt.Errorf("%w: epochs, poll and edges per chunk must not be negative", ErrPBG)
	case c.BucketEdges != nil && len(c.BucketEdges) != c.P*c.P:
		return fmt.Errorf("%w: %d bucket counts for p = %d", ErrPBG, len(c.BucketEdges), c.P)
	}
	if _, _, err := devices.CPUTrainCost(c.Profile, c.Training.Model); err != nil && c.Engine == nil {
		return fmt.Errorf("%w: device %s gives no cpu.train.%s cost for the CPU trainer: %w", ErrPBG, c.Profile.Name, c.Training.Model, err)
	}
	return nil
}

// SimulatePBG simulates cfg's epochs.
func SimulatePBG(cfg PBGConfig) (PBGReport, error) {
	if err := cfg.validate(); err != nil {
		return PBGReport{}, err
	}
	if cfg.Epochs == 0 {
		cfg.Epochs = 2
	}
	if cfg.PollSeconds == 0 {
		cfg.PollSeconds = 1
	}
	if cfg.MaxEdgesPerChunk == 0 {
		cfg.MaxEdgesPerChunk = 1_000_000_000
	}
	if cfg.BucketEdges == nil {
		var err error
		if cfg.BucketEdges, err = BucketEdges(cfg.Dataset.TrainEdges(), cfg.P, Uniform, 0); err != nil {
			return PBGReport{}, fmt.Errorf("%w: %w", ErrPBG, err)
		}
	}
	s := newPBGSim(cfg)
	rep := PBGReport{Dataset: cfg.Dataset.Name, Device: cfg.Profile.Name, P: cfg.P, Machines: cfg.Machines,
		MaxParallel: lockserver.MaxParallel(cfg.P), PartitionBytes: s.partBytes}
	if cfg.Machines > rep.MaxParallel {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%d machines, but at most %d can train at once over %d partitions (P/2): the others wait for a bucket", cfg.Machines, rep.MaxParallel, cfg.P))
	}
	for e := range cfg.Epochs {
		ep, err := s.epoch(e == 0)
		if err != nil {
			return PBGReport{}, err
		}
		rep.Epochs = append(rep.Epochs, ep)
	}
	for _, tr := range rep.Steady().Trainers {
		rep.PeakMemoryBytes = max(rep.PeakMemoryBytes, tr.PeakMemoryBytes)
	}
	if lim := int64(cfg.Profile.CPU.Memory); rep.PeakMemoryBytes > lim {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("a machine's peak memory (%.1f GB) exceeds its %.1f GB", GB(rep.PeakMemoryBytes), GB(lim)))
	}
	return rep, nil
}

// pbgSim is the state that outlives an epoch.
type pbgSim struct {
	cfg       PBGConfig
	partBytes int64
	edgeBytes int64
	shared    int64
	chunks    int
	// saved says a partition has been written once (so a load reads it;
	// before that it is initialised in memory).
	saved []bool
	order []orderings.Bucket // one machine: PBG's inside-out order
}

func newPBGSim(cfg PBGConfig) *pbgSim {
	s := &pbgSim{cfg: cfg, edgeBytes: EdgeBytes(cfg.Dataset), shared: SharedParamBytes(cfg.Dataset, cfg.Training),
		saved: make([]bool, cfg.P)}
	s.partBytes = workload.PartitionBytes(cfg.Dataset.PartitionedNodes(), cfg.P, cfg.Training.Dim, true)
	if cfg.Engine != nil {
		s.partBytes, s.edgeBytes = cfg.Engine.PartitionBytes, cfg.Engine.EdgeBytes
		s.shared = 0
	}
	var largest int64
	for _, n := range cfg.BucketEdges {
		largest = max(largest, n)
	}
	s.chunks = int(max(1, (largest+cfg.MaxEdgesPerChunk-1)/cfg.MaxEdgesPerChunk))
	if cfg.Machines == 1 && cfg.P > 1 {
		if pl, err := orderings.Build("inside-out", cfg.P, 2, orderings.Belady, 0); err == nil {
			s.order = pl.Buckets
		}
	}
	return s
}

// scheduler hands out buckets: the lock server, or a fixed order.
type scheduler interface {
	Acquire(trainer int, last orderings.Bucket) (orderings.Bucket, bool)
	Release(b orderings.Bucket) error
	Remaining() int
}

// fixedOrder is one trainer taking buckets in a given order.
type fixedOrder struct {
	order []orderings.Bucket
	next  int
}

func (f *fixedOrder) Acquire(int, orderings.Bucket) (orderings.Bucket, bool) {
	if f.next >= len(f.order) {
		return orderings.Bucket{}, false
	}
	f.next++
	return f.order[f.next-1], true
}
func (f *fixedOrder) Release(orderings.Bucket) error { return nil }
func (f *fixedOrder) Remaining() int                 { return len(f.order) - f.next }

// pbgPass is one pass over the buckets (an edge chunk of every bucket).
type pbgPass struct {
	s       *pbgSim
	k       Kernel
	sched   scheduler
	chunk   int
	disk    *Link
	net     *Net
	fs      int // the shared filesystem's node
	syncBW  float64
	ts      []*pbgTrainerState
	err     error
	edgeB   float64
	diskR   float64
	diskW   float64
	trained []bool
	// version (engine model) is every partition's latest version in the
	// store.
	version []int
}

type pbgTrainerState struct {
	PBGTrainer
	held, last orderings.Bucket
	waitSince  float64
	finishedAt float64
	// cacheVer (engine model): the partitions the trainer holds and the
	// version it holds each at.
	cacheVer map[int]int
	memParts int64
	memEdges int64
	done     bool
}

// epoch simulates one epoch: its passes, one after another with a barrier
// between them.
func (s *pbgSim) epoch(first bool) (PBGEpoch, error) {
	cfg := s.cfg
	ep := PBGEpoch{Passes: s.chunks, Trainers: make([]PBGTrainer, cfg.Machines)}
	for i := range ep.Trainers {
		ep.Trainers[i].Machine = i
	}
	for c := range s.chunks {
		ps, err := s.pass(first && c == 0, c)
		if err != nil {
			return PBGEpoch{}, err
		}
		el := ps.k.Now()
		ep.Seconds += el
		ep.EdgeBytes += ps.edgeB
		ep.DiskReadBytes += ps.diskR
		ep.DiskWriteBytes += ps.diskW
		for i, t := range ps.ts {
			tr := &ep.Trainers[i]
			tr.Buckets += t.Buckets
			tr.TrainSeconds += t.TrainSeconds
			tr.WaitBucketSeconds += t.WaitBucketSeconds
			tr.TransferSeconds += t.TransferSeconds
			tr.Loads += t.Loads
			tr.Saves += t.Saves
			if ps.net != nil {
				sync := 2 * ps.syncBW * el // its machine's share, each way
				tr.SentBytes += ps.net.Sent[i] + sync
				tr.ReceivedBytes += ps.net.Received[i] + sync
				ep.SyncBytes += sync
				ep.NetworkBytes += ps.net.Sent[i] + sync
			}
			if ps.net != nil && i == len(ps.ts)-1 {
				ep.NetworkBytes += ps.net.Sent[ps.fs]
			}
			tr.PeakMemoryBytes = max(tr.PeakMemoryBytes, t.memParts+t.memEdges+s.serverBytes(i))
		}
	}
	for i := range ep.Trainers {
		if ep.Seconds > 0 {
			ep.Trainers[i].Occupancy = ep.Trainers[i].TrainSeconds / ep.Seconds
		}
	}
	return ep, nil
}

// serverBytes is what machine m keeps besides its trainer: the partitions
// its partition server holds and its shard of the shared parameters
// (several machines only).
func (s *pbgSim) serverBytes(m int) int64 {
	if s.cfg.Machines < 2 {
		return 0
	}
	var n int64
	for part := m; part < s.cfg.P; part += s.cfg.Machines {
		n++
	}
	return n*s.partBytes + s.shared/int64(s.cfg.Machines)
}

// chunkEdges is bucket i's share of edges in pass c.
func (s *pbgSim) chunkEdges(i, c int) int64 {
	n, k := s.cfg.BucketEdges[i], int64(s.chunks)
	return n*int64(c+1)/k - n*int64(c)/k
}

func (s *pbgSim) pass(first bool, chunk int) (*pbgPass, error) {
	cfg := s.cfg
	ps := &pbgPass{s: s, chunk: chunk, trained: make([]bool, cfg.P*cfg.P)}
	prof := cfg.Profile
	if cfg.Machines == 1 && cfg.Engine == nil {
		ps.disk = NewLink(&ps.k, "disk", time2s(prof.Disk.Latency), diskSharing(prof.Disk))
		order := s.order
		if cfg.P == 1 {
			order = []orderings.Bucket{{Src: 0, Dst: 0}}
		}
		ps.sched = &fixedOrder{order: order}
	} else {
		bw := float64(prof.Network.Bandwidth)
		if s.shared > 0 {
			// A round pushes the shared parameters' gradients to the
			// parameter server and pulls the parameters back, then waits
			// out the sync interval; syncBW is one trainer's rate each way.
			// With the server sharded over every machine, each machine
			// sends its trainer's pushes and its shard's pulls (and
			// receives as much): twice syncBW each way, throttled to at
			// most half the link.
			round := max(time2s(prof.Network.SyncInterval), float64(s.shared)/bw)
			ps.syncBW = min(float64(s.shared)/round, bw/4)
		}
		out := make([]float64, cfg.Machines+1)
		in := make([]float64, cfg.Machines+1)
		for i := range cfg.Machines {
			out[i], in[i] = bw-2*ps.syncBW, bw-2*ps.syncBW
		}
		ps.fs = cfg.Machines
		out[ps.fs], in[ps.fs] = float64(prof.Network.SharedFS), float64(prof.Network.SharedFS)
		ps.net = NewNet(&ps.k, time2s(prof.Network.Latency), out, in)
		ls, err := lockserver.NewEpoch(cfg.P, first)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPBG, err)
		}
		ps.sched = ls
	}
	for i := range cfg.Machines {
		t := &pbgTrainerState{held: lockserver.None, last: lockserver.None, waitSince: -1}
		t.Machine = i
		ps.ts = append(ps.ts, t)
	}
	if cfg.P == 1 {
		// The whole model is one unpartitioned table, in memory throughout.
		ps.ts[0].memParts = s.partBytes
	}
	if cfg.Engine != nil {
		ps.version = make([]int, cfg.P)
		for _, t := range ps.ts {
			t.cacheVer = map[int]int{}
			ps.nextEngine(t)
		}
	} else {
		for _, t := range ps.ts {
			ps.next(t)
		}
	}
	ps.k.Run()
	if ps.err != nil {
		return nil, ps.err
	}
	// A trainer that has finished waits at the barrier for the others:
	// idle for want of a bucket, like a wait at the lock server.
	for _, t := range ps.ts {
		t.WaitBucketSeconds += ps.k.Now() - t.finishedAt
	}
	for i, done := range ps.trained {
		if !done {
			return nil, fmt.Errorf("%w: bucket %d of %d never trained (the scheduler stalled)", ErrPBG, i, len(ps.trained))
		}
	}
	return ps, nil
}

// parts lists a bucket's partitions (one for a diagonal bucket).
func parts(b orderings.Bucket) []int {
	switch {
	case b.Src < 0:
		return nil
	case b.Src == b.Dst:
		return []int{b.Src}
	}
	return []int{b.Src, b.Dst}
}

// minus returns the partitions of a not in b.
func minus(a, b orderings.Bucket) []int {
	var out []int
	for _, x := range parts(a) {
		if x != b.Src && x != b.Dst {
			out = append(out, x)
		}
	}
	return out
}

// next is the trainer loop: ask for a bucket; on none, give the held
// partitions back and ask again later; on one, swap, load edges, train.
func (ps *pbgPass) next(t *pbgTrainerState) {
	if t.done || ps.err != nil {
		return
	}
	now := ps.k.Now()
	b, ok := ps.sched.Acquire(t.Machine, t.last)
	if !ok {
		old := t.held
		if ps.sched.Remaining() == 0 {
			t.done = true
		}
		ps.swap(t, old, lockserver.None, func() { ps.idle(t, ps.s.cfg.PollSeconds, ps.next) })
		return
	}
	if t.waitSince >= 0 {
		t.WaitBucketSeconds += now - t.waitSince
		t.waitSince = -1
	}
	old := t.held
	t.last = b
	ps.swap(t, old, b, func() {
		i := b.Src*ps.s.cfg.P + b.Dst
		edges := ps.s.chunkEdges(i, ps.chunk)
		bytes := float64(edges * ps.s.edgeBytes)
		t.memEdges = max(t.memEdges, edges*ps.s.edgeBytes)
		start := ps.k.Now()
		ps.readEdges(t, bytes, func() {
			t.TransferSeconds += ps.k.Now() - start
			d := devices.CPUBucketTime(ps.s.cfg.Profile, ps.s.cfg.Training, edges)
			t.TrainSeconds += d
			t.Buckets++
			ps.trained[i] = true
			ps.k.After(d, func() { ps.next(t) })
		})
	})
}

// swap moves trainer t from bucket old to bucket b (either may be None):
// saves old's partitions that b does not use, releases old, loads b's
// that old did not hold, then calls done. The time counts as transfer.
func (ps *pbgPass) swap(t *pbgTrainerState, old, b orderings.Bucket, done func()) {
	start := ps.k.Now()
	finish := func() {
		t.TransferSeconds += ps.k.Now() - start
		done()
	}
	if ps.s.cfg.P == 1 {
		// Unpartitioned: nothing moves between buckets; the checkpoint at
		// the end of the pass writes the whole model.
		t.held = b
		if b.Src < 0 && t.done {
			ps.transfer(t, 0, true, float64(ps.s.partBytes), finish)
			return
		}
		finish()
		return
	}
	saves, loads := minus(old, b), minus(b, old)
	var saveAll, loadAll func(i int)
	saveAll = func(i int) {
		if i == len(saves) {
			if old.Src >= 0 {
				if err := ps.sched.Release(old); err != nil && ps.err == nil {
					ps.err = fmt.Errorf("%w: %w", ErrPBG, err)
				}
			}
			t.held = b
			loadAll(0)
			return
		}
		t.Saves++
		part := saves[i]
		ps.s.saved[part] = true
		ps.transfer(t, ps.owner(part), true, float64(ps.s.partBytes), func() { saveAll(i + 1) })
	}
	loadAll = func(i int) {
		if i == len(loads) {
			t.memParts = max(t.memParts, int64(len(parts(b)))*ps.s.partBytes)
			finish()
			return
		}
		part := loads[i]
		if !ps.s.saved[part] {
			// Never written: initialised in memory.
			loadAll(i + 1)
			return
		}
		t.Loads++
		ps.transfer(t, ps.owner(part), false, float64(ps.s.partBytes), func() { loadAll(i + 1) })
	}
	saveAll(0)
}

// owner is the machine whose partition server holds part (the engine
// model: the store).
func (ps *pbgPass) owner(part int) int {
	if ps.s.cfg.Engine != nil {
		return ps.fs
	}
	return part % ps.s.cfg.Machines
}

// idle is a trainer with no bucket: done (its wait ends), or waiting,
// asking again after poll seconds.
func (ps *pbgPass) idle(t *pbgTrainerState, poll float64, again func(*pbgTrainerState)) {
	if t.done {
		t.finishedAt = ps.k.Now()
		if t.waitSince >= 0 {
			t.WaitBucketSeconds += t.finishedAt - t.waitSince
			t.waitSince = -1
		}
		return
	}
	if t.waitSince < 0 {
		t.waitSince = ps.k.Now()
	}
	ps.k.After(poll, func() { again(t) })
}

// nextEngine is tierflow's engine's trainer loop (EngineModel).
func (ps *pbgPass) nextEngine(t *pbgTrainerState) {
	if t.done || ps.err != nil {
		return
	}
	em := ps.s.cfg.Engine
	b, ok := ps.sched.Acquire(t.Machine, t.last)
	if !ok {
		t.done = ps.sched.Remaining() == 0
		poll := em.PollSeconds
		if poll == 0 {
			poll = 0.05
		}
		ps.idle(t, poll, ps.nextEngine)
		return
	}
	if t.waitSince >= 0 {
		t.WaitBucketSeconds += ps.k.Now() - t.waitSince
		t.waitSince = -1
	}
	t.last = b
	pp := parts(b)
	for p := range t.cacheVer {
		if p != b.Src && p != b.Dst {
			delete(t.cacheVer, p)
		}
	}
	var loads []int
	for _, p := range pp {
		if v, ok := t.cacheVer[p]; !ok || v != ps.version[p] {
			loads = append(loads, p)
		}
	}
	start := ps.k.Now()
	bytes := float64(ps.s.partBytes)
	var load, save func(k int)
	i := b.Src*ps.s.cfg.P + b.Dst
	edges := ps.s.chunkEdges(i, ps.chunk)
	load = func(k int) {
		if k < len(loads) {
			t.Loads++
			ps.transfer(t, ps.fs, false, bytes, func() { load(k + 1) })
			return
		}
		ps.readEdges(t, float64(edges*ps.s.edgeBytes), func() {
			t.TransferSeconds += ps.k.Now() - start
			d := float64(edges) * em.EdgeSeconds
			t.TrainSeconds += d
			t.Buckets++
			ps.trained[i] = true
			ps.k.After(d, func() {
				start = ps.k.Now()
				save(0)
			})
		})
	}
	save = func(k int) {
		if k < len(pp) {
			t.Saves++
			ps.transfer(t, ps.fs, true, bytes, func() { save(k + 1) })
			return
		}
		for _, p := range pp {
			ps.version[p]++
			t.cacheVer[p] = ps.version[p]
		}
		if err := ps.sched.Release(b); err != nil && ps.err == nil {
			ps.err = fmt.Errorf("%w: %w", ErrPBG, err)
		}
		t.TransferSeconds += ps.k.Now() - start
		ps.nextEngine(t)
	}
	load(0)
}

// transfer saves (write) or loads a partition between trainer t and its
// store: the local disk, or the partition server on machine owner.
func (ps *pbgPass) transfer(t *pbgTrainerState, owner int, write bool, bytes float64, done func()) {
	if ps.net == nil {
		dir := Read
		if write {
			dir = Write
			ps.diskW += bytes
		} else {
			ps.diskR += bytes
		}
		ps.disk.Transfer(bytes, dir, done)
		return
	}
	if write {
		ps.net.Transfer(t.Machine, owner, bytes, done)
		return
	}
	ps.net.Transfer(owner, t.Machine, bytes, done)
}

// readEdges reads a bucket's edges: from the local disk, or from the
// shared filesystem over the network.
func (ps *pbgPass) readEdges(t *pbgTrainerState, bytes float64, done func()) {
	ps.edgeB += bytes
	if ps.net == nil {
		ps.diskR += bytes
		ps.disk.Transfer(bytes, Read, done)
		return
	}
	ps.net.Transfer(ps.fs, t.Machine, bytes, done)
}

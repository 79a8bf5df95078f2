package sim

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/executor"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/workload"
)

// Config is everything one simulated epoch depends on.
type Config struct {
	System   System
	Profile  devices.Profile
	Dataset  workload.Dataset
	Training workload.Training
	// Plan is the epoch's schedule (partitioned systems only).
	Plan *orderings.Plan
	// BucketEdges are the training edges per bucket, row-major (src·p+dst);
	// nil spreads Dataset.TrainEdges() uniformly.
	BucketEdges []int64
	// TimelineSlices is the number of timeline points (0: 100).
	TimelineSlices int
	// PartitionBytes, when positive, overrides the partition size computed
	// from the dataset (the real engine pads partitions to its I/O
	// alignment).
	PartitionBytes int64
	// ResidentBytes, when positive, overrides the size of the resident
	// table computed from the dataset's ResidentNodes (the real engine
	// pads resident.bin like a partition file). Without resident nodes
	// there is none.
	ResidentBytes int64
	// Checkpoint is how often to checkpoint inside the epoch
	// (partitioned systems): at a due bucket boundary training waits
	// while the dirty resident partitions are written.
	Checkpoint workload.CheckpointInterval
	// NoMicroBatching keeps a batch that does not fit the GPU memory left
	// to it whole (with a warning) instead of splitting it (MicroPlan).
	NoMicroBatching bool
	// MicroBatches, when positive, splits every batch into that many
	// micro-batches whether or not it fits (for experiments).
	MicroBatches int
	// Trace records the epoch's events into Report.Trace (a timeline for
	// a trace viewer; costs memory in proportion to buckets and loads).
	Trace bool
	// OnAction, when set, sees every action of the buffer manager's
	// executor (orderings/executor) as it is decided (partitioned
	// single-machine systems).
	OnAction func(executor.Action) `json:"-"`
}

// ErrConfig wraps every configuration error.
var ErrConfig = errors.New("bad simulation config")

// Run simulates one epoch and returns its Report.
func Run(cfg Config) (report.Report, error) {
	if err := cfg.Training.Validate(); err != nil {
		return report.Report{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := cfg.Profile.Validate(); err != nil {
		return report.Report{}, fmt.Errorf("%w: device: %w", ErrConfig, err)
	}
	sys := cfg.System
	cfg.Profile = forOrdering(cfg)
	needGPU := sys.Batches != OnCPU // every other model computes on a GPU
	if needGPU && cfg.Profile.GPU.Count < 1 {
		return report.Report{}, fmt.Errorf("%w: system %s needs a GPU and device %s has none", ErrConfig, sys.Name, cfg.Profile.Name)
	}
	if sys.IO == SSDToGPUPath && cfg.Profile.SSDToGPU.Read <= 0 {
		return report.Report{}, fmt.Errorf("%w: system %s reads partitions SSD-to-GPU and device %s has no such path", ErrConfig, sys.Name, cfg.Profile.Name)
	}
	if sys.Batches == OnCPU {
		if _, _, err := devices.CPUTrainCost(cfg.Profile, cfg.Training.Model); err != nil {
			return report.Report{}, fmt.Errorf("%w: system %s needs the device's cpu.train.%s cost: %w", ErrConfig, sys.Name, cfg.Training.Model, err)
		}
		if !sys.Partitioned {
			return report.Report{}, fmt.Errorf("%w: system %s must be partitioned", ErrConfig, sys.Name)
		}
	}
	if sys.Batches == OnGPU && cfg.Profile.GPU.BatchEdges <= 0 {
		return report.Report{}, fmt.Errorf("%w: system %s builds batches on the GPU and device %s gives no gpu.batch_edges", ErrConfig, sys.Name, cfg.Profile.Name)
	}
	if sys.Staleness < 1 {
		return report.Report{}, fmt.Errorf("%w: staleness must be at least 1, got %d", ErrConfig, sys.Staleness)
	}
	if sys.Partitioned {
		if cfg.Plan == nil {
			return report.Report{}, fmt.Errorf("%w: system %s needs a Plan", ErrConfig, sys.Name)
		}
		if cfg.BucketEdges != nil && len(cfg.BucketEdges) != cfg.Plan.P*cfg.Plan.P {
			return report.Report{}, fmt.Errorf("%w: %d bucket counts for p = %d", ErrConfig, len(cfg.BucketEdges), cfg.Plan.P)
		}
	}
	if sys.Partitioned && cfg.BucketEdges == nil {
		edges, err := BucketEdges(cfg.Dataset.TrainEdges(), cfg.Plan.P, Uniform, 0)
		if err != nil {
			return report.Report{}, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		cfg.BucketEdges = edges
	}
	e := newEngine(cfg)
	return e.run(), nil
}

// forOrdering is cfg's profile as the CPU engine training cfg's Plan
// sees it: the engine's rate on that ordering's own bucket sequence where
// the profile measured one (devices.Profile.ForOrdering).
func forOrdering(cfg Config) devices.Profile {
	if cfg.System.Batches != OnCPU || cfg.Plan == nil {
		return cfg.Profile
	}
	p, _ := cfg.Profile.ForOrdering(cfg.Plan.Ordering, string(cfg.Training.Model))
	return p
}

type engine struct {
	cfg      Config
	k        Kernel
	cpu, gpu *Server
	// work, when interference is modelled, is the CPU engine's training
	// as a link whose rate the disk's activity scales (interfere).
	work  *Link
	read  *Link // loads
	write *Link // write-backs (the same link when they share a device)
	// crcLoad and crcWrite, when the system checksums partitions
	// (System.Checksums), are the loader's and the writer's checksumming:
	// a load is verified after its read, a write-back checksummed before.
	crcLoad, crcWrite *Link
	// h2d and d2h, with GPU slots (System.GPUSlots), copy partitions
	// between host memory and the GPU; rowSeconds, with rows over PCIe,
	// is the epoch's per-batch transfer time.
	h2d, d2h   *Link
	rowSeconds float64
	pbytes     float64
	warnings   []string
	// rbytes is the resident table (Config.residentBytes; 0: none), read
	// before any partition at the epoch's start (residentIn once it is in
	// memory) and written after the final flush.
	rbytes     float64
	residentIn bool

	// trainer
	edges     []int64 // per plan position
	nb        int
	kb, bi    int // next batch to feed: bucket position, batch index
	inFlight  int
	remaining []int
	fed       []bool
	completed int
	need      []int // loads with NeededAt ≤ k
	waitStart float64
	stall     float64
	batches   int

	// x is the buffer manager (orderings/executor): it decides which
	// load is read, written back and installed when; installed counts the
	// Install actions carried out.
	x         *executor.Executor
	installed int
	full      Cost
	// writeAfterRead holds each write-back until the read of the load
	// that evicts its partition has arrived (System.WriteAfterRead);
	// arrived are the Plan loads whose reads have, held the write-backs
	// waiting, by load.
	writeAfterRead bool
	arrived        map[int]bool
	held           map[int]func()

	// checkpoints inside the epoch (Config.Checkpoint): resident and
	// dirty are by partition, lastCkpt is the boundary and time of the
	// last one, checkpointing says one is under way (before bucket ckptAt,
	// since ckptStart) and ckptWriting that it is being written.
	resident, dirty []bool
	lastCkptAt      int
	lastCkptTime    float64
	checkpointing   bool
	ckptWriting     bool
	ckptAt          int
	ckptStart       float64
	ckpts           int
	ckptBytes       float64
	ckptWait        float64
	// micro-batching (microbatch.go): the plan, and the epoch's duplicated
	// rows and the bytes they move
	micro               MicroPlan
	dupRows, extraBytes float64
	// tr records the epoch (Config.Trace; nil: off); readTrack and
	// writeTrack name the I/O tracks.
	tr                    *tracer
	readTrack, writeTrack string
}

// diskSharing is how a profile's disk shares itself between reads and
// writes: its rates alone, the combined rate and read share, the kernel's
// limit, and whether a transfer keeps its shared rate.
func diskSharing(d devices.Disk) Sharing {
	s := Sharing{ReadBW: float64(d.Read), WriteBW: float64(d.Write), FullDuplex: d.FullDuplex,
		Combined: float64(d.Combined), ReadShare: d.ReadShare}
	s.Limit, s.Slice = d.Throttle.Limits()
	// Under a kernel limit the slices pace the transfers (the validation
	// under one holds without keeping the shared rate).
	s.KeepPace = d.KeepSharedRate && s.Limit == [2]float64{}
	return s
}

func newEngine(cfg Config) *engine {
	e := &engine{cfg: cfg, waitStart: -1, writeAfterRead: cfg.System.WriteAfterRead, arrived: map[int]bool{}, held: map[int]func(){}}
	e.cpu = NewServer(&e.k, "cpu")
	e.gpu = NewServer(&e.k, "gpu")
	prof := cfg.Profile
	lat := time2s(prof.Disk.Latency)
	disk := diskSharing(prof.Disk)
	switch cfg.System.IO {
	case DiskPath:
		e.read = NewLink(&e.k, "disk", lat, disk)
		e.write = e.read
		e.readTrack, e.writeTrack = report.DiskRead, report.DiskWrite
	case SSDToGPUPath:
		disk.ReadBW, disk.WriteBW = float64(prof.SSDToGPU.Read), float64(prof.SSDToGPU.Write)
		disk.Limit, disk.Slice = [2]float64{}, 0 // the kernel's limit is the disk's, not the path's
		e.read = NewLink(&e.k, report.SSDGPU, lat, disk)
		e.write = e.read
		e.readTrack, e.writeTrack = report.SSDGPU, report.SSDGPU
	case PCIePath:
		e.read = NewLink(&e.k, report.PCIeH2D, 0, Sharing{ReadBW: float64(prof.PCIe.H2D), WriteBW: float64(prof.PCIe.H2D)})
		e.write = NewLink(&e.k, report.PCIeD2H, 0, Sharing{ReadBW: float64(prof.PCIe.D2H), WriteBW: float64(prof.PCIe.D2H)})
		e.readTrack, e.writeTrack = report.PCIeH2D, report.PCIeD2H
	}
	if cfg.System.GPUSlots {
		e.h2d = NewLink(&e.k, report.PCIeH2D, 0, Sharing{ReadBW: float64(prof.PCIe.H2D), WriteBW: float64(prof.PCIe.H2D)})
		e.d2h = NewLink(&e.k, report.PCIeD2H, 0, Sharing{ReadBW: float64(prof.PCIe.D2H), WriteBW: float64(prof.PCIe.D2H)})
	}
	if cfg.Trace {
		first := report.CPU
		if cfg.System.Batches == OnGPU {
			first = report.GPU
		}
		e.tr = newTracer(first)
	}
	if cs := float64(prof.CPU.Checksum); cfg.System.Checksums && cs > 0 && e.read != nil {
		rate := Sharing{ReadBW: cs, WriteBW: cs, FullDuplex: true}
		e.crcLoad = NewLink(&e.k, report.CheckLoad, 0, rate)
		e.crcWrite = NewLink(&e.k, report.CheckWrite, 0, rate)
	}
	if itf := prof.CPU.Interference; cfg.System.Batches == OnCPU && e.read != nil && (itf.Compute > 0 || itf.IO > 0) {
		e.interfere(itf)
	}
	return e
}

// interfere models the CPU engine and partition I/O sharing a machine of
// few cores (devices.Interference, measured by realrun's calibration):
// the engine's work runs on a link of one work-second per second, slowed
// by 1 + Compute while the disk moves bytes, and every disk transfer is
// slowed by 1 + IO while the engine trains. Both are rate changes applied
// when the other resource starts or stops, so a bucket's training and a
// partition's transfer stretch only over the time they overlap.
func (e *engine) interfere(itf devices.Interference) {
	e.work = NewLink(&e.k, "cpu", 0, Sharing{ReadBW: 1, WriteBW: 1, FullDuplex: true})
	disk := []*Link{e.read}
	if e.write != e.read {
		disk = append(disk, e.write)
	}
	// Checksumming is the loader's and writer's CPU work: it counts as
	// I/O activity, as in the calibration's stream (MeasureInterference).
	if e.crcLoad != nil {
		disk = append(disk, e.crcLoad, e.crcWrite)
	}
	moving := 0
	for _, l := range disk {
		l.OnBusy(func(busy bool) {
			if busy {
				moving++
			} else {
				moving--
			}
			scale := 1.0
			if moving > 0 {
				scale = 1 / (1 + itf.Compute)
			}
			e.work.SetScale(scale)
		})
	}
	e.work.OnBusy(func(busy bool) {
		scale := 1.0
		if busy {
			scale = 1 / (1 + itf.IO)
		}
		for _, l := range disk {
			l.SetScale(scale)
		}
	})
}

// computeBusy is the CPU stage's busy time and spans: the engine's work
// link when interference is modelled, else the CPU server.
func (e *engine) computeBusy() (float64, []report.Interval) {
	if e.work != nil {
		return e.work.Busy(), e.work.log.spans
	}
	return e.cpu.Busy(), e.cpu.log.spans
}

func time2s(d devices.Duration) float64 { return float64(d) / 1e9 }

// cost is the cost of one batch of b edges under the system's batch mode.
func (e *engine) cost(b int) Cost {
	switch e.cfg.System.Batches {
	case OnGPU:
		return GPUBatchCost(e.cfg.Profile, e.cfg.Training, b)
	case OnCPU:
		return Cost{}
	}
	return CPUBatchCost(e.cfg.Profile, e.cfg.Training, b)
}

// feedBatch sends one batch of b edges of bucket k (-1: no Plan) through
// the system's stages and calls done when its last stage finishes.
func (e *engine) feedBatch(b, k int, done func()) {
	if e.cfg.System.Batches == OnCPU {
		e.batches += (b + e.cfg.Training.Batch - 1) / e.cfg.Training.Batch
		d := devices.CPUBucketTime(e.cfg.Profile, e.cfg.Training, int64(b))
		if e.work != nil {
			start := e.k.Now()
			e.work.Transfer(d, Read, func() {
				e.traceWork(report.CPU, k, b, start, e.k.Now())
				done()
			})
		} else {
			e.do(e.cpu, report.CPU, k, b, d, done)
		}
		return
	}
	c := e.full
	if b != e.cfg.Training.Batch {
		c = e.cost(b)
	}
	if e.micro.K > 1 {
		var extra float64
		c, extra = e.microCost(b)
		e.dupRows += e.micro.DuplicatedRows * float64(b) / float64(e.cfg.Training.Batch)
		e.extraBytes += extra
	}
	e.batches++
	if e.cfg.System.RowsOverPCIe {
		pc := e.cfg.Profile.PCIe
		e.rowSeconds += c.H2D/float64(pc.H2D) + c.D2H/float64(pc.D2H)
	}
	switch e.cfg.System.Batches {
	case OnGPU:
		e.do(e.gpu, report.GPU, k, b, c.GPU, done)
	default: // Pipeline and Synchronous differ only in the staleness bound
		e.do(e.cpu, report.CPU, k, b, c.CPU, func() { e.do(e.gpu, report.GPU, k, b, c.GPU, done) })
	}
}

// do runs d seconds of bucket k's work (b edges) on server s, recording it
// on track in the trace.
func (e *engine) do(s *Server, track string, k, b int, d float64, done func()) {
	start := math.Max(e.k.Now(), s.free)
	s.Do(d, done)
	e.traceWork(track, k, b, start, start+d)
}

// traceWork records bucket k's work (b edges) on a compute track.
func (e *engine) traceWork(track string, k, b int, start, end float64) {
	if e.tr == nil {
		return
	}
	name := "batch"
	if k >= 0 {
		b := e.cfg.Plan.Buckets[k]
		name = report.BucketName(b.Src, b.Dst)
	}
	e.tr.work(track, k, name, start, end, b)
}

func (e *engine) run() report.Report {
	cfg := e.cfg
	tr := cfg.Training
	e.full = e.cost(tr.Batch)
	r := report.Report{System: cfg.System.Name, Device: cfg.Profile.Name, Dataset: cfg.Dataset.Name, Dim: tr.Dim}
	e.planMicro()
	if cfg.System.Partitioned {
		e.runPartitioned(&r)
	} else {
		e.runResident(&r)
	}
	end := e.k.Now()
	r.EpochSeconds = end
	r.StallSeconds = e.stall
	r.Batches = e.batches
	r.Events = e.k.Events()
	// Compute alone: the busier stage of a pipeline, the sum when every
	// batch waits for the previous one.
	if cfg.System.Batches == Synchronous {
		r.ComputeSeconds = e.cpu.Busy() + e.gpu.Busy()
	} else {
		cpuBusy, _ := e.computeBusy()
		r.ComputeSeconds = math.Max(cpuBusy, e.gpu.Busy())
	}
	r.BoundSeconds = math.Max(r.ComputeSeconds, e.ioBound(r.P, r.C))
	if r.BoundSeconds > 0 {
		r.EpochOverBound = r.EpochSeconds / r.BoundSeconds
	}
	if end > 0 {
		r.GPUUtilization = e.gpu.Busy() / end
	}
	add := func(name string, busy float64, bytes float64) {
		u := report.ResourceUsage{Name: name, BusySeconds: busy, Bytes: int64(math.Round(bytes))}
		if end > 0 {
			u.Utilization = busy / end
		}
		r.Resources = append(r.Resources, u)
	}
	if cfg.System.Batches != OnGPU {
		cpuBusy, _ := e.computeBusy()
		add(report.CPU, cpuBusy, 0)
	}
	add(report.GPU, e.gpu.Busy(), 0)
	var readSpans, writeSpans []report.Interval
	switch {
	case e.read == nil:
	case e.write != e.read: // a link each way
		add(e.read.Name, e.read.Busy(), e.read.Bytes())
		add(e.write.Name, e.write.Busy(), e.write.Bytes())
		readSpans, writeSpans = e.read.log.spans, e.write.log.spans
	case cfg.System.IO == DiskPath: // one disk, reported by direction as the engine measures it
		add(report.DiskRead, e.read.DirBusy(Read), e.read.DirBytes(Read))
		add(report.DiskWrite, e.read.DirBusy(Write), e.read.DirBytes(Write))
		readSpans, writeSpans = e.read.dirLog[Read].spans, e.read.dirLog[Write].spans
	default:
		add(e.read.Name, e.read.Busy(), e.read.Bytes())
		readSpans = e.read.log.spans
	}
	e.transfers(&r, add)
	n := cfg.TimelineSlices
	if n <= 0 {
		n = 100
	}
	compute := e.gpu.log.spans // the training stage: the GPU, or the CPU engine's cores
	if cfg.System.Batches == OnCPU {
		_, compute = e.computeBusy()
	}
	r.Timeline = report.Timeline(compute, e.gpu.log.spans, readSpans, writeSpans, end, n)
	if e.micro.K > 1 {
		r.MicroBatches, r.BatchPeakBytes, r.BatchBudgetBytes = e.micro.K, e.micro.Peak, e.micro.Budget
		r.DuplicatedRows, r.ExtraTransferBytes = int64(math.Round(e.dupRows)), int64(math.Round(e.extraBytes))
	}
	r.Warnings = e.warnings
	if e.tr != nil {
		io := []string{e.readTrack, e.writeTrack}
		if e.h2d != nil {
			io = append(io, e.h2d.Name, e.d2h.Name)
		}
		tr := e.tr.finish(cfg.Plan, io)
		r.Trace = &tr
	}
	r.InsideCheckpoints, r.CheckpointBytes, r.CheckpointWaitSeconds = e.ckpts, int64(math.Round(e.ckptBytes)), e.ckptWait
	return r
}

// transfers fills the report's host↔GPU copy time and the part of it that
// overlapped the GPU's training: a GPU-slot system's partition copies,
// GE2's partitions over PCIe, per-batch rows (never hidden).
func (e *engine) transfers(r *report.Report, add func(name string, busy, bytes float64)) {
	var spans []report.Interval
	switch {
	case e.h2d != nil:
		add(e.h2d.Name, e.h2d.Busy(), e.h2d.Bytes())
		add(e.d2h.Name, e.d2h.Busy(), e.d2h.Bytes())
		spans = append(append(spans, e.h2d.log.spans...), e.d2h.log.spans...)
	case e.cfg.System.IO == PCIePath:
		spans = append(append(spans, e.read.log.spans...), e.write.log.spans...)
	}
	r.TransferSeconds = report.Busy(spans) + e.rowSeconds
	r.HiddenTransferSeconds = report.Overlap(spans, e.gpu.log.spans)
}

// checkpointDue says whether training must checkpoint before bucket k.
func (e *engine) checkpointDue(k int) bool {
	iv := e.cfg.Checkpoint
	if iv == (workload.CheckpointInterval{}) || k == 0 || k >= e.nb || k == e.lastCkptAt {
		return false
	}
	return iv.Due(k, time.Duration((e.k.Now()-e.lastCkptTime)*1e9))
}

// checkpoint takes a checkpoint before bucket k once every bucket before
// it is done, as the real engine does after bucket k-1: training waits
// while the executor holds back new loads (Executor.Pause) and the
// transfers in flight finish, then while the dirty resident partitions
// are written.
func (e *engine) checkpoint(k int) {
	if e.completed < k || e.inFlight > 0 || e.checkpointing {
		return
	}
	e.checkpointing, e.ckptAt, e.ckptStart = true, k, e.k.Now()
	e.x.Pause()
	e.writeCheckpoint()
}

// writeCheckpoint writes the checkpoint under way once the executor is
// quiet, and lets loads and training go on when it is on disk.
func (e *engine) writeCheckpoint() {
	if !e.checkpointing || e.ckptWriting || !e.x.Quiet() {
		return
	}
	e.ckptWriting = true
	var n int
	for x := range e.dirty {
		if e.dirty[x] && e.resident[x] {
			n++
		}
		e.dirty[x] = false
	}
	k, start := e.ckptAt, e.ckptStart
	done := func() {
		e.checkpointing, e.ckptWriting = false, false
		e.lastCkptAt, e.lastCkptTime = k, e.k.Now()
		e.ckpts++
		e.ckptWait += e.k.Now() - start
		e.apply(e.x.Resume())
		e.tryFeed()
	}
	// The resident table, trained by nearly every bucket, is written with
	// every checkpoint (as the real engine does).
	bytes := float64(n)*e.pbytes + e.rbytes
	e.ckptBytes += bytes
	if bytes == 0 {
		done()
		return
	}
	var name string
	var args map[string]any
	if e.tr != nil {
		name, args = fmt.Sprintf("checkpoint: %d partitions", n), map[string]any{"bytes": int64(bytes), "partitions": n}
		if e.rbytes > 0 {
			name += " and the resident table"
		}
	}
	e.writePartition(bytes, name, args, done)
}

// planMicro decides the micro-batches (Config.Micro) and warns when a
// batch cannot fit.
func (e *engine) planMicro() {
	cfg := e.cfg
	mp, err := cfg.Micro()
	e.micro = mp
	switch {
	case err != nil:
		e.warnings = append(e.warnings, fmt.Sprintf("a batch does not fit in GPU memory: %v", err))
		e.micro.K = 1
	case !mp.Fits():
		e.warnings = append(e.warnings, fmt.Sprintf("a batch needs %.2f GB of GPU memory and %.2f GB are left; micro-batching is off", GB(mp.Whole), GB(mp.Budget)))
	}
	if e.micro.K > 1 {
		e.full, _ = e.microCost(cfg.Training.Batch)
	}
}

// ioBound is the I/O time of the fewest loads and writes any order needs:
// the initial fill plus the lower-bound swaps, and as many writes
// (evictions plus the final flush); reads and writes add up on a shared
// device.
func (e *engine) ioBound(p, c int) float64 {
	if !e.cfg.System.Partitioned {
		return 0
	}
	lb := orderings.LowerBound(p, c)
	loads := float64(min(c, p) + lb)
	writes := float64(lb + min(c, p))
	rb, wb := loads*e.pbytes+e.rbytes, writes*e.pbytes+e.rbytes
	rs, ws := e.read.share, e.write.share
	rd, wr := rs.throttled(Read, rb, rs.ReadBW), ws.throttled(Write, wb, ws.WriteBW)
	bound := math.Max(rd, wr)
	if e.write != e.read || rs.FullDuplex {
		return bound
	}
	if rs.Combined > 0 {
		return math.Max(bound, (rb+wb)/math.Max(rs.Combined, math.Max(rs.ReadBW, rs.WriteBW)))
	}
	return rd + wr // a time-shared device spends bytes ÷ bandwidth on each
}

// runResident trains every batch with all parameters resident.
func (e *engine) runResident(r *report.Report) {
	cfg := e.cfg
	total := cfg.Dataset.TrainEdges()
	full, rest := workload.SplitBatches(total, cfg.Training.Batch)
	var sizes []int
	for i := int64(0); i < full; i++ {
		sizes = append(sizes, cfg.Training.Batch)
	}
	if rest > 0 {
		sizes = append(sizes, rest)
	}
	if mem := cfg.System.ResidentMemory(cfg.Profile, cfg.Dataset.Nodes, cfg.Training.Dim); !mem.Fits() {
		e.warnings = append(e.warnings, fmt.Sprintf("parameters and Adagrad state (%.1f GB) exceed %s memory (%.1f GB)", GB(mem.Bytes), mem.Where, GB(mem.Limit)))
	}
	next := 0
	var feed func()
	feed = func() {
		for e.inFlight < cfg.System.Staleness && next < len(sizes) {
			e.inFlight++
			b := sizes[next]
			next++
			e.feedBatch(b, -1, func() {
				e.inFlight--
				feed()
			})
		}
	}
	e.k.At(0, feed)
	e.k.Run()
}

// runPartitioned executes the Plan: the buffer manager issues loads at the
// Plan's issue points (or on demand without prefetch), the writer writes
// evicted partitions back, and the trainer feeds each bucket's batches once
// its partitions are resident.
func (e *engine) runPartitioned(r *report.Report) {
	cfg := e.cfg
	pl := cfg.Plan
	p := pl.P
	r.Ordering, r.OrderingSeed, r.P, r.C = pl.Ordering, pl.Seed, p, pl.C
	e.pbytes = cfg.partitionBytes()
	e.rbytes = cfg.residentBytes()
	e.residentIn = e.rbytes == 0
	r.PartitionBytes, r.ResidentBytes = int64(e.pbytes), int64(e.rbytes)
	r.Counts = pl.Counts
	r.ReadBytes, r.WriteBytes = pl.Counts.Bytes(r.PartitionBytes)
	// The resident table is read once and written once an epoch.
	r.ReadBytes += r.ResidentBytes
	r.WriteBytes += r.ResidentBytes
	buf := cfg.System.Buffer(cfg.Profile, pl.C, r.PartitionBytes).WithResident(r.ResidentBytes)
	if !buf.Fits() {
		e.warnings = append(e.warnings, fmt.Sprintf("a buffer of %d partitions and %d staging buffers%s (%.1f GB) exceeds the %s memory it lives in (%.1f GB)",
			buf.Slots, buf.Staging, residentText(buf), GB(buf.Bytes), buf.Where, GB(buf.Limit)))
	} else if rel := RelationMemory(cfg); rel > 0 && buf.Bytes+rel > buf.Limit {
		e.warnings = append(e.warnings, fmt.Sprintf("a buffer of %d partitions and %d staging buffers%s (%.1f GB) and the relations' resident parameters with their Adagrad state (%.1f GB: %d relations of %d floats) exceed the %s memory (%.1f GB)",
			buf.Slots, buf.Staging, residentText(buf), GB(buf.Bytes), GB(rel), cfg.Dataset.Relations, cfg.Training.Model.RelWidth(cfg.Training.Dim), buf.Where, GB(buf.Limit)))
	}

	edges := cfg.BucketEdges
	e.nb = len(pl.Buckets)
	e.edges = make([]int64, e.nb)
	for i, b := range pl.Buckets {
		e.edges[i] = edges[b.Src*p+b.Dst]
	}
	e.remaining = make([]int, e.nb)
	e.fed = make([]bool, e.nb)
	e.need = pl.Arrivals()
	e.resident, e.dirty = make([]bool, p), make([]bool, p)
	e.x = executor.New(pl, cfg.System.Policy(e.rbytes > 0))
	if cfg.OnAction != nil {
		e.x.Observe(cfg.OnAction)
	}
	e.k.At(0, func() {
		e.apply(e.x.Start())
		e.tryFeed()
	})
	e.k.Run()
}

// residentText names a buffer's resident table in a warning ("" without
// one).
func residentText(buf BufferMemory) string {
	if buf.Resident <= 0 {
		return ""
	}
	return fmt.Sprintf(" with the resident table of %.3f GB", GB(buf.Resident))
}

// readResident reads the resident table at the epoch's start, before any
// partition, as the real engine does (it loads resident.bin before its
// loader starts): the first bucket needs it and the partitions of its
// first loads from the same device, so the read is a stall that no
// overlap could hide — reading them side by side would share the
// device's bandwidth and end no sooner.
func (e *engine) readResident() {
	if e.residentIn {
		return
	}
	var name string
	var args map[string]any
	if e.tr != nil {
		name, args = "resident table", map[string]any{"bytes": int64(e.rbytes)}
	}
	e.readPartition(e.rbytes, name, args, -1, func() {
		e.residentIn = true
		e.apply(e.x.ResidentRead())
		e.tryFeed()
	})
}

// writeResident writes the resident table once the final flush is on
// disk, as the real engine does at the epoch's end.
func (e *engine) writeResident() {
	if e.rbytes <= 0 {
		return
	}
	var name string
	var args map[string]any
	if e.tr != nil {
		name, args = "resident table (end of epoch)", map[string]any{"bytes": int64(e.rbytes)}
	}
	e.evictAndWrite(e.rbytes, -1, name, args, func() {}, func() {})
}

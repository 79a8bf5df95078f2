// Package realrun is tierflow's real out-of-core training engine: the epoch
// executor — a buffer manager running an orderings.Plan with real,
// page-cache-bypassing I/O, checkpoints at bucket and epoch boundaries —
// and the Engine seam where the trainers plug in (realrun/cpu,
// realrun/cuda). Plan in, measured Epoch out: the same Report the
// simulator predicts. Beneath it, by concern: graph and store (data and
// its on-disk layout), cpu, cuda and model (trainers and kernels), sample
// (the random choices every trainer shares), calibrate, eval, workdir and
// job (one realrun invocation).
package realrun

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/executor"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/telemetry"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/workload"
)

// Epoch is one measured epoch: the simulator's Report plus quality.
type Epoch struct {
	Epoch int `json:"epoch"`
	report.Report
	Loss float64 `json:"loss"`
	// Valid and Test are the link-prediction quality on the validation
	// and the test split after this epoch; nil (JSON null) when that
	// split was not evaluated after it.
	Valid *Quality `json:"valid"`
	Test  *Quality `json:"test"`
	// EvalProtocol is the evaluations' protocol ("" when none ran) and
	// EvalSeconds their wall time (not part of EpochSeconds).
	EvalProtocol string  `json:"eval_protocol,omitempty"`
	EvalSeconds  float64 `json:"eval_seconds"`
	// EvalStopped says an evaluation after this epoch was stopped before
	// it finished (its split's quality is then nil); the epoch's
	// checkpoint was committed before it began.
	EvalStopped bool `json:"eval_stopped,omitempty"`
	// EdgesPerSecond is training edges ÷ compute seconds.
	EdgesPerSecond float64     `json:"edges_per_second"`
	IO             []IOEvent   `json:"io,omitempty"`
	Buckets        []BucketRun `json:"buckets,omitempty"`
	// Checksums are the CRC-32C of every partition as written this epoch.
	Checksums map[int]uint64 `json:"-"`
	// CheckpointSeconds is the time to commit the epoch's checkpoint
	// (not part of EpochSeconds).
	CheckpointSeconds float64 `json:"checkpoint_seconds"`
	// BufferSeconds is the time to allocate the epoch's partition
	// buffers and fault their pages in, before its clock starts (not part
	// of EpochSeconds).
	BufferSeconds float64 `json:"buffer_seconds"`
	// GPU is what a GPU engine measured (absent for the CPU engine).
	GPU *telemetry.Report `json:"gpu,omitempty"`
	// Checkpoints are the checkpoints taken inside the epoch
	// (--checkpoint-every), part of EpochSeconds.
	Checkpoints []CheckpointCost `json:"checkpoints,omitempty"`
	// ResumedAtBucket is the bucket this epoch resumed at (0: it ran
	// from its start); the times then cover only the rest of it.
	ResumedAtBucket int `json:"resumed_at_bucket,omitempty"`
	// LossPerEdge is Loss over the training edges of the epoch (each
	// trained once; a resumed epoch's Loss includes the part before).
	LossPerEdge float64 `json:"loss_per_edge"`
	// ResidentBytes is a typed store's resident table (its unpartitioned
	// entity types' rows and their Adagrad state, padded), held in memory
	// for the whole epoch beside the c partition buffers; it is read once
	// at the epoch's start and written at its end, in ReadBytes and
	// WriteBytes (0: an untyped store).
	ResidentBytes int64 `json:"resident_bytes,omitempty"`
}

// CheckpointCost is what one checkpoint inside an epoch cost: the
// seconds training waited for it and the bytes it wrote (dirty resident
// partitions and engine state; unchanged partitions are linked).
type CheckpointCost struct {
	Bucket  int     `json:"bucket"`
	Seconds float64 `json:"seconds"`
	Bytes   int64   `json:"bytes"`
	// Partitions is how many resident partitions it wrote.
	Partitions int `json:"partitions"`
}

// BucketRun is the measured training of one bucket.
type BucketRun struct {
	Src          int     `json:"src"`
	Dst          int     `json:"dst"`
	Edges        int     `json:"edges"`
	StallSeconds float64 `json:"stall_seconds"`
	Compute      float64 `json:"compute_seconds"`
	Start        float64 `json:"start"`
	End          float64 `json:"end"`
}

// Progress receives a line of progress; Final says the epoch is done.
type Progress func(epoch, done, total int, edgesPerSec, stall float64, final bool)

// EpochOptions say how to run one epoch: whether loads may be issued
// before their bucket is next (prefetch), the seed and epoch number the
// epoch's randomness depends on, where progress goes (nil: nowhere), how
// often to checkpoint inside the epoch, when to stop, and where a resumed
// epoch continues.
type EpochOptions struct {
	Prefetch bool
	Seed     int64
	Epoch    int
	Progress Progress
	// Checkpoint is how often to checkpoint inside the epoch (zero:
	// only at its end).
	Checkpoint workload.CheckpointInterval
	// Stop, once closed, ends the epoch at the next bucket boundary with
	// a checkpoint; RunEpoch then returns a *StopError.
	Stop <-chan struct{}
	// From is where the epoch resumes (Resume returns it; nil: its start).
	From *Position
	// Uncommitted leaves the epoch's checkpoint uncommitted and removes
	// what it wrote (Store.Tidy): the work directory keeps its current
	// checkpoint. A probe of the engine and the disk (a Plan's Prefix),
	// not training.
	Uncommitted bool
	// OnAction, when set, sees every action of the buffer manager's
	// executor (orderings/executor) as it is decided, under the buffer
	// manager's lock.
	OnAction func(executor.Action)
}

// StopError is returned when a run was stopped (EpochOptions.Stop): its
// last checkpoint holds Epochs complete epochs and Bucket buckets of the
// next (of Buckets). Code is the exit status the stopper asked for.
type StopError struct {
	Epochs, Bucket, Buckets, Code int
	// Evaluating says the stop came during the evaluation after epoch
	// Epochs, which did not finish.
	Evaluating bool
}

func (e *StopError) Error() string {
	if e.Evaluating {
		return fmt.Sprintf("stopped during the evaluation after epoch %d, which did not finish; the checkpoint holds %d complete epochs", e.Epochs, e.Epochs)
	}
	if e.Bucket == 0 {
		return fmt.Sprintf("stopped; the checkpoint holds %d complete epochs", e.Epochs)
	}
	return fmt.Sprintf("stopped; the checkpoint holds %d complete epochs and %d of %d buckets of epoch %d", e.Epochs, e.Bucket, e.Buckets, e.Epochs+1)
}

// Stopped reports whether stop has been closed (a nil channel never is).
func Stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// RunEpoch trains one epoch in plan order and returns its measurement. It
// reads the store's current checkpoint and writes every partition to a new
// checkpoint, which it commits at the end with the engine's extra state;
// inside the epoch it checkpoints as opt.Checkpoint says and when opt.Stop
// is closed. The epoch's randomness depends only on the seed and the
// epoch, so that a resumed epoch trains as an uninterrupted one would.
func RunEpoch(st *store.Store, plan *orderings.Plan, eng Compute, opt EpochOptions) (Epoch, error) {
	r, err := startEpoch(st, plan, eng, opt)
	if err != nil {
		return Epoch{}, err
	}
	defer r.free()
	trainErr := r.train()
	if trainErr != nil {
		r.bm.fail(trainErr)
	}
	var stop *StopError
	if err := r.bm.finish(); err != nil && !errors.As(trainErr, &stop) {
		return Epoch{}, err
	}
	if trainErr != nil {
		return Epoch{}, trainErr
	}
	if r.bm.residentDue {
		// The resident table's end-of-epoch write, which the executor
		// asks for after the final flush: part of the epoch like it.
		_, sum, err := r.bm.writeResident(r.bm.to, "resident-write")
		if err != nil {
			return Epoch{}, err
		}
		r.bm.resSum = sum
	}
	if err := checkCounts(r.bm.counts, plan.Counts); err != nil {
		return Epoch{}, err
	}
	// The epoch ends when the last partition is written; committing the
	// checkpoint (syncs and the pointer flip) is timed on its own.
	total := r.bm.since()
	if opt.Uncommitted {
		if err := st.Tidy(); err != nil {
			return Epoch{}, err
		}
	} else if err := r.commit(); err != nil {
		return Epoch{}, err
	}
	commit := r.bm.since() - total
	if opt.Progress != nil {
		opt.Progress(opt.Epoch, len(plan.Buckets), len(plan.Buckets), r.edgesPerSecond(), r.stall, true)
	}
	ep := r.measure(total, commit)
	if r.hooks != nil {
		if err := r.hooks.FinishEpoch(&ep); err != nil {
			return Epoch{}, err
		}
	}
	return ep, nil
}

// epochRun is one epoch in progress: the buffer manager executing the
// Plan, the epoch's random generator, and what has been measured so far.
type epochRun struct {
	st    *store.Store
	plan  *orderings.Plan
	eng   Compute
	opt   EpochOptions
	bm    *bufferManager
	hooks EpochHooks
	// resUser is the engine given the resident table (nil: none).
	resUser ResidentUser
	// base is the checkpoint the epoch starts from (epochs run in this
	// work directory; opt.Epoch, which seeds the randomness, is usually
	// base+1).
	base int
	pcg  *rand.PCG
	rng  *rand.Rand
	// first is the bucket the epoch starts at (not 0 when resuming).
	first int
	loss  float64
	// stall and compute are the seconds waited for partitions and spent
	// training; edges the edges trained.
	stall, compute float64
	edges          int64
	runs           []BucketRun
	ckpts          []CheckpointCost
	// sums are the checksums of the partitions in the epoch's checkpoint.
	sums map[int]uint64
}

// startEpoch prepares the epoch's checkpoint directory and buffer
// manager, restores a position inside the epoch (opt.From), and starts
// the loader, the writer and the engine's epoch hooks.
func startEpoch(st *store.Store, plan *orderings.Plan, eng Compute, opt EpochOptions) (*epochRun, error) {
	if plan.P != st.M.P {
		return nil, fmt.Errorf("plan has p = %d, the work directory %d", plan.P, st.M.P)
	}
	r := &epochRun{st: st, plan: plan, eng: eng, opt: opt, base: st.Current}
	if err := st.Tidy(); err != nil {
		return nil, err
	}
	fromSums, err := st.PartitionSums(st.CurrentDir())
	if err != nil {
		return nil, err
	}
	to, err := st.Begin(r.base+1, 0)
	if err != nil {
		return nil, err
	}
	if r.bm, err = newBufferManager(st, plan, opt.Prefetch, st.CurrentDir(), to, fromSums); err != nil {
		return nil, err
	}
	r.bm.slotEngine, _ = eng.(SlotResident)
	if opt.OnAction != nil {
		r.bm.x.Observe(opt.OnAction)
	}
	r.hooks, _ = eng.(EpochHooks)
	if st.M.Resident > 0 {
		ru, ok := eng.(ResidentUser)
		if !ok {
			r.bm.free()
			return nil, fmt.Errorf("engine %s cannot train a work directory with resident (unpartitioned) entity types", eng.Name())
		}
		if err := r.bm.loadResident(); err != nil {
			r.bm.free()
			return nil, err
		}
		r.resUser = ru
		ru.SetResident(r.bm.res)
	}
	r.pcg = rand.NewPCG(uint64(opt.Seed), uint64(opt.Epoch))
	r.rng = rand.New(r.pcg)
	if pos := opt.From; pos != nil {
		if err := r.resume(pos); err != nil {
			r.free()
			return nil, err
		}
	}
	r.bm.start()
	if r.hooks != nil {
		if err := r.hooks.StartEpoch(opt.Epoch); err != nil {
			r.bm.fail(err)
			r.bm.finish()
			r.free()
			return nil, err
		}
	}
	return r, nil
}

// free takes the resident table back from the engine and frees the
// buffers.
func (r *epochRun) free() {
	if r.resUser != nil {
		r.resUser.SetResident(nil)
	}
	r.bm.free()
}

// resume puts the epoch where a checkpoint inside it left it: the random
// state, the buffer, the bucket and the loss so far.
func (r *epochRun) resume(pos *Position) error {
	if err := pos.Check(r.plan, r.opt.Epoch, r.st.Bucket); err != nil {
		return err
	}
	if err := r.pcg.UnmarshalBinary(pos.RNG); err != nil {
		return fmt.Errorf("checkpoint %s: random state: %w", r.st.CurrentDir(), err)
	}
	if err := r.bm.restore(pos); err != nil {
		return err
	}
	r.first, r.loss = pos.Bucket, pos.Loss
	return nil
}

// train trains the buckets in Plan order, each once its partitions have
// arrived, reporting progress and checkpointing inside the epoch when due
// or asked to stop (then it returns a *StopError). It returns the first
// error.
func (r *epochRun) train() error {
	plan, opt := r.plan, r.opt
	need := plan.Arrivals()
	lastReport, lastCkpt := time.Now(), time.Now()
	next, quit := readBucketsAhead(r.st, plan.Buckets[r.first:])
	defer close(quit)
	for k := r.first; k < len(plan.Buckets); k++ {
		b := plan.Buckets[k]
		be := <-next
		if be.err != nil {
			return fmt.Errorf("bucket (%d,%d): %w", b.Src, b.Dst, be.err)
		}
		if err := r.trainBucket(k, need[k], b, be.edges); err != nil {
			return err
		}
		if opt.Progress != nil && k < len(plan.Buckets)-1 && time.Since(lastReport) > 200*time.Millisecond {
			opt.Progress(opt.Epoch, k+1, len(plan.Buckets), r.edgesPerSecond(), r.stall, false)
			lastReport = time.Now()
		}
		if k+1 == len(plan.Buckets) {
			break // the epoch's own checkpoint follows
		}
		halt := Stopped(opt.Stop)
		if halt || opt.Checkpoint.Due(k+1, time.Since(lastCkpt)) {
			if err := r.checkpoint(k + 1); err != nil {
				return err
			}
			lastCkpt = time.Now()
			if halt {
				return &StopError{Epochs: r.base, Bucket: k + 1, Buckets: len(plan.Buckets)}
			}
		}
	}
	return nil
}

// trainBucket waits for the partitions bucket k needs (its first need
// loads), trains it and records the stall and compute it took.
func (r *epochRun) trainBucket(k, need int, b orderings.Bucket, edges []store.Edge) error {
	bm := r.bm
	ask := bm.since()
	sb, db, err := bm.acquire(k, need, b.Src, b.Dst)
	if err != nil {
		return err
	}
	got := bm.since()
	l, err := r.eng.TrainBucket(edges, b.Src, sb, b.Dst, db, r.rng)
	if err != nil {
		return err
	}
	end := bm.since()
	bm.done(k, b.Src, b.Dst)
	r.loss += l
	r.stall += got - ask
	r.compute += end - got
	r.edges += int64(len(edges))
	r.runs = append(r.runs, BucketRun{Src: b.Src, Dst: b.Dst, Edges: len(edges), StallSeconds: got - ask, Compute: end - got, Start: ask, End: end})
	return nil
}

// checkpoint takes a checkpoint inside the epoch after done buckets.
func (r *epochRun) checkpoint(done int) error {
	pos := Position{Plan: planSum(r.plan), Epoch: r.opt.Epoch, Bucket: done, Loss: r.loss}
	var err error
	if pos.RNG, err = r.pcg.MarshalBinary(); err != nil {
		return err
	}
	c, err := checkpointInside(r.st, r.bm, r.eng, r.base, pos)
	if err != nil {
		return err
	}
	r.ckpts = append(r.ckpts, c)
	return nil
}

// commit commits the epoch's checkpoint with the engine's state.
func (r *epochRun) commit() error {
	sums, err := epochSums(r.st, r.bm)
	if err != nil {
		return err
	}
	r.sums = sums
	extra, err := engineState(r.eng)
	if err != nil {
		return err
	}
	if err := r.st.Commit(r.base+1, 0, sums, extra); err != nil {
		return fmt.Errorf("checkpoint %d: %w", r.base+1, err)
	}
	return nil
}

func (r *epochRun) edgesPerSecond() float64 { return float64(r.edges) / math.Max(r.compute, 1e-9) }

// measure is the epoch's measurement: the Report's fields from what the
// buffer manager and the trainer recorded, total seconds long, with the
// checkpoint's commit timed apart.
func (r *epochRun) measure(total, commit float64) Epoch {
	plan, bm := r.plan, r.bm
	ep := Epoch{Epoch: r.opt.Epoch, Loss: r.loss, IO: bm.events, Buckets: r.runs, Checksums: r.sums, CheckpointSeconds: commit,
		BufferSeconds: bm.bufferSeconds, Checkpoints: r.ckpts, ResumedAtBucket: r.first, LossPerEdge: r.loss / float64(max(r.st.M.Train, 1)), ResidentBytes: r.st.M.ResidentBytes()}
	rep := &ep.Report
	for _, c := range r.ckpts {
		rep.InsideCheckpoints++
		rep.CheckpointBytes += c.Bytes
		rep.CheckpointWaitSeconds += c.Seconds
	}
	rep.System, rep.Ordering, rep.OrderingSeed, rep.Device, rep.Dataset = "realrun-"+r.eng.Name(), plan.Ordering, plan.Seed, "this machine", r.st.M.Source
	rep.Dim, rep.P, rep.C = r.st.M.Dim, plan.P, plan.C
	rep.PartitionBytes = r.st.M.PartitionBytes
	rep.EpochSeconds, rep.StallSeconds, rep.ComputeSeconds = total, r.stall, r.compute
	// Loads, swaps and writes are what the buffer manager performed;
	// whether a swap is prefetchable is a property of the order.
	rep.Counts = bm.counts
	rep.PrefetchableSwaps = plan.Counts.PrefetchableSwaps
	var readBusy, writeBusy float64
	var readSpans, writeSpans, computeSpans []report.Interval
	for _, e := range bm.events {
		switch e.Kind {
		case "load", "restore", "resident-load":
			readBusy += e.End - e.Start
			readSpans = append(readSpans, report.Interval{Start: e.Start, End: e.End})
		default:
			writeBusy += e.End - e.Start
			writeSpans = append(writeSpans, report.Interval{Start: e.Start, End: e.End})
		}
		// Only the Plan's loads and writes are the Report's bytes, which
		// must equal the Plan's; checkpoint bytes are in Checkpoints.
		// A typed store's resident table, read at the epoch's start and
		// written at its end, is the Plan's I/O too (the simulator counts
		// it).
		switch e.Kind {
		case "load", "resident-load":
			rep.ReadBytes += e.Bytes
		case "write", "resident-write":
			rep.WriteBytes += e.Bytes
		}
	}
	for _, b := range r.runs {
		computeSpans = append(computeSpans, report.Interval{Start: b.Start + b.StallSeconds, End: b.End})
	}
	if total > 0 {
		rep.GPUUtilization = 0 // no GPU: the CPU engine
		rep.Resources = []report.ResourceUsage{
			{Name: report.CPU, BusySeconds: r.compute, Utilization: r.compute / total},
			{Name: report.DiskRead, BusySeconds: readBusy, Bytes: rep.ReadBytes, Utilization: readBusy / total},
			{Name: report.DiskWrite, BusySeconds: writeBusy, Bytes: rep.WriteBytes, Utilization: writeBusy / total},
		}
		rep.Timeline = report.Timeline(computeSpans, nil, readSpans, writeSpans, total, 100)
	}
	if r.compute > 0 {
		ep.EdgesPerSecond = float64(r.edges) / r.compute
	}
	return ep
}

// checkCounts compares the loads, swaps and writes an engine performed
// with its Plan's: any difference means the engine did not execute the
// Plan, and the measurement must not be reported as the Plan's.
func checkCounts(performed, plan orderings.Counts) error {
	performed.PrefetchableSwaps = plan.PrefetchableSwaps // a property of the order, not performed
	if performed != plan {
		return fmt.Errorf("the engine performed %d loads, %d swaps, %d writes and %d final writes; the Plan has %d, %d, %d and %d",
			performed.Loads, performed.Swaps, performed.Writes, performed.FinalWrites, plan.Loads, plan.Swaps, plan.Writes, plan.FinalWrites)
	}
	return nil
}

// edgeReadAhead is how many buckets' edges are read ahead of training.
const edgeReadAhead = 8

type bucketEdges struct {
	edges []store.Edge
	err   error
}

// readBucketsAhead reads the buckets' edges in order on a goroutine of
// its own, up to edgeReadAhead ahead of the trainer, so that a bucket's
// (buffered, small) read waits in the disk's queue behind partition
// transfers while the previous bucket trains instead of between buckets.
// It stops after the first error or when quit is closed.
func readBucketsAhead(st *store.Store, buckets []orderings.Bucket) (<-chan bucketEdges, chan<- struct{}) {
	next := make(chan bucketEdges, edgeReadAhead)
	quit := make(chan struct{})
	go func() {
		for _, b := range buckets {
			edges, err := st.ReadBucket(b.Src, b.Dst)
			select {
			case next <- bucketEdges{edges, err}:
			case <-quit:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return next, quit
}

// Quality is link-prediction quality on held-out edges, both sides
// corrupted and averaged.
type Quality struct {
	MRR      float64 `json:"mrr"`
	HitsAt1  float64 `json:"hits_at_1"`
	HitsAt3  float64 `json:"hits_at_3"`
	HitsAt10 float64 `json:"hits_at_10"`
	// Mode is the protocol: "filtered" (ranked against every node, other
	// true edges removed) or "sampled" (against Uniform + ByDegree sampled
	// nodes); MRRs of the two protocols are not comparable. "none" marks an
	// epoch that was not evaluated.
	Mode string `json:"mode"`
	// Auto says the node count chose Mode (the auto protocol: filtered up
	// to a node count, sampled above), rather than the caller; then
	// FilteredMemory, when it chose sampled, is the smallest evaluation
	// memory budget filtered ranking would need, in bytes (eval.Choice).
	Auto           bool  `json:"auto_protocol,omitempty"`
	FilteredMemory int64 `json:"filtered_memory_bytes,omitempty"`
	// Split is the split ranked: "valid" or "test".
	Split    string `json:"split,omitempty"`
	Edges    int    `json:"edges"`
	Uniform  int    `json:"uniform_negatives,omitempty"`
	ByDegree int    `json:"degree_negatives,omitempty"`
	// Baseline is the expected MRR of a scorer that ranks at random: the
	// true node's rank is then uniform over the k = candidates + 1 places,
	// so E[1/rank] = H_k / k (not 1/k), averaged over the ranked sides.
	Baseline float64 `json:"random_mrr"`
	// Seconds is the wall time of the evaluation (not part of the epoch).
	Seconds float64 `json:"eval_seconds"`
	// MemoryBudget is the evaluation's memory budget and MemoryBytes the
	// most it planned to hold at once (gathered rows, scores, known
	// partners and partition buffers), in bytes.
	MemoryBudget int64 `json:"memory_budget_bytes,omitempty"`
	MemoryBytes  int64 `json:"memory_bytes,omitempty"`
}

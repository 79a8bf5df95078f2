// Package realrun is tierflow's real out-of-core training engine: it trains
// graph embeddings whose parameters live on disk in p partitions, at most c
// of them in memory, executing an orderings.Plan with real, page-cache
// bypassing I/O, and measures every byte and second into the same Report
// the simulator predicts.
package realrun

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/telemetry"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/workload"
)

// Epoch is one measured epoch: the simulator's Report plus quality.
type Epoch struct {
	Epoch int `json:"epoch"`
	report.Report
	Loss    float64      `json:"loss"`
	Quality eval.Quality `json:"quality"`
	// Flat copies of the quality metrics for the JSON contract.
	MRR      float64 `json:"mrr"`
	HitsAt1  float64 `json:"hits_at_1"`
	HitsAt3  float64 `json:"hits_at_3"`
	HitsAt10 float64 `json:"hits_at_10"`
	// EdgesPerSecond is training edges ÷ compute seconds.
	EdgesPerSecond float64     `json:"edges_per_second"`
	IO             []IOEvent   `json:"io,omitempty"`
	Buckets        []BucketRun `json:"buckets,omitempty"`
	// Checksums are the CRC-32C of every partition as written this epoch.
	Checksums map[int]uint64 `json:"-"`
	// CheckpointSeconds is the time to commit the epoch's checkpoint
	// (not part of EpochSeconds).
	CheckpointSeconds float64 `json:"checkpoint_seconds"`
	// GPU is what a GPU engine measured (absent for the CPU engine).
	GPU *telemetry.Report `json:"gpu,omitempty"`
	// Checkpoints are the checkpoints taken inside the epoch
	// (--checkpoint-every), part of EpochSeconds.
	Checkpoints []CheckpointCost `json:"checkpoints,omitempty"`
	// ResumedAtBucket is the bucket this epoch resumed at (0: it ran
	// from its start); the times then cover only the rest of it.
	ResumedAtBucket int `json:"resumed_at_bucket,omitempty"`
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
}

// StopError is returned when a run was stopped (EpochOptions.Stop): its
// last checkpoint holds Epochs complete epochs and Bucket buckets of the
// next (of Buckets). Code is the exit status the stopper asked for.
type StopError struct{ Epochs, Bucket, Buckets, Code int }

func (e *StopError) Error() string {
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
// reads the store's current checkpoint and writes every partition to a new checkpoint, which it
// commits at the end with the engine's extra state; inside the epoch it
// checkpoints as opt.Checkpoint says and when opt.Stop is closed. The
// epoch's randomness depends only on the seed and the epoch, so that a
// resumed epoch trains as an uninterrupted one would.
func RunEpoch(st *store.Store, plan *orderings.Plan, eng Compute, opt EpochOptions) (Epoch, error) {
	prefetch, seed, epoch, progress := opt.Prefetch, opt.Seed, opt.Epoch, opt.Progress
	if plan.P != st.M.P {
		return Epoch{}, fmt.Errorf("plan has p = %d, the work directory %d", plan.P, st.M.P)
	}
	// The checkpoint numbers count epochs run in this work directory;
	// epoch (which seeds the randomness) is usually base+1.
	base := st.Current
	if err := st.Tidy(); err != nil {
		return Epoch{}, err
	}
	fromSums, err := st.PartitionSums(st.CurrentDir())
	if err != nil {
		return Epoch{}, err
	}
	to, err := st.Begin(base+1, 0)
	if err != nil {
		return Epoch{}, err
	}
	bm, err := newBufferManager(st, plan, prefetch, st.CurrentDir(), to, fromSums)
	if err != nil {
		return Epoch{}, err
	}
	defer bm.free()
	bm.slotEngine, _ = eng.(SlotResident)
	hooks, _ := eng.(EpochHooks)
	need := plan.Arrivals()
	pcg := rand.NewPCG(uint64(seed), uint64(epoch))
	rng := rand.New(pcg)
	first := 0
	var loss float64
	if pos := opt.From; pos != nil {
		if err := pos.Check(plan, epoch, st.Bucket); err != nil {
			return Epoch{}, err
		}
		if err := pcg.UnmarshalBinary(pos.RNG); err != nil {
			return Epoch{}, fmt.Errorf("checkpoint %s: random state: %w", st.CurrentDir(), err)
		}
		if err := bm.restore(pos); err != nil {
			return Epoch{}, err
		}
		first, loss = pos.Bucket, pos.Loss
	}
	bm.start()
	if hooks != nil {
		if err := hooks.StartEpoch(epoch); err != nil {
			bm.fail(err)
			bm.finish()
			return Epoch{}, err
		}
	}
	var runs []BucketRun
	var ckpts []CheckpointCost
	var stall, compute float64
	var edgesDone int64
	lastReport, lastCkpt := time.Now(), time.Now()
	var trainErr error
	var stop *StopError
	next, quit := readBucketsAhead(st, plan.Buckets[first:])
	defer close(quit)
	for k := first; k < len(plan.Buckets); k++ {
		b := plan.Buckets[k]
		be := <-next
		edges, err := be.edges, be.err
		if err != nil {
			trainErr = fmt.Errorf("bucket (%d,%d): %w", b.Src, b.Dst, err)
			break
		}
		ask := bm.since()
		sb, db, err := bm.acquire(k, need[k], b.Src, b.Dst)
		if err != nil {
			trainErr = err
			break
		}
		got := bm.since()
		l, err := eng.TrainBucket(edges, b.Src, sb, b.Dst, db, rng)
		if err != nil {
			trainErr = err
			break
		}
		end := bm.since()
		bm.done(k, b.Src, b.Dst)
		loss += l
		stall += got - ask
		compute += end - got
		edgesDone += int64(len(edges))
		runs = append(runs, BucketRun{Src: b.Src, Dst: b.Dst, Edges: len(edges), StallSeconds: got - ask, Compute: end - got, Start: ask, End: end})
		if progress != nil && k < len(plan.Buckets)-1 && time.Since(lastReport) > 200*time.Millisecond {
			progress(epoch, k+1, len(plan.Buckets), float64(edgesDone)/math.Max(compute, 1e-9), stall, false)
			lastReport = time.Now()
		}
		if k+1 == len(plan.Buckets) {
			break // the epoch's own checkpoint follows
		}
		halt := Stopped(opt.Stop)
		if halt || opt.Checkpoint.Due(k+1, time.Since(lastCkpt)) {
			pos := Position{Plan: planSum(plan), Epoch: epoch, Bucket: k + 1, Loss: loss}
			if pos.RNG, err = pcg.MarshalBinary(); err != nil {
				trainErr = err
				break
			}
			c, err := checkpointInside(st, bm, eng, base, pos)
			if err != nil {
				trainErr = err
				break
			}
			ckpts = append(ckpts, c)
			lastCkpt = time.Now()
			if halt {
				stop = &StopError{Epochs: base, Bucket: k + 1, Buckets: len(plan.Buckets)}
				trainErr = stop
				break
			}
		}
	}
	if trainErr != nil {
		bm.fail(trainErr)
	}
	if err := bm.finish(); err != nil && stop == nil {
		return Epoch{}, err
	}
	if trainErr != nil {
		return Epoch{}, trainErr
	}
	if err := checkCounts(bm.counts, plan.Counts); err != nil {
		return Epoch{}, err
	}
	// The epoch ends when the last partition is written; committing the
	// checkpoint (syncs and the pointer flip) is timed on its own.
	total := bm.since()
	sums, err := epochSums(st, bm)
	if err != nil {
		return Epoch{}, err
	}
	extra, err := engineState(eng)
	if err != nil {
		return Epoch{}, err
	}
	if err := st.Commit(base+1, 0, sums, extra); err != nil {
		return Epoch{}, fmt.Errorf("checkpoint %d: %w", base+1, err)
	}
	commit := bm.since() - total
	if progress != nil {
		progress(epoch, len(plan.Buckets), len(plan.Buckets), float64(edgesDone)/math.Max(compute, 1e-9), stall, true)
	}
	ep := Epoch{Epoch: epoch, Loss: loss, IO: bm.events, Buckets: runs, Checksums: sums, CheckpointSeconds: commit,
		Checkpoints: ckpts, ResumedAtBucket: first}
	r := &ep.Report
	for _, c := range ckpts {
		r.InsideCheckpoints++
		r.CheckpointBytes += c.Bytes
		r.CheckpointWaitSeconds += c.Seconds
	}
	r.System, r.Ordering, r.Device, r.Dataset = "realrun-"+eng.Name(), plan.Ordering, "this machine", st.M.Source
	r.Dim, r.P, r.C = st.M.Dim, plan.P, plan.C
	r.PartitionBytes = st.M.PartitionBytes
	r.EpochSeconds, r.StallSeconds, r.ComputeSeconds = total, stall, compute
	// Loads, swaps and writes are what the buffer manager performed;
	// whether a swap is prefetchable is a property of the order.
	r.Counts = bm.counts
	r.PrefetchableSwaps = plan.Counts.PrefetchableSwaps
	var readBusy, writeBusy float64
	var readSpans, writeSpans, computeSpans []report.Interval
	for _, e := range bm.events {
		switch e.Kind {
		case "load", "restore":
			readBusy += e.End - e.Start
			readSpans = append(readSpans, report.Interval{Start: e.Start, End: e.End})
		default:
			writeBusy += e.End - e.Start
			writeSpans = append(writeSpans, report.Interval{Start: e.Start, End: e.End})
		}
		// Only the Plan's loads and writes are the Report's bytes, which
		// must equal the Plan's; checkpoint bytes are in Checkpoints.
		switch e.Kind {
		case "load":
			r.ReadBytes += e.Bytes
		case "write":
			r.WriteBytes += e.Bytes
		}
	}
	for _, b := range runs {
		computeSpans = append(computeSpans, report.Interval{Start: b.Start + b.StallSeconds, End: b.End})
	}
	if total > 0 {
		r.GPUUtilization = 0 // no GPU: the CPU engine
		r.Resources = []report.ResourceUsage{
			{Name: report.CPU, BusySeconds: compute, Utilization: compute / total},
			{Name: report.DiskRead, BusySeconds: readBusy, Bytes: r.ReadBytes, Utilization: readBusy / total},
			{Name: report.DiskWrite, BusySeconds: writeBusy, Bytes: r.WriteBytes, Utilization: writeBusy / total},
		}
		r.Timeline = report.Timeline(computeSpans, nil, readSpans, writeSpans, total, 100)
	}
	if compute > 0 {
		ep.EdgesPerSecond = float64(edgesDone) / compute
	}
	if hooks != nil {
		if err := hooks.FinishEpoch(&ep); err != nil {
			return Epoch{}, err
		}
	}
	return ep, nil
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

// Package realrun is tierflow's real out-of-core training engine: it trains
// graph embeddings whose parameters live on disk in p partitions, at most c
// of them in memory, executing an orderings.Plan with real, page-cache
// bypassing I/O, and measures every byte and second into the same Report
// the simulator predicts.
package realrun

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/telemetry"
	"github.com/tierflow/tierflow/sim"
)

// Epoch is one measured epoch: the simulator's Report plus quality.
type Epoch struct {
	Epoch int `json:"epoch"`
	sim.Report
	Loss    float64 `json:"loss"`
	Quality Quality `json:"quality"`
	// Flat copies of the quality metrics for the JSON contract.
	MRR      float64 `json:"mrr"`
	HitsAt1  float64 `json:"hits_at_1"`
	HitsAt3  float64 `json:"hits_at_3"`
	HitsAt10 float64 `json:"hits_at_10"`
	// EdgesPerSecond is training edges ÷ compute seconds.
	EdgesPerSecond float64     `json:"edges_per_second"`
	IO             []IOEvent   `json:"io,omitempty"`
	Buckets        []BucketRun `json:"buckets,omitempty"`
	// Checksums are the CRC-64 of every partition as written this epoch.
	Checksums map[int]uint64 `json:"-"`
	// CheckpointSeconds is the time to commit the epoch's checkpoint
	// (not part of EpochSeconds).
	CheckpointSeconds float64 `json:"checkpoint_seconds"`
	// GPU is what a GPU engine measured (absent for the CPU engine).
	GPU *telemetry.Report `json:"gpu,omitempty"`
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

// RunEpoch trains one epoch in plan order and returns its measurement. It
// reads the store's current checkpoint and writes every partition to a new
// checkpoint, which it commits at the end (with the engine's extra state)
// unless commit is false; the epoch's randomness depends only on seed and
// epoch.
func RunEpoch(st *store.Store, plan *orderings.Plan, eng Compute, prefetch bool, seed int64, epoch int, progress Progress) (Epoch, error) {
	if plan.P != st.M.P {
		return Epoch{}, fmt.Errorf("plan has p = %d, the work directory %d", plan.P, st.M.P)
	}
	from, to := st.Current, st.Current+1
	if err := st.Begin(to); err != nil {
		return Epoch{}, err
	}
	bm, err := newBufferManager(st, plan, prefetch, from, to)
	if err != nil {
		return Epoch{}, err
	}
	defer bm.free()
	need := make([]int, len(plan.Buckets))
	j := 0
	for k := range plan.Buckets {
		for j < len(plan.Loads) && plan.Loads[j].NeededAt <= k {
			j++
		}
		need[k] = j
	}
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(epoch)))
	bm.start()
	var runs []BucketRun
	var loss, stall, compute float64
	var edgesDone int64
	lastReport := time.Now()
	var trainErr error
	for k, b := range plan.Buckets {
		edges, err := st.ReadBucket(b.Src, b.Dst)
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
		bm.done(k)
		loss += l
		stall += got - ask
		compute += end - got
		edgesDone += int64(len(edges))
		runs = append(runs, BucketRun{Src: b.Src, Dst: b.Dst, Edges: len(edges), StallSeconds: got - ask, Compute: end - got, Start: ask, End: end})
		if progress != nil && k < len(plan.Buckets)-1 && time.Since(lastReport) > 200*time.Millisecond {
			progress(epoch, k+1, len(plan.Buckets), float64(edgesDone)/math.Max(compute, 1e-9), stall, false)
			lastReport = time.Now()
		}
	}
	if trainErr != nil {
		bm.fail(trainErr)
	}
	if err := bm.finish(); err != nil {
		return Epoch{}, err
	}
	if trainErr != nil {
		return Epoch{}, trainErr
	}
	// The epoch ends when the last partition is written; committing the
	// checkpoint (syncs and the pointer flip) is timed on its own.
	total := bm.since()
	extra, err := checkpointExtra(eng, bm.checksums)
	if err != nil {
		return Epoch{}, err
	}
	if err := st.Commit(to, extra); err != nil {
		return Epoch{}, fmt.Errorf("checkpoint %d: %w", to, err)
	}
	commit := bm.since() - total
	if progress != nil {
		progress(epoch, len(plan.Buckets), len(plan.Buckets), float64(edgesDone)/math.Max(compute, 1e-9), stall, true)
	}
	ep := Epoch{Epoch: epoch, Loss: loss, IO: bm.events, Buckets: runs, Checksums: bm.checksums, CheckpointSeconds: commit}
	r := &ep.Report
	r.System, r.Ordering, r.Device, r.Dataset = "realrun-"+eng.Name(), plan.Ordering, "this machine", st.M.Source
	r.Dim, r.P, r.C = st.M.Dim, plan.P, plan.C
	r.PartitionBytes = st.M.PartitionBytes
	r.EpochSeconds, r.StallSeconds, r.ComputeSeconds = total, stall, compute
	r.Swaps, r.Loads, r.Writes, r.FinalWrites = plan.Counts.Swaps, plan.Counts.Loads, plan.Counts.Writes, plan.Counts.FinalWrites
	r.PrefetchableSwaps = plan.Counts.PrefetchableSwaps
	var readBusy, writeBusy float64
	var readSpans, writeSpans, computeSpans []sim.Interval
	for _, e := range bm.events {
		if e.Kind == "load" {
			r.ReadBytes += e.Bytes
			readBusy += e.End - e.Start
			readSpans = append(readSpans, sim.Interval{Start: e.Start, End: e.End})
		} else {
			r.WriteBytes += e.Bytes
			writeBusy += e.End - e.Start
			writeSpans = append(writeSpans, sim.Interval{Start: e.Start, End: e.End})
		}
	}
	for _, b := range runs {
		computeSpans = append(computeSpans, sim.Interval{Start: b.Start + b.StallSeconds, End: b.End})
	}
	if total > 0 {
		r.GPUUtilization = 0 // no GPU: the CPU engine
		r.Resources = []sim.ResourceUsage{
			{Name: "cpu", BusySeconds: compute, Utilization: compute / total},
			{Name: "disk read", BusySeconds: readBusy, Bytes: r.ReadBytes, Utilization: readBusy / total},
			{Name: "disk write", BusySeconds: writeBusy, Bytes: r.WriteBytes, Utilization: writeBusy / total},
		}
		r.Timeline = sim.Timeline(computeSpans, readSpans, writeSpans, total, 100)
	}
	if compute > 0 {
		ep.EdgesPerSecond = float64(edgesDone) / compute
	}
	return ep, nil
}

// Discard is a Progress that prints nothing.
func Discard(int, int, int, float64, float64, bool) {}

// LineProgress prints one line per 10% of an epoch (for logs and pipes).
func LineProgress(w io.Writer) Progress {
	last := -1
	return func(epoch, done, total int, eps, stall float64, final bool) {
		tenth := done * 10 / total
		if tenth == last && !final {
			return
		}
		last = tenth
		if final {
			last = -1
		}
		fmt.Fprintf(w, "epoch %d: %d/%d buckets, %.0f edges/s, stall %.1f s\n", epoch, done, total, eps, stall)
	}
}

// BarProgress redraws one progress bar line on a terminal.
func BarProgress(w io.Writer) Progress {
	return func(epoch, done, total int, eps, stall float64, final bool) {
		const width = 30
		filled := done * width / total
		bar := make([]byte, width)
		for i := range bar {
			if i < filled {
				bar[i] = '#'
			} else {
				bar[i] = '.'
			}
		}
		fmt.Fprintf(w, "\repoch %d [%s] %d/%d buckets  %.0f edges/s  stall %.1f s", epoch, bar, done, total, eps, stall)
		if final {
			fmt.Fprintln(w)
		}
	}
}

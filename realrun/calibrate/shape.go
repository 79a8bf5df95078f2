package calibrate

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// ShapeProfile calibrates this machine for one run without looking at any
// training run: the disk holding scratchDir with O_DIRECT transfers of the
// work directory's partition size, and the engine at exactly the run's
// training shape and partition size (MeasureCompute): on the graph's own
// buckets and partitions when st is its work directory, else on
// synthetic buckets of st.M.Rows rows (a Store holding a manifest alone
// will do: P, Rows, PartitionBytes are read).
// The profile is cal.Profile; cal keeps the disk measurements beside it,
// and the profile records the shape (cpu.train_shape; ShapeOf).
//
// The disk is measured over at least ShapeDiskBytes per pass (short
// bursts of a few files overstate this virtual disk's sustained rate), and
// how the engine and the I/O slow each other (measureInterference) goes
// into cpu.interference.
func ShapeProfile(st *store.Store, h realrun.Hyper, scratchDir string) (Calibration, error) {
	return shapeProfile(st, h, scratchDir, st.M.PartitionBytes)
}

// shapeProfile is ShapeProfile with the disk measured with transfers of
// fileBytes.
func shapeProfile(st *store.Store, h realrun.Hyper, scratchDir string, fileBytes int64) (Calibration, error) {
	t0 := time.Now()
	b, err := newBench(st, h)
	if err != nil {
		return Calibration{}, err
	}
	defer b.close()
	// The engine is timed before the disk and again after it, so that its
	// spread spans the calibration's minutes, not seconds.
	rate, err := b.measure(ComputeRounds)
	if err != nil {
		return Calibration{}, err
	}
	took := time.Since(t0).Seconds()
	cal, pass, err := calibrateDiskFor(st, h, scratchDir, ShapeDiskBytes, fileBytes, 0)
	if err != nil {
		return cal, err
	}
	t1 := time.Now()
	if err := b.more(&rate, ComputeRoundsAfter); err != nil {
		return cal, err
	}
	// As long as an epoch trains, up to ComputeSpan: a second or two of
	// rounds samples one moment of a machine whose speed wanders.
	if err := b.until(&rate, spanFor(st, rate.Edges, 1)); err != nil {
		return cal, err
	}
	cal.Compute = &rate
	cal.Took.Compute = took + time.Since(t1).Seconds()
	tc := rate.TrainCost()
	t := &cal.Profile.CPU.Train
	t.Dot, t.DistMult, t.ComplEx = tc, tc, tc
	t.Set(string(h.Model), tc)
	shape := ShapeOf(h, st.M.Rows)
	cal.Shape, cal.Profile.CPU.TrainShape = &shape, &shape
	cal.Profile.CPU.BatchEdges = tc.Edges
	cal.FMACores = max(1, min(h.Workers, runtime.NumCPU()))
	cal.FMAPeak = FMAPeak(cal.FMACores)
	t2 := time.Now()
	if cal.Profile.CPU.Interference, err = measureInterference(scratchDir, st.M.PartitionBytes, b, rate.Edges, interferenceWindow(pass, st.M.PartitionBytes)); err != nil {
		return cal, err
	}
	cal.Took.Interference = time.Since(t2).Seconds()
	cal.Took.Total = time.Since(t0).Seconds()
	if err := cal.SetSpread(&cal.Profile); err != nil {
		return cal, err
	}
	return cal, cal.Profile.Validate()
}

// AddOrderings measures the CPU engine at shape h on each of plans' own
// bucket sequence over st's work directory (MeasureOrderings) and records
// the rates in cal, and as its profile's cpu.train.<model>.orderings
// each ordering's rate over the bench's in the same minutes times the
// profile's edge rate (OrderingRatio); simulations of those orderings
// take them from there (devices.Profile.ForOrdering). It then measures
// again how much partition I/O slows training, on the first Plan's
// bucket sequence (a stream of partition-sized reads and writes in
// scratchDir beside it): the bench's two buckets keep their rows in the
// caches, and the stream's checksums evict them, a slowdown an epoch's
// buckets, whose rows are not cached to begin with, do not see.
// cpu.interference.compute is that measurement (InterferenceOn says so);
// cpu.interference.io stays the bench's.
//
// The bench's rounds in the orderings' turns join cal.Compute's first
// (ComputeRate.fold), and at the end the bench trains on until its
// rounds have taken as long in all as the runs the calibration predicts
// (every plan for epochs epochs each) train, up to ComputeSpan
// (ComputeRate.Tail): the profile's edge rate and its spread sample the
// whole calibration and its last seconds, nearest the runs. Call it once
// per calibration. A calibration without the engine's rate, or st
// without its buckets, is left as it is.
func (cal *Calibration) AddOrderings(st *store.Store, h realrun.Hyper, plans []*orderings.Plan, epochs int, scratchDir string) error {
	tc, ok := cal.Profile.CPU.Train.For(string(h.Model))
	if !ok || !tc.Folded() || len(plans) == 0 {
		return nil
	}
	t0 := time.Now()
	rates, bench, err := MeasureOrderings(st, h, plans)
	if err != nil {
		return err
	}
	if len(rates) == 0 {
		return nil
	}
	cal.Orderings = rates
	first := plans[0]
	b, err := planBench(st, h, first, st.M.Seed, nil)
	if err != nil {
		return err
	}
	defer b.close()
	if _, _, _, err := b.round(); err != nil { // warm up and fill
		return err
	}
	itf, err := measureInterference(scratchDir, st.M.PartitionBytes, b, rates[first.Ordering].Edges, interferenceWindow(ShapeDiskBytes, st.M.PartitionBytes))
	if err != nil {
		return err
	}
	cal.Profile.CPU.Interference.Compute = itf.Compute
	cal.InterferenceOn = first.Ordering + "'s bucket sequence"
	tail := cal.Took.Compute
	if cal.Compute != nil && len(bench.Rates) > 0 {
		if err := cal.settleCompute(st, h, bench, len(plans)*max(epochs, 1), &tc); err != nil {
			return err
		}
	}
	tail = cal.Took.Compute - tail // the bench's rounds at the end: the engine's time, not the orderings'

	tc.Orderings = map[string]devices.EdgeRate{}
	for name := range rates {
		tc.Orderings[name] = devices.EdgeRate(cal.OrderingRatio(name) * float64(tc.Edges))
	}
	cal.Profile.CPU.Train.Set(string(h.Model), tc)
	cal.Took.Orderings = time.Since(t0).Seconds() - tail
	cal.Took.Total += cal.Took.Orderings + tail
	return cal.Profile.Validate()
}

// settleCompute folds the bench's rounds in the orderings' turns into
// cal.Compute, times the bench at the end of the calibration until its
// rounds have taken as long as epochs epochs of st's graph train (up to
// ComputeSpan), and sets the profile's edge rate (tc, the cost fields
// that held the old rate, cpu.batch_edges) and spread from all of them.
// The bench's ten rounds before and after the disk take seconds of a
// calibration of a minute; its rounds in the orderings' turns ran at
// 0.77–1.14× the ten's median on this machine, so the rate is the
// median of every round.
func (cal *Calibration) settleCompute(st *store.Store, h realrun.Hyper, turns ComputeRate, epochs int, tc *devices.TrainCost) error {
	was := tc.Edges
	cal.Compute.fold(turns)
	if span := spanFor(st, cal.Compute.Edges, epochs); span > cal.Compute.Seconds {
		t0 := time.Now()
		ref, err := newBench(st, h)
		if err != nil {
			return err
		}
		defer ref.close()
		// The orderings' rounds and the interference stream evicted its
		// rows: one round warms them again.
		if _, _, _, err := ref.round(); err != nil {
			return err
		}
		if err := ref.until(cal.Compute, span); err != nil {
			return err
		}
		cal.Took.Compute += time.Since(t0).Seconds()
	}
	tc.Edges = devices.EdgeRate(cal.Compute.Edges)
	t := &cal.Profile.CPU.Train
	for _, c := range []*devices.TrainCost{&t.Dot, &t.DistMult, &t.ComplEx} {
		if c.Edges == was { // set from the same rate (ShapeProfile)
			c.Edges = tc.Edges
		}
	}
	if cal.Profile.CPU.BatchEdges == was {
		cal.Profile.CPU.BatchEdges = tc.Edges
	}
	cal.Profile.CPU.Train.Set(string(h.Model), *tc)
	return cal.SetSpread(&cal.Profile)
}

// OrderingRatio is how fast the engine trains the named ordering's own
// bucket sequence against the bench the profile's rate comes from: its
// rate over the bench's in rounds taken in turn with it
// (ComputeRate.Relative), or, for a calibration from before those were
// measured, over the bench's median; 0 when the ordering was not
// measured.
func (cal Calibration) OrderingRatio(name string) float64 {
	r, ok := cal.Orderings[name]
	switch {
	case !ok || r.Edges <= 0:
		return 0
	case r.Relative > 0:
		return r.Relative
	case cal.Compute != nil && cal.Compute.Edges > 0:
		return r.Edges / cal.Compute.Edges
	}
	return 0
}

// interferenceWindow is how long each half of the interference
// measurement runs, for disk passes of pass bytes and partitions of
// partBytes: ~2 s for 512 MB; at least six partition transfers at 1 GB/s,
// so that the stream's rate, counted in whole files, is not quantised
// away at partitions of a gigabyte.
func interferenceWindow(pass, partBytes int64) time.Duration {
	window := time.Duration(float64(pass) / 256e6 * float64(time.Second))
	return max(min(max(window, 300*time.Millisecond), 2*time.Second), time.Duration(6*float64(partBytes)/1e9*float64(time.Second)))
}

// ComputeRoundsAfter are the engine's rounds timed again after the disk.
const ComputeRoundsAfter = 3

// ShapeOf is the training shape h trains at on partitions of rows rows,
// as a profile records it.
func ShapeOf(h realrun.Hyper, rows int64) devices.TrainShape {
	return devices.TrainShape{Model: string(h.Model), Dim: h.Dim, Batch: h.Batch, Negatives: h.Negatives, Chunk: h.Chunk(), Workers: h.Workers, Rows: rows}
}

// Saved is `realrun calibrate`: ShapeProfile at the training shape h on
// st's graph (or partitions like st's), the disk with transfers of
// fileBytes (0: st's partition size), named name, with this build's GPU (CalibrateGPU
// at GPUShape) when it has one. Its cpu.train holds the cost of h's score
// function alone: the rate is valid for the recorded shape only, and a
// simulation of another score function asks for its own calibration.
//
// With gpuOnly (a profile for the CUDA engine, which needs no CPU engine
// figures) the CPU engine and its interference with the I/O are not
// measured, and a build without the GPU engine is an error.
func Saved(st *store.Store, h realrun.Hyper, scratchDir, name string, gpuOnly bool, fileBytes int64) (Calibration, error) {
	var cal Calibration
	var err error
	start := time.Now()
	if fileBytes <= 0 {
		fileBytes = st.M.PartitionBytes
	}
	if gpuOnly {
		cal, _, err = calibrateDiskFor(st, h, scratchDir, ShapeDiskBytes, fileBytes, 0)
	} else {
		cal, err = shapeProfile(st, h, scratchDir, fileBytes)
	}
	if err != nil {
		return cal, err
	}
	p := &cal.Profile
	p.Name = name
	tc, _ := p.CPU.Train.For(string(h.Model))
	p.CPU.Train = devices.CPUTrain{}
	if !gpuOnly {
		p.CPU.Train.Set(string(h.Model), tc)
	}
	if err := cal.SetSpread(p); err != nil {
		return cal, err
	}
	t0 := time.Now()
	gc, err := CalibrateGPU(st.M.PartitionBytes, h, st.M.Rows, st.M.MeanBucket())
	cal.Took.GPU = time.Since(t0).Seconds()
	cal.Took.Total = time.Since(start).Seconds()
	var na *realrun.EngineUnavailable
	switch {
	case errors.As(err, &na) && gpuOnly:
		return cal, err
	case errors.As(err, &na):
		cal.NoGPU = na.Error()
	case err != nil:
		return cal, fmt.Errorf("gpu calibration: %w", err)
	default:
		if err := gc.Apply(p, h); err != nil {
			return cal, err
		}
		cal.GPU = &gc
	}
	return cal, p.Validate()
}

// EffectiveFLOPS is the score arithmetic the engine performed per second
// at the calibrated shape (workload.Training.BatchFLOPs per edge times
// the edge rate): a rate that cannot exceed FMAPeak. 0 without a shape.
func (c Calibration) EffectiveFLOPS() float64 {
	if c.Shape == nil {
		return 0
	}
	tc, ok := c.Profile.CPU.Train.For(c.Shape.Model)
	if !ok {
		return 0
	}
	return flopsPerEdge(*c.Shape) * float64(tc.Edges)
}

// flopsPerEdge is the cost rule's FLOPs and pairwise operations per edge
// at the shape (workload.Training.PerEdgeFLOPs; 12·m·d for dot and
// ComplEx, whose GEMM is dot's, plus their operators' work).
func flopsPerEdge(s devices.TrainShape) float64 {
	return workload.Training{Model: workload.Model(s.Model), Dim: s.Dim, Batch: s.Batch, Negatives: s.Negatives, ChunkSize: s.Chunk}.PerEdgeFLOPs()
}

// FMAPeak is the FMA ceiling of cores cores in FLOP/s: one core's best
// of five ~10 ms runs of the SIMD kernels' peak loop (model.FMAPeak)
// times the cores. 0 when the build has no such loop.
func FMAPeak(cores int) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := 0.0
	for r := 0; r < 5; r++ {
		t := time.Now()
		f := model.FMAPeak(1 << 19)
		if sec := time.Since(t).Seconds(); f > 0 && sec > 0 {
			best = max(best, f/sec)
		}
	}
	return best * float64(cores)
}

// calibrateDiskFor measures the disk holding scratchDir with transfers of
// st's partition size, pass bytes per measurement (at most a few epochs'
// worth of st's partitions), and the checksum rate. It returns the bytes
// of one pass.
func calibrateDiskFor(st *store.Store, h realrun.Hyper, scratchDir string, pass, fileBytes int64, paired time.Duration) (Calibration, int64, error) {
	pass = min(pass, 4*int64(st.M.P)*fileBytes)
	files := int(max(8, (pass+fileBytes-1)/max(fileBytes, 1)))
	if paired == 0 {
		paired = pairedFor(int64(files)*fileBytes, false)
	}
	cal, err := Calibrate(CalibrateOptions{Dir: scratchDir, FileBytes: fileBytes, Files: files, Name: "this-machine", Workers: h.Workers, Paired: paired})
	return cal, pass, err
}

// ShapeDiskBytes is the least a disk calibration pass moves, before each
// run (CompareOptions.DiskScratch) as for the profile: passes of a few
// hundred megabytes overstate this virtual disk's sustained rate. The
// disk-bracket experiment calibrates with passes of this size too.
const ShapeDiskBytes = 512 << 20

// pairedFor is the least time a paired measurement runs for a pass of
// pass bytes: the time the pass takes at 256 MB/s, between 0.2 s and
// PairedSeconds (8 s from passes of 2 GB: at partitions of a gigabyte,
// long enough to tell a burst from the steady rate; at partitions of a
// few megabytes an epoch lasts seconds and the 0.2 s floor plus 2n pairs
// will do) — an eighth of that around each run (Disk), which measures
// twice a run.
func pairedFor(pass int64, around bool) time.Duration {
	sec := min(max(float64(pass)/256e6, 0.2), PairedSeconds)
	if around {
		sec = max(sec/8, 0.2)
	}
	return time.Duration(sec * float64(time.Second))
}

// Disk measures the disk holding scratchDir with transfers of st's
// partition size, as ShapeProfile does, and the checksum rate: what a
// comparison measures just before and just after each run.
func Disk(st *store.Store, h realrun.Hyper, scratchDir string) (Calibration, error) {
	pass := min(ShapeDiskBytes, 4*int64(st.M.P)*st.M.PartitionBytes)
	cal, _, err := calibrateDiskFor(st, h, scratchDir, ShapeDiskBytes, st.M.PartitionBytes, pairedFor(max(pass, 8*st.M.PartitionBytes), true))
	return cal, err
}

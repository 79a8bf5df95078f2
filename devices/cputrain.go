package devices

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tierflow/tierflow/workload"
)

// CPUBucketTime is the time tierflow's CPU engine takes for a bucket of
// edges: work units (workload.WorkUnit: batches of Training.Batch edges, or equal
// whole-chunk shares of a small bucket) handed to cpu.workers goroutines
// as they free up, every chunk of ChunkSize edges (default Negatives)
// costing, at the whole machine's calibrated rates (TrainCost,
// CPUTrainCost), edges ÷ edges/s + bytes ÷ row_bandwidth + FLOPs ÷ flops
// + pairwise ÷ pairwise (workload.ChunkCost; a rate of 0 drops its term,
// and pairwise operations without their own rate run at a third of the
// FLOP rate, TrainCost.PairwiseRate); one worker
// alone takes workers times as long. The bucket ends when its last batch
// does. 0 when the profile has no cost for the model (CPUTrainCost). The
// simulator prices the CPU engine's buckets with it, and the calibration
// turns a measured bucket time into a rate with it.
func CPUBucketTime(prof Profile, t workload.Training, edges int64) float64 {
	tc, _, err := CPUTrainCost(prof, t.Model)
	if err != nil || edges <= 0 {
		return 0
	}
	w := max(prof.CPU.Workers, 1)
	// A zero rate is no separate term (a rate measured at one shape
	// folds rows and FLOPs into the edge rate).
	over := func(x, rate float64) float64 {
		if rate <= 0 {
			return 0
		}
		return x / rate
	}
	pairRate := tc.PairwiseRate()
	chunkTime := func(n int) float64 {
		c := t.ChunkCost(n)
		return over(c.Edges, float64(tc.Edges)) + over(c.Bytes, float64(tc.RowBW)) + over(c.FLOPs, float64(tc.FLOPS)) + over(c.Pairwise, pairRate)
	}
	batchTime := func(b int) float64 {
		var s float64
		ch := t.Chunk()
		for lo := 0; lo < b; lo += ch {
			s += chunkTime(min(ch, b-lo))
		}
		return s * float64(w)
	}
	unit := workload.WorkUnit(int(min(edges, 1<<40)), t.Batch, t.Chunk(), w)
	full, rest := workload.SplitBatches(edges, unit)
	// Workers take units in order as they free up: with equal units the
	// makespan is ceil(units / workers) unit times, plus the remainder
	// unit on the worker that frees up first.
	free := make([]float64, w)
	bt := batchTime(unit)
	assign := func(d float64) {
		best := 0
		for i := range free {
			if free[i] < free[best] {
				best = i
			}
		}
		free[best] += d
	}
	if full > int64(4*w) {
		// Whole rounds first, so long buckets cost O(workers).
		rounds := full/int64(w) - 1
		for i := range free {
			free[i] = float64(rounds) * bt
		}
		full -= rounds * int64(w)
	}
	for i := int64(0); i < full; i++ {
		assign(bt)
	}
	if rest > 0 {
		assign(batchTime(rest))
	}
	var end float64
	for _, f := range free {
		end = max(end, f)
	}
	return end
}

// ErrNoTrainCost is the error of CPUTrainCost when a profile has no cost
// for a model and none it can price it from.
var ErrNoTrainCost = errors.New("no CPU engine cost for the model")

// CPUTrainCost is the CPU engine's cost of model m on prof: the
// profile's own (cpu.train.<m>, or cpu.train.pair for the pair
// cpu.train.pair_model), or — when it has none — the rates of a model it
// has, each of m's terms (workload.ChunkCost) priced at them: rates per
// edge, byte, FLOP and pairwise operation are the machine's whatever the
// model, and the cost rule says how many of each m does (note says which
// model's rates, "" for m's own). A rate measured at one shape (an edge
// rate alone, TrainCost.Folded: what `realrun calibrate`
// writes) folds its model's rows and FLOPs into the edge rate and cannot
// be split into them: such a profile is not scaled to another model, and
// the error (ErrNoTrainCost) says to calibrate m.
func CPUTrainCost(prof Profile, m workload.Model) (tc TrainCost, note string, err error) {
	tr := prof.CPU.Train
	if tc, ok := tr.For(string(m)); ok {
		return tc, "", nil
	}
	measured := tr.Measured()
	for _, r := range measured {
		if c, _ := tr.For(r); !c.Folded() {
			return c, fmt.Sprintf("cpu.train has no cost for %s: its terms (the cost rule's edges, bytes, FLOPs and pairwise operations) are priced at cpu.train.%s's rates", m, r), nil
		}
	}
	if len(measured) == 0 {
		return TrainCost{}, "", fmt.Errorf("%w: cpu.train gives no cost; measure it with realrun calibrate {Model} %s and the run's other training flags", ErrNoTrainCost, m)
	}
	return TrainCost{}, "", fmt.Errorf("%w: cpu.train gives an edge rate for %s alone, measured at one shape with its rows and FLOPs folded in, which does not scale to %s by the cost rule; measure it with realrun calibrate {Model} %s and the run's other training flags",
		ErrNoTrainCost, strings.Join(measured, ", "), m, m)
}

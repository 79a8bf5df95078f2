package cuda

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/store"
)

// Calibrate measures pinned host↔GPU bandwidth with partition-sized
// copies (median of five each way), the GPU's memory, and the engine's
// training rate at shape h (each on a GPU open returns) on two synthetic partitions of rows rows, in
// buckets of bucketEdges edges (0: 50 batches) — the run's own bucket
// size, since a bucket's fixed costs (the first piece sampled before the
// GPU starts, the stream drained at its end) weigh more in small ones:
// once with the partitions on the GPU (--buffer gpu) and once in host
// memory (--buffer host). Each rate is the median over buckets timed on
// the host clock, from TrainBucket's call to its return, as an epoch's
// compute is measured; that includes the host's share (shuffle, sampling,
// launches and, with --buffer host, the rows' gathers and copies), which
// the GPU waits for whenever it is the slower side.
func Calibrate(open func() (gpu, error), partitionBytes int64, h realrun.Hyper, rows, bucketEdges int64) (calibrate.GPUCalibration, error) {
	var cal calibrate.GPUCalibration
	d := int64(h.Dim)
	st := &store.Store{M: store.Manifest{P: 2, Rows: rows, Nodes: 2 * rows, Relations: 10, Dim: h.Dim, PartitionBytes: 2 * 4 * rows * d}}
	rng := rand.New(rand.NewPCG(uint64(h.Dim), uint64(h.Negatives)))
	deg := make([]int32, 2*rows)
	for i := range deg {
		deg[i] = int32(1 + rng.IntN(20))
	}
	h.Workers = 1
	if bucketEdges <= 0 {
		bucketEdges = int64(max(50*h.Batch, 20_000))
	}
	cal.BucketEdges = bucketEdges
	// Two partitions of random rows (zero Adagrad state).
	parts := make([]*store.Buffer, 2)
	for p := range parts {
		f := make([]float32, 2*rows*d)
		for i := int64(0); i < rows*d; i++ {
			f[i] = 0.1 * (2*rng.Float32() - 1)
		}
		parts[p] = store.BufferOf(f)
	}
	edges := make([]store.Edge, bucketEdges)
	for _, mode := range []string{realrun.BufferGPU, realrun.BufferHost} {
		g, err := open() // an engine's Close releases its GPU
		if err != nil {
			return cal, err
		}
		e, err := newEngine(realrun.EngineOptions{Engine: "cuda", Buffer: mode, Hyper: h, Store: st, Degrees: deg, Seed: 1, C: 2}, g)
		if err != nil {
			return cal, err
		}
		rate, err := func() (float64, error) {
			defer e.Close()
			if mode == realrun.BufferGPU {
				cal.Name, cal.MemoryBytes = e.info.Name, e.info.MemoryBytes
				if cal.H2D, cal.D2H, err = bandwidth(e, partitionBytes); err != nil {
					return 0, err
				}
				for p := range parts {
					if err := e.Install(p, p, parts[p]); err != nil {
						return 0, err
					}
				}
			}
			return bucketRate(e, edges, rows, parts, rng)
		}()
		if err != nil {
			return cal, fmt.Errorf("{Buffer} %s: %w", mode, err)
		}
		if mode == realrun.BufferGPU {
			cal.EdgesPerSecond = rate
		} else {
			cal.HostEdgesPerSecond = rate
		}
		// A fresh engine for the next mode: the partitions' rows have
		// trained, which changes no cost.
	}
	cal.Shape = fmt.Sprintf("%s d=%d batch=%d negatives=%d chunk=%d rows=%d bucket=%d", h.Model, h.Dim, h.Batch, h.Negatives, h.Chunk(), rows, bucketEdges)
	if h.TF32 {
		cal.Shape += " tf32"
	}
	return cal, nil
}

// bucketRate trains buckets of len(edges) random edges between the two
// partitions and returns the median edges per second: one bucket to warm
// up (module load, caches), then at least five timed, and more until 0.3 s
// of them (at most 200).
func bucketRate(e *Engine, edges []store.Edge, rows int64, parts []*store.Buffer, rng *rand.Rand) (float64, error) {
	var rates []float64
	var total time.Duration
	for r := 0; r < 201 && (len(rates) < 5 || total < 300*time.Millisecond); r++ {
		for i := range edges {
			edges[i] = store.Edge{Src: int32(rng.Int64N(rows)), Rel: int32(rng.IntN(10)), Dst: int32(rows + rng.Int64N(rows))}
		}
		start := time.Now()
		if _, err := e.TrainBucket(edges, 0, parts[0], 1, parts[1], rng); err != nil {
			return 0, err
		}
		if el := time.Since(start); r > 0 {
			rates = append(rates, float64(len(edges))/el.Seconds())
			total += el
		}
	}
	sort.Float64s(rates)
	return rates[len(rates)/2], nil
}

// bandwidth times pinned partition-sized copies each way.
func bandwidth(e *Engine, n int64) (h2d, d2h float64, err error) {
	done, err := e.bind()
	if err != nil {
		return 0, 0, err
	}
	defer done()
	host, err := e.allocPinned(n)
	if err != nil {
		return 0, 0, err
	}
	defer e.g.hostFree(host.p)
	buf, err := e.alloc(n)
	if err != nil {
		return 0, 0, err
	}
	time1 := func(copy func() error) (float64, error) {
		var ts []float64
		for i := 0; i < 6; i++ {
			if err := e.g.record(evCopyStart, copyStream); err != nil {
				return 0, err
			}
			if err := copy(); err != nil {
				return 0, err
			}
			if err := e.g.record(evCopyEnd, copyStream); err != nil {
				return 0, err
			}
			secs, err := e.g.elapsed(evCopyStart, evCopyEnd)
			if err != nil {
				return 0, err
			}
			if i > 0 {
				ts = append(ts, secs)
			}
		}
		sort.Float64s(ts)
		return float64(n) / ts[len(ts)/2], nil
	}
	if h2d, err = time1(func() error { return e.g.htod(buf.p, host.p, n, copyStream) }); err != nil {
		return 0, 0, err
	}
	d2h, err = time1(func() error { return e.g.dtoh(host.p, buf.p, n, copyStream) })
	return h2d, d2h, err
}

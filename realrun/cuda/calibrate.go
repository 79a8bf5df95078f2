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
// training rate at shape h on two synthetic partitions of rows rows held
// on the GPU: the median of five buckets timed on the host clock, from
// TrainBucket's call to its return, as an epoch's compute is measured.
// That includes the host's share (the shuffle, negative sampling, kernel
// launches), which the GPU waits for whenever it is the slower side: on
// an H100 at Twitter's throughput shape the kernels alone ran at 15.5M
// edges/s and a real epoch's buckets at 6.7M (2026-11-26).
func Calibrate(g gpu, partitionBytes int64, h realrun.Hyper, rows int64) (calibrate.GPUCalibration, error) {
	var cal calibrate.GPUCalibration
	d := int64(h.Dim)
	st := &store.Store{M: store.Manifest{P: 2, Rows: rows, Nodes: 2 * rows, Relations: 10, Dim: h.Dim, PartitionBytes: 2 * 4 * rows * d}}
	rng := rand.New(rand.NewPCG(uint64(h.Dim), uint64(h.Negatives)))
	deg := make([]int32, 2*rows)
	for i := range deg {
		deg[i] = int32(1 + rng.IntN(20))
	}
	h.Workers = 1
	e, err := newEngine(realrun.EngineOptions{Engine: "cuda", Buffer: realrun.BufferGPU, Hyper: h, Store: st, Degrees: deg, Seed: 1, C: 2}, g)
	if err != nil {
		return cal, err
	}
	defer e.Close()
	cal.Name, cal.MemoryBytes = e.info.Name, e.info.MemoryBytes
	if cal.H2D, cal.D2H, err = bandwidth(e, partitionBytes); err != nil {
		return cal, err
	}
	// Two partitions of random rows (zero Adagrad state) on the GPU.
	for p := 0; p < 2; p++ {
		f := make([]float32, 2*rows*d)
		for i := int64(0); i < rows*d; i++ {
			f[i] = 0.1 * (2*rng.Float32() - 1)
		}
		if err := e.Install(p, p, store.BufferOf(f)); err != nil {
			return cal, err
		}
	}
	edges := make([]store.Edge, max(50*h.Batch, 20_000))
	var rates []float64
	for r := 0; r < 6; r++ {
		for i := range edges {
			edges[i] = store.Edge{Src: int32(rng.Int64N(rows)), Rel: int32(rng.IntN(10)), Dst: int32(rows + rng.Int64N(rows))}
		}
		start := time.Now()
		if _, err := e.TrainBucket(edges, 0, nil, 1, nil, rng); err != nil {
			return cal, err
		}
		if r > 0 { // the first bucket warms up (JIT, caches)
			rates = append(rates, float64(len(edges))/time.Since(start).Seconds())
		}
	}
	sort.Float64s(rates)
	cal.EdgesPerSecond = rates[len(rates)/2]
	cal.Shape = fmt.Sprintf("%s d=%d batch=%d negatives=%d chunk=%d rows=%d", h.Model, h.Dim, h.Batch, h.Negatives, e.chunk, rows)
	return cal, nil
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

package cpu

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// BenchmarkTrainBucket trains one in-memory bucket at the shape of issue 11
// (Dot, d = 100, chunks of 100 edges sharing 200 negatives, batches of
// 10,000) between two partitions of 36,400 rows (twitter@0.0035 with p = 4),
// at every kernel level, and reports edges/s. Profile it with -cpuprofile to
// see what the training loop spends its time on.
func BenchmarkTrainBucket(b *testing.B) {
	const rows, d, m, edges = 36400, 100, 200, 100_000
	rng := rand.New(rand.NewPCG(7, 8))
	floats := func() []float32 {
		f := make([]float32, 2*rows*d)
		for i := 0; i < rows*d; i++ {
			f[i] = 0.1 * (2*rng.Float32() - 1)
		}
		return f
	}
	src, dst := store.BufferOf(floats()), store.BufferOf(floats())
	st := &store.Store{M: store.Manifest{P: 2, Rows: rows, Nodes: 2 * rows, Relations: 1, Dim: d}}
	deg := make([]int32, 2*rows)
	for i := range deg {
		deg[i] = int32(1 + rng.IntN(20))
	}
	es := make([]store.Edge, edges)
	for i := range es {
		es[i] = store.Edge{Src: int32(rng.IntN(rows)), Dst: int32(rows + rng.IntN(rows))}
	}
	for _, l := range model.SupportedLevels() {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/workers=%d", l, workers), func(b *testing.B) {
				prev := model.SetLevel(l)
				defer model.SetLevel(prev)
				h := realrun.Hyper{Training: workload.Training{Model: workload.Dot, Dim: d, Batch: 10000, Negatives: m, ChunkSize: 100}, DegreeFrac: 0.5, LR: 0.1, Workers: workers}
				eng := New(h, st, deg, 1)
				cpu0 := processCPU()
				for b.Loop() {
					if _, err := eng.TrainBucket(es, 0, src, 1, dst, rng); err != nil {
						b.Fatal(err)
					}
				}
				total := float64(edges) * float64(b.N)
				b.ReportMetric(total/b.Elapsed().Seconds(), "edges/s")
				// The machine is shared: edges per CPU-second of this process
				// does not count time its threads waited for a core.
				b.ReportMetric(total/(processCPU()-cpu0), "edges/cpu-s")
			})
		}
	}
}

// processCPU returns the user+system CPU seconds of this process.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

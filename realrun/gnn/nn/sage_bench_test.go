//go:build linux

package nn

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/model"
)

// Timing: the machine is shared, so besides the wall clock the benchmark
// counts the CPU time the process used (getrusage), which time spent
// descheduled does not inflate, and compares that rate with one core's
// FMA peak measured the same way (the thread's CPU time).

// cpuSeconds returns the CPU time used so far by the process (who =
// RUSAGE_SELF) or the calling thread (who = 1, RUSAGE_THREAD).
func cpuSeconds(who int) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		panic(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// fmaPeak is one core's FMA ceiling in FLOP per CPU second: the best of 5
// runs of model.FMAPeak on a locked thread.
var fmaPeak = func() func() float64 {
	var peak float64
	return func() float64 {
		if peak == 0 {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for range 5 {
				t0 := cpuSeconds(1)
				f := model.FMAPeak(1 << 22)
				peak = max(peak, f/(cpuSeconds(1)-t0))
			}
		}
		return peak
	}
}()

// fanoutBlock is a sampled-like block: dst destinations with fanout
// distinct neighbours each (never themselves) among src source rows, the
// destinations first, drawn at random: rows repeat across destinations.
// With src 0, every neighbour is a source row of its own (src =
// dst+dst·fanout, nothing repeats), as the sampler makes at a seed layer
// of a large graph.
func fanoutBlock(dst, fanout, src int, rng *rand.Rand) *block.Block {
	fresh := src == 0
	if fresh {
		src = dst + dst*fanout
	}
	b := &block.Block{NumDst: dst, Src: make([]int32, src), Ptr: make([]int32, 1, dst+1)}
	for i := range b.Src {
		b.Src[i] = int32(i)
	}
	next := int32(dst)
	for i := 0; i < dst; i++ {
		start := len(b.Nbr)
	draw:
		for len(b.Nbr)-start < fanout {
			j := next
			if fresh {
				next++
			} else {
				j = int32(rng.IntN(src))
			}
			if j == int32(i) {
				continue
			}
			for _, u := range b.Nbr[start:] {
				if u == j {
					continue draw
				}
			}
			b.Nbr = append(b.Nbr, j)
		}
		b.Ptr = append(b.Ptr, int32(len(b.Nbr)))
	}
	return b
}

// benchLayer times Forward+Backward of l on b (Workers 2) and reports
// the FLOP/s (flops per iteration) by the wall clock, their fraction of
// two cores' FMA peak, and — steadier on a shared machine — the FLOP/s
// per CPU-second of the process (every thread) and its fraction of one
// core's peak.
func benchLayer(b *testing.B, l Layer, blk *block.Block, flops float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := normals(blk.NumSrc()*l.InDim(), rng)
	dOut := normals(blk.NumDst*l.OutDim(), rng)
	p := fmaPeak()
	Workers = 2
	l.Forward(blk, x, true, rng)
	l.Backward(dOut)
	b.ResetTimer()
	c0 := cpuSeconds(0) // RUSAGE_SELF
	for i := 0; i < b.N; i++ {
		l.Forward(blk, x, true, rng)
		l.Backward(dOut)
	}
	cpu := cpuSeconds(0) - c0
	g := flops * float64(b.N) / b.Elapsed().Seconds()
	gc := flops * float64(b.N) / cpu
	b.ReportMetric(g/1e9, "GFLOP/s")
	b.ReportMetric(gc/1e9, "cpu-GFLOP/s")
	if p > 0 {
		b.ReportMetric(g/(2*p), "frac-of-2-core-peak")
		b.ReportMetric(gc/p, "cpu-frac-of-peak")
		b.ReportMetric(p/1e9, "core-peak-GFLOP/s")
	}
}

// BenchmarkSAGE runs forward and backward of a SAGE layer at Reddit-like
// (602 → 256) and arxiv-like (128 → 256) shapes: 1,024 destinations with
// 25 neighbours each among 26,624 sources, reported by benchLayer. FLOPs
// count the GEMMs (2mnk each) and the aggregation's multiply-adds (1
// each).
func BenchmarkSAGE(b *testing.B) {
	const dst, fanout, out = 1024, 25, 256
	for _, agg := range []Aggregator{Mean, Pool} {
		for _, in := range []int{602, 128} {
			for _, dx := range []bool{true, false} {
				name := map[Aggregator]string{Mean: "mean", Pool: "pool"}[agg]
				b.Run(fmt.Sprintf("%s/in=%d/dx=%v", name, in, dx), func(b *testing.B) {
					rng := rand.New(rand.NewPCG(1, 1))
					blk := fanoutBlock(dst, fanout, dst+dst*fanout, rng)
					l := NewSAGE("s", agg, in, out, rng).(*SAGE)
					l.SetInputGrad(dx)
					ns, nd, e := float64(blk.NumSrc()), float64(dst), float64(len(blk.Nbr))
					k, o := float64(in), float64(out)
					// Forward; backward: both weights' gradients and, but
					// for a mean without dx, the mean's input product
					// (pool's fc_pool gradient needs it).
					flops := 4*nd*k*o + 4*nd*k*o
					if dx || agg == Pool {
						flops += 2 * nd * k * o
					}
					if dx {
						flops += 2 * nd * k * o
					}
					if agg == Mean {
						flops += e * k // the sums
						if dx {
							flops += 2 * e * k
						}
					} else {
						flops += 2*ns*k*k + e*k + 2*ns*k*k // fc_pool, max, dW_pool
						if dx {
							flops += 2 * ns * k * k
						}
					}
					benchLayer(b, l, blk, flops)
				})
			}
		}
	}
}

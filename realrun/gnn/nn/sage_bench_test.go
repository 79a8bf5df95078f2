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
// distinct neighbours each, drawn from dst+dst·fanout sources (the
// destinations first), as the sampler makes at a seed layer of a large
// graph.
func fanoutBlock(dst, fanout int, rng *rand.Rand) *block.Block {
	src := dst + dst*fanout
	b := &block.Block{NumDst: dst, Src: make([]int32, src), Ptr: make([]int32, 1, dst+1)}
	for i := range b.Src {
		b.Src[i] = int32(i)
	}
	for i := 0; i < dst; i++ {
		start := len(b.Nbr)
	draw:
		for len(b.Nbr)-start < fanout {
			j := int32(rng.IntN(src))
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

// BenchmarkSAGE runs forward and backward of a SAGE layer at Reddit-like
// (602 → 256) and arxiv-like (128 → 256) shapes: 1,024 destinations with
// 25 neighbours each among 26,624 sources. FLOPs count the GEMMs
// (2mnk each) and the aggregation's multiply-adds (1 each). GFLOP/s is by
// the wall clock, frac-of-2peak divides it by twice one core's FMA peak
// (the machine's 2 cores); cpu-GFLOP/s is by the process's CPU time and
// frac-of-peak divides that by one core's peak (the fraction each busy
// core reaches).
func BenchmarkSAGE(b *testing.B) {
	const dst, fanout, out = 1024, 25, 256
	for _, agg := range []Aggregator{Mean, Pool} {
		for _, in := range []int{602, 128} {
			for _, dx := range []bool{true, false} {
				name := map[Aggregator]string{Mean: "mean", Pool: "pool"}[agg]
				b.Run(fmt.Sprintf("%s/in=%d/dx=%v", name, in, dx), func(b *testing.B) {
					rng := rand.New(rand.NewPCG(1, 1))
					blk := fanoutBlock(dst, fanout, rng)
					l := NewSAGE("s", agg, in, out, rng).(*SAGE)
					l.SetInputGrad(dx)
					x := make([]float32, blk.NumSrc()*in)
					for i := range x {
						x[i] = float32(rng.NormFloat64())
					}
					d := make([]float32, dst*out)
					for i := range d {
						d[i] = float32(rng.NormFloat64()) * 1e-3
					}
					ns, nd, e := float64(blk.NumSrc()), float64(dst), float64(len(blk.Nbr))
					k, o := float64(in), float64(out)
					flops := 4*nd*k*o + 6*nd*k*o // forward; backward without dx
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
					peak := 2 * fmaPeak()
					l.Forward(blk, x, true, nil)
					l.Backward(d)
					b.ResetTimer()
					c0 := cpuSeconds(syscall.RUSAGE_SELF)
					for b.Loop() {
						l.Forward(blk, x, true, nil)
						l.Backward(d)
					}
					cpu := cpuSeconds(syscall.RUSAGE_SELF) - c0
					rate := flops * float64(b.N) / b.Elapsed().Seconds()
					b.ReportMetric(rate/1e9, "GFLOP/s")
					b.ReportMetric(rate/peak, "frac-of-2peak")
					b.ReportMetric(flops*float64(b.N)/cpu/1e9, "cpu-GFLOP/s")
					b.ReportMetric(flops*float64(b.N)/cpu/(peak/2), "frac-of-peak")
				})
			}
		}
	}
}

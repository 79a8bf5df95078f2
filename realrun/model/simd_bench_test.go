package model

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// Timing: the benchmarks lock their goroutine to an OS thread and time the
// loop with that thread's CPU clock as well as the wall clock. The machine
// is shared, so the wall clock counts time the thread spent descheduled;
// the CPU-time rates (cpu-GFLOP/s, frac-of-peak) do not, and the peak they
// are compared with is measured the same way.

// peakCache holds the measured FMA ceiling (CPU-time GFLOP/s) per level.
var peakCache = map[Level]float64{}

// measuredPeak times the FMA loop of the active level (best of 5 runs of
// ~10 ms of thread CPU time) and returns its GFLOP/s; 0 at Generic.
func measuredPeak() float64 {
	l := ActiveLevel()
	if p, ok := peakCache[l]; ok {
		return p
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := 0.0
	for r := 0; r < 5; r++ {
		t0 := threadCPU()
		f := FMAPeak(1 << 19)
		best = max(best, f/(threadCPU()-t0)/1e9)
	}
	peakCache[l] = best
	return best
}

// cpuLoop runs f in a b.Loop on a locked thread and returns the loop's
// thread CPU seconds.
func cpuLoop(b *testing.B, f func()) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := threadCPU()
	for b.Loop() {
		f()
	}
	return threadCPU() - t0
}

// reportPeak reports GFLOP/s by the wall clock and by thread CPU time and,
// at a SIMD level, the CPU-time rate as a fraction of the level's measured
// FMA peak.
func reportPeak(b *testing.B, flops, cpuSec float64) {
	total := flops * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	g := total / cpuSec / 1e9
	b.ReportMetric(g, "cpu-GFLOP/s")
	if p := measuredPeak(); p > 0 {
		b.ReportMetric(g/p, "frac-of-peak")
	}
}

// atLevels runs f as a sub-benchmark per supported level.
func atLevels(b *testing.B, f func(b *testing.B)) {
	for _, l := range SupportedLevels() {
		b.Run(l.String(), func(b *testing.B) {
			prev := SetLevel(l)
			defer SetLevel(prev)
			f(b)
		})
	}
}

// BenchmarkFMAPeak measures this core's FMA ceiling: iterations of
// independent vector FMAs, no loads.
func BenchmarkFMAPeak(b *testing.B) {
	for _, l := range SupportedLevels()[1:] {
		b.Run(l.String(), func(b *testing.B) {
			prev := SetLevel(l)
			defer SetLevel(prev)
			var flops float64
			sec := cpuLoop(b, func() { flops = FMAPeak(1 << 16) })
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(flops*float64(b.N)/sec/1e9, "cpu-GFLOP/s")
		})
	}
}

// BenchmarkGEMM runs the three products of ChunkGrad at the chunk shape
// (n = 100 queries, m = 200 negatives, d = 100 and 400) and two large
// shapes, at every level.
func BenchmarkGEMM(b *testing.B) {
	type gemmCase struct {
		name    string
		m, n, k int
		f       func(m, n, k int, A, B, C []float32)
	}
	var cases []gemmCase
	for _, d := range []int{100, 400} {
		cases = append(cases,
			gemmCase{fmt.Sprintf("scores-NT/%dx%dx%d", 100, 200, d), 100, 200, d, SgemmNT},
			gemmCase{fmt.Sprintf("gradQ-NN/%dx%dx%d", 100, d, 200), 100, d, 200, SgemmNN},
			gemmCase{fmt.Sprintf("gradN-TN/%dx%dx%d", 200, d, 100), 200, d, 100, SgemmTN})
	}
	cases = append(cases,
		gemmCase{"NT/1000x1000x100", 1000, 1000, 100, SgemmNT},
		gemmCase{"NN/1000x100x1000", 1000, 100, 1000, SgemmNN})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			A, B, C := randVec(rng, c.m*c.k, 1), randVec(rng, c.n*c.k, 1), make([]float32, c.m*c.n)
			atLevels(b, func(b *testing.B) {
				sec := cpuLoop(b, func() { c.f(c.m, c.n, c.k, A, B, C) })
				reportPeak(b, 2*float64(c.m*c.n*c.k), sec)
			})
		})
	}
}

// BenchmarkMicroKernel runs the full-size micro-kernel alone on panels that
// sit in L1 (k = 100 as at d = 100, and k = 256, one full kc block): the
// ceiling of the GEMMs before packing, edges and the Go loops around it.
func BenchmarkMicroKernel(b *testing.B) {
	for _, l := range SupportedLevels()[1:] {
		for _, k := range []int{100, 256} {
			for _, rowsA := range []bool{true, false} {
				b.Run(fmt.Sprintf("%s/k=%d,rowsA=%v", l, k, rowsA), func(b *testing.B) {
					prev := SetLevel(l)
					defer SetLevel(prev)
					mr, nr := tileShape()
					a, bp, c := make([]float32, mr*k), make([]float32, nr*k), make([]float32, mr*nr)
					rsa, csa := 1, mr
					if rowsA {
						rsa, csa = k, 1
					}
					sec := cpuLoop(b, func() { kernelFor(mr, nr, rowsA, k, &a[0], rsa, csa, &bp[0], nr, &c[0], nr) })
					reportPeak(b, 2*float64(mr*nr*k), sec)
				})
			}
		}
	}
}

// Package model holds the CPU training kernels of the real engine: the Dot,
// DistMult and ComplEx score functions, the softmax contrastive loss over
// chunk-shared negatives with its gradients, and Adagrad.
//
// All vectors are contiguous []float32; matrices are row-major. The kernels
// are single-threaded and allocation-free in steady state (callers pass a
// reusable *Scratch and parallelise across chunks themselves).
//
// Length contract: the hot functions (Score, ChunkGrad, Adagrad, the Sgemm
// kernels, RankCounts) assume their arguments have the documented lengths and
// do not re-check them; a too-short slice may make them panic with an index
// error. Validate once at the boundary with CheckDim and CheckChunk.
package model

import (
	"github.com/tierflow/tierflow/sim/workload"
)

// Kind names a score function: the one vocabulary of package workload,
// shared with the simulator.
type Kind = workload.Model

// The supported score functions.
const (
	Dot      = workload.Dot
	DistMult = workload.DistMult
	ComplEx  = workload.ComplEx
)

// Kinds lists the supported kinds in a stable order.
var Kinds = workload.Models

// ParseKind returns the Kind named by s (case-insensitive, surrounding space
// ignored; "complex" and "ComplEx" both name ComplEx).
func ParseKind(s string) (Kind, error) { return workload.ParseModel(s) }

// Score returns the score of one edge with source, relation and destination
// vectors s, r, d of equal length:
//
//	Dot:      Σ s_k d_k                       (r is ignored and may be nil)
//	DistMult: Σ s_k r_k d_k
//	ComplEx:  Re(Σ s_k r_k conj(d_k))         (Trouillon et al.; PBG/Marius)
//
// Lengths are assumed validated (len(r), len(d) ≥ len(s); len(s) even for
// ComplEx). An unknown kind scores NaN.
func Score(k Kind, s, r, d []float32) float32 {
	switch k {
	case Dot:
		return dot(s, d)
	case DistMult:
		r = r[:len(s)]
		d = d[:len(s)]
		var a0, a1 float32
		i := 0
		for ; i+2 <= len(s); i += 2 {
			a0 += s[i] * r[i] * d[i]
			a1 += s[i+1] * r[i+1] * d[i+1]
		}
		if i < len(s) {
			a0 += s[i] * r[i] * d[i]
		}
		return a0 + a1
	case ComplEx:
		h := len(s) / 2
		sre, sim := s[:h], s[h:2*h]
		rre, rim := r[:h], r[h:2*h]
		dre, dim := d[:h], d[h:2*h]
		var acc float32
		for i, a := range sre {
			b, c, e := sim[i], rre[i], rim[i]
			// (s·r) = (a c − b e) + i(a e + b c); Re((s·r)·conj(d)).
			acc += (a*c-b*e)*dre[i] + (a*e+b*c)*dim[i]
		}
		return acc
	}
	return nan32()
}

// dot returns Σ a_k b_k (len(b) ≥ len(a)) with two independent accumulators.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x := a[i : i+4 : i+4]
		y := b[i : i+4 : i+4]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func nan32() float32 {
	var z float32
	return z / z
}

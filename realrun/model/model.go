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
	"fmt"
	"strings"
)

// Kind names a score function.
type Kind string

// The supported score functions.
const (
	// Dot scores an edge as <s, d>; it has no relation parameters.
	Dot Kind = "dot"
	// DistMult scores an edge as Σ s_k r_k d_k.
	DistMult Kind = "distmult"
	// ComplEx scores an edge as Re(Σ s_k r_k conj(d_k)) with vectors of even
	// length d laid out as [real parts (d/2) | imaginary parts (d/2)].
	ComplEx Kind = "complex"
)

// Kinds lists the supported kinds in a stable order.
var Kinds = []Kind{Dot, DistMult, ComplEx}

// ParseKind returns the Kind named by s (case-insensitive, surrounding space
// ignored; "complex" and "complEx" both name ComplEx).
func ParseKind(s string) (Kind, error) {
	switch Kind(strings.ToLower(strings.TrimSpace(s))) {
	case Dot:
		return Dot, nil
	case DistMult:
		return DistMult, nil
	case ComplEx:
		return ComplEx, nil
	}
	return "", fmt.Errorf("model: unknown score function %q (choices: %q, %q, %q)", s, Dot, DistMult, ComplEx)
}

// Valid reports whether k is one of the supported kinds.
func (k Kind) Valid() bool {
	return k == Dot || k == DistMult || k == ComplEx
}

// UsesRelations reports whether k has per-relation parameters (false for Dot).
func (k Kind) UsesRelations() bool {
	return k == DistMult || k == ComplEx
}

// CheckDim reports whether d is a usable embedding dimension for k: d must be
// positive, and even for ComplEx (first half real, second half imaginary
// parts). It also rejects an unknown kind.
func (k Kind) CheckDim(d int) error {
	if !k.Valid() {
		return fmt.Errorf("model: unknown score function %q (choices: %q, %q, %q)", string(k), Dot, DistMult, ComplEx)
	}
	if d <= 0 {
		return fmt.Errorf("model: embedding dimension %d must be positive", d)
	}
	if k == ComplEx && d%2 != 0 {
		return fmt.Errorf("model: %s needs an even embedding dimension (real and imaginary halves), got %d", k, d)
	}
	return nil
}

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

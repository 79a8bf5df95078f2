// Package workload is the vocabulary the simulator and every engine share
// for what is trained: the score functions, parsed one way everywhere, and
// the peak device memory of a batch of a given shape (EstimateBatch).
package workload

import (
	"fmt"
	"strings"
)

// Model names a score function (PyTorch-BigGraph / Marius definitions).
type Model string

// The score functions.
const (
	// Dot scores an edge as <s, d>; it has no relation parameters.
	Dot Model = "dot"
	// DistMult scores an edge as Σ s_k r_k d_k.
	DistMult Model = "distmult"
	// ComplEx scores an edge as Re(Σ s_k r_k conj(d_k)) with vectors of even
	// length d laid out as [real parts (d/2) | imaginary parts (d/2)].
	ComplEx Model = "complex"
)

// Models lists the score functions in a stable order.
var Models = []Model{Dot, DistMult, ComplEx}

// ParseModel returns the named score function (case-insensitive, surrounding
// space ignored: "ComplEx" and "complex" name the same one).
func ParseModel(s string) (Model, error) {
	m := Model(strings.ToLower(strings.TrimSpace(s)))
	if m.Valid() {
		return m, nil
	}
	return "", fmt.Errorf("unknown model %q (want %q, %q or %q)", s, Dot, DistMult, ComplEx)
}

// Valid reports whether m is one of the score functions.
func (m Model) Valid() bool { return m == Dot || m == DistMult || m == ComplEx }

// UsesRelations reports whether m has per-relation parameters (not Dot).
func (m Model) UsesRelations() bool { return m == DistMult || m == ComplEx }

// CheckDim reports whether d is a usable embedding dimension for m: d must
// be positive, and even for ComplEx (first half real, second half imaginary
// parts). It also rejects an unknown model.
func (m Model) CheckDim(d int) error {
	if !m.Valid() {
		return fmt.Errorf("unknown model %q (want %q, %q or %q)", string(m), Dot, DistMult, ComplEx)
	}
	if d <= 0 {
		return fmt.Errorf("embedding dimension %d must be positive", d)
	}
	if m == ComplEx && d%2 != 0 {
		return fmt.Errorf("%s needs an even embedding dimension (real and imaginary halves), got %d", m, d)
	}
	return nil
}

// CostFactor is the model's arithmetic per dimension relative to Dot:
// ComplEx multiplies pairs of reals as complex numbers (four real products
// per pair, two per real coordinate); DistMult adds one element-wise
// product to Dot's, which is small beside the gather cost.
func (m Model) CostFactor() float64 {
	if m == ComplEx {
		return 2
	}
	return 1
}

package model

import (
	"math"

	"github.com/tierflow/tierflow/workload"
)

// regularize adds the objective's penalty on the chunk's positive edges to
// gS, gR and gD and returns it: for each edge i, λ·(P(s_i) + P(d_i) +
// P(r_i)) with λ = o.RegCoef (every occurrence counts; the negatives are
// not penalised). S and D are n×d; R and gR are n rows of k.RelWidth(d)
// (nil without relation parameters).
//
//	l2: P(v) = Σ_j v_j²
//	n3: P(v) = Σ_j |v_j|³
//
// For the complex models (k.Complex()) n3's |v_j| is the modulus of each
// (re, im) pair of the entity rows ([re | im] halves), and of each
// complex_diagonal operator's parameters (ComplEx's relation row, each
// half of a complex_diagonal pair's), as PyTorch-BigGraph's N3 on
// complex_diagonal; every other relation row (a PBG pair's two operators,
// linear and affine included) is penalised elementwise. RotatE's phases
// are not penalised. l2 is the same sum either way (|z|² = re² + im²). It
// is the one place the penalty is written, and does not allocate.
func regularize(k workload.Model, o *workload.Objective, d int, S, R, D []float32, n int, gS, gR, gD []float32) float64 {
	reg := o.Reg()
	switch {
	case reg != workload.RegL2 && reg != workload.RegN3 && reg != workload.RegNone:
		return math.NaN() // an unknown regularizer (Objective.Validate refuses it)
	case reg == workload.RegNone || n <= 0 || d <= 0:
		return 0
	}
	lam := float32(o.RegCoef)
	cplx := reg == workload.RegN3 && k.Complex()
	pen := regRows(reg, cplx, lam, d, S[:n*d], gS[:n*d])
	pen += regRows(reg, cplx, lam, d, D[:n*d], gD[:n*d])
	op := k.Operator()
	if w := k.RelWidth(d); w > 0 && op != workload.OpRotate {
		// complex_diagonal's parameters are d-wide [re | im] rows: one a
		// relation for ComplEx, two (g, h) for a pair.
		pen += regRows(reg, reg == workload.RegN3 && op == workload.OpComplexDiagonal, lam, d, R[:n*w], gR[:n*w])
	}
	return float64(lam) * pen
}

// regRows adds the gradient of λ·P over x (rows of width d) into g and
// returns Σ P (without λ). With cplx each row is d/2 complex numbers
// [re | im] and n3 takes their moduli. Each row's sum is taken in float32
// (two partial sums) and the rows' in float64.
func regRows(reg workload.Regularizer, cplx bool, lam float32, d int, x, g []float32) float64 {
	g = g[:len(x)]
	var pen float64
	for o := 0; o+d <= len(x); o += d {
		r, gr := x[o:o+d], g[o:o+d]
		var s0, s1 float32
		switch {
		case reg == workload.RegL2:
			c := 2 * lam
			gr = gr[:len(r)]
			j := 0
			for ; j+1 < len(r); j += 2 {
				a, b := r[j], r[j+1]
				s0 += a * a
				s1 += b * b
				gr[j] += c * a
				gr[j+1] += c * b
			}
			if j < len(r) {
				s0 += r[j] * r[j]
				gr[j] += c * r[j]
			}
		case reg == workload.RegN3 && !cplx:
			c := 3 * lam
			gr = gr[:len(r)]
			j := 0
			for ; j+1 < len(r); j += 2 {
				a, b := r[j], r[j+1]
				aa := math.Float32frombits(math.Float32bits(a) &^ (1 << 31))
				ab := math.Float32frombits(math.Float32bits(b) &^ (1 << 31))
				s0 += aa * aa * aa
				s1 += ab * ab * ab
				gr[j] += c * aa * a
				gr[j+1] += c * ab * b
			}
			if j < len(r) {
				a := r[j]
				aa := math.Float32frombits(math.Float32bits(a) &^ (1 << 31))
				s0 += aa * aa * aa
				gr[j] += c * aa * a
			}
		case reg == workload.RegN3:
			// P = Σ_k |z_k|³, dP/dre_k = 3|z_k|·re_k, dP/dim_k = 3|z_k|·im_k.
			c := 3 * lam
			h := d / 2
			re, im := r[:h], r[h:d]
			gre, gim := gr[:h], gr[h:d]
			im, gre, gim = im[:len(re)], gre[:len(re)], gim[:len(re)]
			for j, a := range re {
				b := im[j]
				r2 := a*a + b*b
				m := float32(math.Sqrt(float64(r2)))
				s0 += r2 * m
				cm := c * m
				gre[j] += cm * a
				gim[j] += cm * b
			}
		}
		pen += float64(s0) + float64(s1)
	}
	return pen
}

package model

import (
	"math"

	"github.com/tierflow/tierflow/workload"
)

// The comparators. dot, cos, l2 and squared_l2 are computed from the
// product Q·Nᵀ plus the rows' squared norms (the GEMM path); l1 and
// modulus_l1 by a pairwise kernel (pairwise.go).

const (
	// distClamp is the least squared distance l2 and modulus_l1 take the
	// square root of (PBG's clamp); below it the gradient is 0.
	distClamp = 1e-30
	// normClamp is the least norm cos divides by.
	normClamp = 1e-30
)

// normSq is ‖x‖² by the active level's dot product (deterministic per
// level and length): the one norm of the GEMM comparators.
func normSq(x []float32) float32 { return vecDot(x, x) }

// invNorm is 1/max(‖x‖, 1e-30) from ‖x‖², and whether the norm was above
// the clamp (the gradient flows through the norm only then).
func invNorm(n2 float32) (float32, bool) {
	nv := sqrt32(n2)
	if nv > normClamp {
		return 1 / nv, true
	}
	return 1 / normClamp, false
}

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// gemmScore is a GEMM comparator's score of a pair from their product u
// and squared norms qn, xn (ia, ib: their inverse norms, for cos).
func gemmScore(cmp workload.Comparator, u, qn, xn, ia, ib float32) float32 {
	switch cmp {
	case workload.CmpCos:
		return u * ia * ib
	case workload.CmpSquaredL2:
		return 2*u - qn - xn
	case workload.CmpL2:
		return -sqrt32(max(qn-2*u+xn, distClamp))
	}
	return u
}

// chunkPrep computes what both sides share: the negatives' squared norms
// and inverse norms for the GEMM comparators, Nᵀ at Generic.
func (sc *Scratch) chunkPrep(cmp workload.Comparator, d, m int, N []float32) {
	gemmCmp := cmp == workload.CmpDot || cmp == workload.CmpCos || cmp == workload.CmpL2 || cmp == workload.CmpSquaredL2
	if gemmCmp && level == Generic {
		sc.nt = grow(sc.nt, d*m)
		transpose(m, d, N, sc.nt)
	}
	if cmp == workload.CmpCos || cmp == workload.CmpL2 || cmp == workload.CmpSquaredL2 {
		sc.nn = grow(sc.nn, m)
		sc.ninv = grow(sc.ninv, m)
		sc.ncl = grow(sc.ncl, m)
		for k := 0; k < m; k++ {
			n2 := normSq(N[k*d : k*d+d])
			sc.nn[k] = n2
			inv, ok := invNorm(n2)
			sc.ninv[k] = inv
			sc.ncl[k] = 0
			if ok {
				sc.ncl[k] = inv * inv
			}
		}
	}
}

// productNT sets t (n×m) = Q·Nᵀ.
func (sc *Scratch) productNT(d, n, m int, Q, N, t []float32) {
	clear(t)
	if level == Generic {
		sgemmNTGo(n, m, d, Q, N, t)
		return
	}
	gemm(n, m, d, mat{Q, d, 1}, mat{N, 1, d}, t, m, &sc.pk)
}

// backProducts adds C·N into gQ and Cᵀ·Q into gN (C n×m).
func (sc *Scratch) backProducts(d, n, m int, C, Q, N, gQ, gN []float32) {
	if m == 0 {
		return
	}
	if level == Generic {
		sc.gt = grow(sc.gt, m*n)
		sc.qt = grow(sc.qt, d*n)
		sgemmNTGo(n, d, m, C, sc.nt, gQ)
		transpose(n, m, C, sc.gt)
		transpose(n, d, Q, sc.qt)
		sgemmNTGo(m, d, n, sc.gt, sc.qt, gN)
		return
	}
	gemm(n, d, m, mat{C, m, 1}, mat{N, d, 1}, gQ, d, &sc.pk)
	gemm(m, d, n, mat{C, 1, m}, mat{Q, d, 1}, gN, d, &sc.pk)
}

// sideGEMM is one corrupted side under cos, l2 or squared_l2: queries Q
// (n×d), positive partners X (n×d), shared negatives N (m×d; chunkPrep
// ran). The scores come from T = Q·Nᵀ and the norms; the backward is the
// same two products as the dot side's with the comparator's factor per
// entry, C_ik, plus a multiple of each row:
//
//	gQ_i += Σ_k C_ik N_k − ρ_i Q_i      gN_k += Σ_i C_ik Q_i − κ_k N_k
//
// cos (s = u·a·b, a = 1/‖q‖, b = 1/‖n‖): C = G·a·b, ρ_i = a²·Σ_k G s,
// κ_k = b²·Σ_i G s; squared_l2 (s = 2u − ‖q‖² − ‖n‖²): C = 2G, ρ, κ its row
// and column sums; l2 (s = −δ): C = G/δ (0 where clamped), ρ, κ its sums.
func sideGEMM(cmp workload.Comparator, d, n, m int, Q, X, N, gQ, gX, gN []float32, sc *Scratch) float64 {
	sc.qn = grow(sc.qn, n)
	sc.rc = grow(sc.rc, n)
	sc.cc = grow(sc.cc, m)
	sc.f = grow(sc.f, m)
	pos, gp, qn, rc, cc, f := sc.pos[:n], sc.gp[:n], sc.qn[:n], sc.rc[:n], sc.cc[:m], sc.f[:m]
	nn, ninv, ncl := sc.nn[:m], sc.ninv[:m], sc.ncl[:m]
	for i := range pos {
		q, x := Q[i*d:i*d+d], X[i*d:i*d+d]
		qn[i] = normSq(q)
		xn := normSq(x)
		ia, _ := invNorm(qn[i])
		ib, _ := invNorm(xn)
		pos[i] = gemmScore(cmp, vecDot(q, x), qn[i], xn, ia, ib)
	}
	t := sc.t[:n*m]
	sc.productNT(d, n, m, Q, N, t)
	clear(cc)
	var loss float64
	if cmp == workload.CmpSquaredL2 {
		for k := range f {
			f[k] = 2 // dL/dscore → the factor of the products: 2G
		}
	}
	for i, p := range pos {
		row := t[i*m : i*m+m]
		q2 := qn[i]
		ia, aok := invNorm(q2)
		generic := level == Generic
		switch {
		case cmp == workload.CmpCos && generic:
			cosFwdGo(row, ninv, f, ia)
		case cmp == workload.CmpCos:
			cosFwdRow(row, ninv, f, ia)
		case cmp == workload.CmpSquaredL2 && generic:
			sqFwdGo(row, nn, q2)
		case cmp == workload.CmpSquaredL2:
			sqFwdRow(row, nn, q2)
		case generic:
			l2FwdGo(row, nn, f, q2)
		default:
			l2FwdRow(row, nn, f, q2)
		}
		l, g := rowLoss(&sc.obj, p, row)
		gp[i] = g
		loss += l
		var rs float32
		switch {
		case cmp == workload.CmpCos && generic:
			rs = cosBackGo(row, f, ninv, cc, ia)
		case cmp == workload.CmpCos:
			rs = cosBackRow(row, f, ninv, cc, ia)
		case generic:
			rs = mulBackGo(row, f, cc)
		default:
			rs = mulBackRow(row, f, cc)
		}
		if cmp == workload.CmpCos {
			if aok {
				rs *= ia * ia
			} else {
				rs = 0
			}
		}
		rc[i] = rs
	}
	if cmp == workload.CmpCos {
		for k := range cc {
			cc[k] *= ncl[k]
		}
	}
	// The positive term.
	for i, g := range gp {
		if g != 0 {
			gemmPairGrad(cmp, g, Q[i*d:i*d+d], X[i*d:i*d+d], qn[i], gQ[i*d:i*d+d], gX[i*d:i*d+d])
		}
	}
	if m == 0 {
		return loss
	}
	sc.backProducts(d, n, m, t, Q, N, gQ, gN)
	for i, r := range rc {
		if r != 0 {
			vecAxpy(-r, Q[i*d:i*d+d], gQ[i*d:i*d+d])
		}
	}
	for k, c := range cc {
		if c != 0 {
			vecAxpy(-c, N[k*d:k*d+d], gN[k*d:k*d+d])
		}
	}
	return loss
}

// gemmPairGrad adds g·∂C(q,x)/∂q into gq and g·∂C(q,x)/∂x into gx for a
// GEMM comparator other than dot (qn = ‖q‖²).
func gemmPairGrad(cmp workload.Comparator, g float32, q, x []float32, qn float32, gq, gx []float32) {
	x, gq, gx = x[:len(q)], gq[:len(q)], gx[:len(q)]
	switch cmp {
	case workload.CmpCos:
		xn := normSq(x)
		ia, aok := invNorm(qn)
		ib, bok := invNorm(xn)
		s := vecDot(q, x) * ia * ib
		ab := g * ia * ib
		ca, cb := float32(0), float32(0)
		if aok {
			ca = g * s * ia * ia
		}
		if bok {
			cb = g * s * ib * ib
		}
		for j, v := range q {
			w := x[j]
			gq[j] += ab*w - ca*v
			gx[j] += ab*v - cb*w
		}
	case workload.CmpSquaredL2:
		g2 := 2 * g
		for j, v := range q {
			e := g2 * (x[j] - v)
			gq[j] += e
			gx[j] -= e
		}
	case workload.CmpL2:
		xn := normSq(x)
		D2 := qn - 2*vecDot(q, x) + xn
		if D2 <= distClamp {
			return
		}
		c := g / sqrt32(D2)
		for j, v := range q {
			e := c * (x[j] - v)
			gq[j] += e
			gx[j] -= e
		}
	}
}

// Norms writes into out (length m, returned) what comparator cmp needs of
// each of the m candidate rows C (m×d) besides their products with a
// query: the squared norm for l2 and squared_l2, the inverse norm
// 1/max(‖c‖, 1e−30) for cos; it returns nil for the others. Give Scores
// the result to score many blocks of queries against the same
// candidates.
func Norms(cmp workload.Comparator, d, m int, C, out []float32) []float32 {
	if !NeedsNorms(cmp) {
		return nil
	}
	out = out[:m]
	for j := range out {
		out[j] = candNorm(cmp, C[j*d:j*d+d])
	}
	return out
}

// candNorm is Norms of one candidate row.
func candNorm(cmp workload.Comparator, c []float32) float32 {
	n2 := normSq(c)
	if cmp == workload.CmpCos {
		ib, _ := invNorm(n2)
		return ib
	}
	return n2
}

// NeedsNorms reports whether comparator cmp scores from products and the
// rows' squared norms (cos, l2, squared_l2), so that Norms gives Scores
// something to reuse.
func NeedsNorms(cmp workload.Comparator) bool {
	switch cmp {
	case workload.CmpCos, workload.CmpL2, workload.CmpSquaredL2:
		return true
	}
	return false
}

// Scores sets out[i·m + j] (out b×m, overwritten) to the score C(q_i, c_j)
// of each of the b query rows Q (b×d, from Query) against each of the m
// candidate rows C (m×d) under comparator cmp: dot by the product Q·Cᵀ
// (SgemmNT), cos, l2 and squared_l2 by that product and the rows' norms
// (cn: Norms of C, or nil to compute them here), l1 and modulus_l1
// by the pairwise kernel. Every score is the same arithmetic wherever it
// lies in the block, so a true edge scored alone (b = m = 1) and a
// candidate identical to its true node tie exactly. An unknown comparator
// gives NaNs.
func Scores(cmp workload.Comparator, d, b, m int, Q, C, cn, out []float32) {
	if b <= 0 || m <= 0 {
		return
	}
	out = out[:b*m]
	switch cmp {
	case workload.CmpL1, workload.CmpModulusL1:
		for i := 0; i < b; i++ {
			pairScores(cmp, d, m, Q[i*d:i*d+d], C, out[i*m:i*m+m])
		}
		return
	case workload.CmpDot, workload.CmpCos, workload.CmpL2, workload.CmpSquaredL2:
	default:
		nan := nan32()
		for i := range out {
			out[i] = nan
		}
		return
	}
	clear(out)
	SgemmNT(b, m, d, Q, C, out)
	if cmp == workload.CmpDot {
		return
	}
	for i := 0; i < b; i++ {
		qn := normSq(Q[i*d : i*d+d])
		ia, _ := invNorm(qn)
		row := out[i*m : i*m+m]
		for j, u := range row {
			var v float32
			if cn != nil {
				v = cn[j]
			} else {
				v = candNorm(cmp, C[j*d:j*d+d])
			}
			if cmp == workload.CmpCos {
				row[j] = gemmScore(cmp, u, qn, 0, ia, v)
			} else {
				row[j] = gemmScore(cmp, u, qn, v, ia, 0)
			}
		}
	}
}

// rankDot is the dot product of the pairwise scoring (RankCounts, Score):
// the SIMD one at a SIMD level, one accumulator in index order at Generic.
func rankDot(q, x []float32) float32 {
	if level == Generic {
		return seqDot(q, x)
	}
	return vecDot(q, x)
}

// pairCmp scores one query q against one candidate x under cmp with the
// pairwise arithmetic of RankCounts (qn = normSq(q), used by cos, l2 and
// squared_l2): every candidate goes through the same operations, so equal
// candidates tie.
func pairCmp(cmp workload.Comparator, d int, q, x []float32, qn float32) float32 {
	switch cmp {
	case workload.CmpDot:
		return rankDot(q[:d], x)
	case workload.CmpCos, workload.CmpL2, workload.CmpSquaredL2:
		x = x[:d]
		xn := normSq(x)
		var ia, ib float32
		if cmp == workload.CmpCos {
			ia, _ = invNorm(qn)
			ib, _ = invNorm(xn)
		}
		return gemmScore(cmp, rankDot(q[:d], x), qn, xn, ia, ib)
	case workload.CmpL1, workload.CmpModulusL1:
		return pairScore(cmp, d, q, x)
	}
	return nan32()
}

package cuda

import "math"

// The kernels of train.cu for every model and objective, transcribed (see
// emu.go): the operators, comparators, losses and regularisers of
// chunk_prep, pair_scores, pair_grads, chunk_softmax (rowLoss) and
// chunk_back (edgeBack). A warp's lanes are one loop over the row, so the
// warp reductions are plain sums.

// The kernels' operator, comparator and loss numbers (OP_*, CMP_*,
// LOSS_* of train.cu; train.go's opCodes, cmpCodes, lossCodes).
const (
	opNone, opDiag, opComplex, opTrans, opLinear, opAffine, opRotate = 0, 1, 2, 3, 4, 5, 6
	cmpDot, cmpCos, cmpL2, cmpSqL2, cmpL1, cmpMod                    = 0, 1, 2, 3, 4, 5
	lossSoftmax, lossRanking, lossLogistic                           = 0, 1, 2
	tiny                                                             = float32(1e-30)
)

func emuOp(model int) int    { return model & 7 }
func emuCmp(model int) int   { return model >> 3 & 7 }
func emuPair(model int) bool { return model>>6&1 != 0 }
func emuNormed(cmp int) bool { return cmp == cmpCos || cmp == cmpL2 || cmp == cmpSqL2 }

func emuOpWidth(op, d int) int {
	switch op {
	case opDiag, opTrans, opComplex:
		return d
	case opLinear:
		return d * d
	case opAffine:
		return d*d + d
	case opRotate:
		return d / 2
	}
	return 0
}

func emuRelWidth(model, d int) int {
	w := emuOpWidth(emuOp(model), d)
	if emuPair(model) {
		w *= 2
	}
	return w
}

func emuDot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func sqrtf(x float32) float32 { return float32(math.Sqrt(float64(x))) }

func signf(v float32) float32 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// emuRot is a complex operator's multiplier of coordinate c.
func emuRot(op int, adj bool, r []float32, c, h int) (float32, float32) {
	var cr, ci float32
	if op == opComplex {
		cr, ci = r[c], r[c+h]
	} else {
		cr, ci = float32(math.Cos(float64(r[c]))), float32(math.Sin(float64(r[c])))
	}
	if adj {
		ci = -ci
	}
	return cr, ci
}

// emuOpForward is opForward: q = op(x).
func emuOpForward(op int, adj bool, d int, x, r, q []float32) {
	h := d / 2
	switch op {
	case opNone:
		copy(q, x[:d])
	case opDiag:
		for j := range d {
			q[j] = x[j] * r[j]
		}
	case opTrans:
		for j := range d {
			if adj {
				q[j] = x[j] - r[j]
			} else {
				q[j] = x[j] + r[j]
			}
		}
	case opLinear, opAffine:
		for j := range d {
			var v float32
			if op == opAffine {
				v = r[d*d+j]
			}
			for k := range d {
				v += r[j*d+k] * x[k]
			}
			q[j] = v
		}
	case opComplex, opRotate:
		for c := range h {
			cr, ci := emuRot(op, adj, r, c, h)
			xr, xi := x[c], x[c+h]
			q[c], q[c+h] = cr*xr-ci*xi, cr*xi+ci*xr
		}
	}
}

type emuSums struct{ dot, qq, xx, dist float32 }

func emuCmpSums(cmp, d int, q, x []float32) emuSums {
	var s emuSums
	if cmp == cmpMod {
		h := d / 2
		for c := range h {
			a, b := q[c]-x[c], q[c+h]-x[c+h]
			s.dist += sqrtf(max(a*a+b*b, tiny))
		}
		return s
	}
	for j := range d {
		a, b := q[j], x[j]
		e := a - b
		s.dot += a * b
		s.qq += a * a
		s.xx += b * b
		if cmp == cmpL1 {
			s.dist += float32(math.Abs(float64(e)))
		} else {
			s.dist += e * e
		}
	}
	return s
}

func invNorm(sq float32) float32 { return 1 / max(sqrtf(sq), tiny) }

// invDist is 1/√D2, or 0 where D2 is clamped (no gradient).
func invDist(D2 float32) float32 {
	if D2 > tiny {
		return 1 / sqrtf(D2)
	}
	return 0
}

func emuCmpScore(cmp int, s emuSums) float32 {
	switch cmp {
	case cmpCos:
		return s.dot * invNorm(s.qq) * invNorm(s.xx)
	case cmpL2:
		return -sqrtf(max(s.dist, tiny))
	case cmpSqL2, cmpL1, cmpMod:
		return -s.dist
	}
	return s.dot
}

// emuCmpGrad is cmpGrad: element j's ∂C/∂q and ∂C/∂x.
func emuCmpGrad(cmp int, s emuSums, q, x float32) (float32, float32) {
	switch cmp {
	case cmpCos:
		iq, ix := invNorm(s.qq), invNorm(s.xx)
		c := s.dot * iq * ix
		gq, gx := x*iq*ix, q*iq*ix
		if sqrtf(s.qq) > tiny { // a clamped norm passes no gradient
			gq -= c * q * iq * iq
		}
		if sqrtf(s.xx) > tiny {
			gx -= c * x * ix * ix
		}
		return gq, gx
	case cmpL2:
		var inv float32
		if s.dist > tiny {
			inv = 1 / sqrtf(s.dist)
		}
		return -(q - x) * inv, (q - x) * inv
	case cmpSqL2:
		return -2 * (q - x), 2 * (q - x)
	case cmpL1:
		return -signf(q - x), signf(q - x)
	}
	return x, q
}

func softplusf(x float32) float32 {
	return max(x, 0) + float32(math.Log1p(math.Exp(-math.Abs(float64(x)))))
}

func sigmoidf(x float32) float32 { return 1 / (1 + expf(-x)) }

// emuRowLoss is rowLoss: one query row's scores, loss, dL/dp and the
// products' G' with the normed comparators' coefficients.
func emuRowLoss(lossCode, cmp int, margin, adv, p float32, row []float32, qq float32, nn, bn, gp, aq []float32, loss []float64) {
	iq, iq2 := invNorm(qq), float32(0)
	if sqrtf(qq) > tiny {
		iq2 = iq * iq
	}
	clamped := sqrtf(tiny)
	m := len(row)
	if emuNormed(cmp) {
		for x, t := range row {
			if cmp == cmpCos {
				row[x] = t * iq * invNorm(nn[x])
			} else {
				D := qq + nn[x] - 2*t
				if cmp == cmpL2 {
					row[x] = -sqrtf(max(D, tiny))
				} else {
					row[x] = -D
				}
			}
		}
	}
	mx, z := float32(-3.4e38), float32(0)
	adversarial := adv > 0 && lossCode != lossSoftmax
	if lossCode == lossSoftmax || adversarial {
		a := adv
		if lossCode == lossSoftmax {
			a = 1
		}
		for _, v := range row {
			mx = max(mx, a*v)
		}
		if lossCode == lossSoftmax {
			mx = max(mx, p)
		}
		for _, v := range row {
			z += expf(a*v - mx)
		}
		if lossCode == lossSoftmax {
			z += expf(p - mx)
		}
	}
	var l, gsum, ap float32
	for x, n := range row {
		var G float32
		switch lossCode {
		case lossRanking:
			f := float32(1)
			if adversarial {
				f = expf(adv*n-mx) / z * float32(m)
			}
			if v := margin - p + n; v > 0 {
				G = f
				l += f * v
			}
		case lossLogistic:
			f := 1 / float32(m)
			if adversarial {
				f = expf(adv*n-mx) / z
			}
			G = f * sigmoidf(n+margin)
			l += f * softplusf(n+margin)
		default:
			G = expf(n-mx) / z
		}
		gsum += G
		Gp := G
		switch cmp {
		case cmpCos:
			in := invNorm(nn[x])
			Gp = G * iq * in
			ap -= G * n * iq2
			if sqrtf(nn[x]) > tiny {
				bn[x] += -G * n * in * in
			}
		case cmpL2:
			Gp = 0
			if -n > clamped {
				Gp = G / -n
			}
			ap -= Gp
			bn[x] += -Gp
		case cmpSqL2:
			Gp = 2 * G
			ap -= Gp
			bn[x] += -Gp
		}
		row[x] = Gp
	}
	rl := float64(l)
	var g float32
	switch lossCode {
	case lossRanking:
		g = -gsum
	case lossLogistic:
		g = -sigmoidf(-(p + margin))
		rl += float64(softplusf(-(p + margin)))
	default:
		g = expf(p-mx)/z - 1
		rl = float64(mx) + math.Log(float64(z)) - float64(p)
	}
	gp[0], aq[0] = g, ap
	loss[0] += rl
}

// emuOpBack is opBack: gq of q = op(x) added into gx and gr (gr nil for
// opNone).
func emuOpBack(op int, adj bool, d int, x, r, gq, gx, gr []float32) {
	h := d / 2
	switch op {
	case opNone:
		for j := range d {
			gx[j] += gq[j]
		}
	case opDiag:
		for j := range d {
			gx[j] += gq[j] * r[j]
			gr[j] += gq[j] * x[j]
		}
	case opTrans:
		for j := range d {
			gx[j] += gq[j]
			if adj {
				gr[j] -= gq[j]
			} else {
				gr[j] += gq[j]
			}
		}
	case opLinear, opAffine:
		for k := range d {
			var v float32
			for j := range d {
				v += r[j*d+k] * gq[j]
			}
			gx[k] += v
		}
		for j := range d {
			for k := range d {
				gr[j*d+k] += gq[j] * x[k]
			}
		}
		if op == opAffine {
			for j := range d {
				gr[d*d+j] += gq[j]
			}
		}
	case opComplex, opRotate:
		for c := range h {
			cr, ci := emuRot(op, adj, r, c, h)
			xr, xi, ar, ai := x[c], x[c+h], gq[c], gq[c+h]
			gx[c] += ar*cr + ai*ci
			gx[c+h] += -ar*ci + ai*cr
			gcr, gci := ar*xr+ai*xi, -ar*xi+ai*xr
			sign := float32(1)
			if adj {
				sign = -1
			}
			if op == opComplex {
				gr[c] += gcr
				gr[c+h] += sign * gci
			} else {
				gr[c] += sign * (-gcr*ci + gci*cr)
			}
		}
	}
}

// emuRegRow is regRow: lam·∂P(v)/∂v added into gv, P(v) returned.
func emuRegRow(reg int, pairs bool, lam float32, v, gv []float32) float32 {
	var P float32
	if reg == 2 && pairs {
		h := len(v) / 2
		for c := range h {
			a, b := v[c], v[c+h]
			mod := sqrtf(a*a + b*b)
			P += mod * mod * mod
			gv[c] += lam * 3 * mod * a
			gv[c+h] += lam * 3 * mod * b
		}
		return P
	}
	for j, a := range v {
		abs := float32(math.Abs(float64(a)))
		if reg == 2 {
			P += abs * a * a
			gv[j] += lam * 3 * abs * a
		} else {
			P += a * a
			gv[j] += lam * 2 * a
		}
	}
	return P
}

// emuEdgeBack is edgeBack: one edge's gradients for every model but the
// fused three (and those with a regulariser). dR is the relation row's
// accumulator (rule sum) or grr (rule each), nil without relations.
func emuEdgeBack(model, rule, nc, d int, s, t, rel []float32, rr int32, q int64, gQ, gp, Q, aq, accS, accT, accR, grr []float32,
	reg int, lam float32, loss []float64) {
	op, cmp, pair := emuOp(model), emuCmp(model), emuPair(model)
	rw, w0 := emuRelWidth(model, d), emuOpWidth(op, d)
	hasRel := op != opNone
	D, NC := int64(d), int64(nc)
	rg := s
	if hasRel {
		rg = rel[int64(rr)*int64(rw) : int64(rr+1)*int64(rw)]
	}
	rh := rg
	if pair {
		rh = rg[w0:]
	}
	dR := accR
	if rule == ruleEach {
		dR = grr
		clear(grr)
	}
	q1, q2 := Q[q*D:(q+1)*D], Q[(q+NC)*D:(q+NC+1)*D]
	g1, g2 := gQ[q*D:(q+1)*D], gQ[(q+NC)*D:(q+NC+1)*D]
	gp1, gp2 := gp[q], gp[q+NC]
	var a1, a2 float32
	if emuNormed(cmp) {
		a1, a2 = aq[q], aq[q+NC]
	}
	S1, S2 := emuCmpSums(cmp, d, q1, t), emuCmpSums(cmp, d, q2, s)
	if cmp == cmpMod {
		h := d / 2
		for c := range h {
			ar, ai, br, bi := q1[c]-t[c], q1[c+h]-t[c+h], q2[c]-s[c], q2[c+h]-s[c+h]
			ia, ib := invDist(ar*ar+ai*ai), invDist(br*br+bi*bi)
			q1r, q1i := g1[c]-gp1*ar*ia, g1[c+h]-gp1*ai*ia
			q2r, q2i := g2[c]-gp2*br*ib, g2[c+h]-gp2*bi*ib
			g1[c], g1[c+h] = gp2*br*ib, gp2*bi*ib
			g2[c], g2[c+h] = gp1*ar*ia, gp1*ai*ia
			q1[c], q1[c+h], q2[c], q2[c+h] = q1r, q1i, q2r, q2i
		}
	} else {
		for x := range d {
			cq1, cx1 := emuCmpGrad(cmp, S1, q1[x], t[x])
			cq2, cx2 := emuCmpGrad(cmp, S2, q2[x], s[x])
			v1, v2 := g1[x]+a1*q1[x]+gp1*cq1, g2[x]+a2*q2[x]+gp2*cq2
			g1[x], g2[x] = gp2*cx2, gp1*cx1
			q1[x], q2[x] = v1, v2
		}
	}
	var dRg, dRh []float32
	if hasRel {
		dRg, dRh = dR, dR
		if pair {
			dRh = dR[w0:]
		}
	}
	emuOpBack(op, false, d, s, rg, q1, g1, dRg)
	emuOpBack(op, !pair, d, t, rh, q2, g2, dRh)
	if reg != 0 {
		cx := op == opComplex || op == opRotate
		P := emuRegRow(reg, cx, lam, s, g1) + emuRegRow(reg, cx, lam, t, g2)
		switch {
		case hasRel && reg == 2 && op == opComplex: // n3 on each complex_diagonal operator's moduli
			P += emuRegRow(reg, true, lam, rg[:d], dR[:d])
			if pair {
				P += emuRegRow(reg, true, lam, rg[d:2*d], dR[d:2*d])
			}
		case hasRel && op != opRotate:
			P += emuRegRow(reg, false, lam, rg[:rw], dR)
		}
		loss[q%lossParts] += float64(lam) * float64(P)
	}
	if rule == ruleSum {
		for x := range d {
			accS[x] += g1[x]
			accT[x] += g2[x]
		}
	}
}

// emuPairScores is pair_scores: T = −Σ|q − n| or −Σ_c |q_c − n_c|.
func emuPairScores(a *args, grid [3]int) {
	cmp, rows, m, d := a.int(), a.int(), a.int(), a.int()
	Q, N, T := a.floats(), a.floats(), a.floats()
	h := d / 2
	for z := 0; z < grid[2]; z++ {
		Qz, Nz, Tz := Q[z*rows*d:], N[z*m*d:], T[z*rows*m:]
		for i := range rows {
			for k := range m {
				q, n := Qz[i*d:(i+1)*d], Nz[k*d:(k+1)*d]
				var acc float32
				if cmp == cmpMod {
					for c := range h {
						x, y := q[c]-n[c], q[c+h]-n[c+h]
						acc += sqrtf(max(x*x+y*y, tiny))
					}
				} else {
					for j := range d {
						acc += float32(math.Abs(float64(q[j] - n[j])))
					}
				}
				Tz[i*m+k] = -acc
			}
		}
	}
}

// emuPairGrads is pair_grads: gQ and gN of the pairwise comparators.
func emuPairGrads(a *args, threads int64) {
	cmp, g, rows, m, d := a.int(), a.int(), a.int(), a.int(), a.int()
	Q, N, G, gQ, gN := a.floats(), a.floats(), a.floats(), a.floats(), a.floats()
	mod := cmp == cmpMod
	h, K := d/2, d
	if mod {
		K = h
	}
	nq, nn := int64(g*rows*K), int64(g*m*K)
	for t := int64(0); t < threads && t < nq+nn; t++ {
		qside := t < nq
		u, per, other := t, rows, m
		if !qside {
			u, per, other = t-nq, m, rows
		}
		z, e, c := int(u/int64(per*K)), int(u/int64(K)%int64(per)), int(u%int64(K))
		Qz, Nz, Gz := Q[z*rows*d:], N[z*m*d:], G[z*rows*m:]
		var sr, si float32
		for o := range other {
			i, k := e, o
			if !qside {
				i, k = o, e
			}
			Gik := Gz[i*m+k]
			if Gik == 0 {
				continue
			}
			q, n := Qz[i*d:], Nz[k*d:]
			x := q[c] - n[c]
			if mod {
				y := q[c+h] - n[c+h]
				inv := invDist(x*x + y*y)
				sr += Gik * x * inv
				si += Gik * y * inv
			} else {
				sr += Gik * signf(x)
			}
		}
		var out []float32
		sign := float32(1)
		if qside {
			sign, out = -1, gQ[(z*rows+e)*d:]
		} else {
			out = gN[(z*m+e)*d:]
		}
		out[c] = sign * sr
		if mod {
			out[c+h] = sign * si
		}
	}
}

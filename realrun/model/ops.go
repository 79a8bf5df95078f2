package model

import (
	"math"

	"github.com/tierflow/tierflow/workload"
)

// The operators of the general ChunkGrad path: a query row is
// q_i = op(x_i; p_i), p_i the operator's parameters, which sit in the
// relation rows P at P[i*ps+off : i*ps+off+OperatorWidth(op, d)] (ps the
// relation row width, off 0 for a named model and for a PBG pair's
// left-hand operator g, OperatorWidth(op, d) for its right-hand one h).
// adj selects a named model's adjoint (source-side) form: translation
// x − r, rotate x·e^{−iθ}; it is ignored by the other operators (the
// named models with them take the old Dot/DistMult/ComplEx path).
//
// opForward overwrites Q (n×d); opBackward adds dL/dx into gX and dL/dp
// into gP given dL/dQ in gQ. rot holds each row's cos θ and sin θ
// ([cos (d/2) | sin (d/2)] per row, rotSetup) for the rotate operator.

// rotSetup writes cos θ and sin θ of each row's phases into rot (n×d).
func rotSetup(d, n int, P []float32, ps int, rot []float32) {
	h := d / 2
	for i := 0; i < n; i++ {
		th := P[i*ps : i*ps+h]
		c, s := rot[i*d:i*d+h], rot[i*d+h:i*d+2*h]
		c, s = c[:len(th)], s[:len(th)]
		for j, t := range th {
			sn, cs := math.Sincos(float64(t))
			c[j], s[j] = float32(cs), float32(sn)
		}
	}
}

func opForward(op workload.Operator, adj bool, d, n int, X, P []float32, ps, off int, rot, Q []float32) {
	switch op {
	case workload.OpNone:
		copy(Q[:n*d], X[:n*d])
	case workload.OpDiagonal:
		for i := 0; i < n; i++ {
			hadamard(X[i*d:i*d+d], P[i*ps+off:i*ps+off+d], Q[i*d:i*d+d])
		}
	case workload.OpTranslation:
		for i := 0; i < n; i++ {
			x, r, q := X[i*d:i*d+d], P[i*ps+off:i*ps+off+d], Q[i*d:i*d+d]
			r, q = r[:len(x)], q[:len(x)]
			if adj {
				for j, v := range x {
					q[j] = v - r[j]
				}
			} else {
				for j, v := range x {
					q[j] = v + r[j]
				}
			}
		}
	case workload.OpLinear, workload.OpAffine:
		for i := 0; i < n; i++ {
			x, q := X[i*d:i*d+d], Q[i*d:i*d+d]
			A := P[i*ps+off : i*ps+off+d*d]
			for j := range q {
				q[j] = vecDot(A[j*d:j*d+d], x)
			}
			if op == workload.OpAffine {
				b := P[i*ps+off+d*d : i*ps+off+d*d+d]
				b = b[:len(q)]
				for j := range q {
					q[j] += b[j]
				}
			}
		}
	case workload.OpComplexDiagonal:
		complexQ(d, n, X, P, ps, off, Q)
	case workload.OpRotate:
		h := d / 2
		for i := 0; i < n; i++ {
			o := i * d
			xre, xim := X[o:o+h], X[o+h:o+d]
			c, s := rot[o:o+h], rot[o+h:o+d]
			qre, qim := Q[o:o+h], Q[o+h:o+d]
			xim, c, s, qre, qim = xim[:len(xre)], c[:len(xre)], s[:len(xre)], qre[:len(xre)], qim[:len(xre)]
			if adj { // x·e^{−iθ}
				for j, a := range xre {
					b := xim[j]
					qre[j] = a*c[j] + b*s[j]
					qim[j] = b*c[j] - a*s[j]
				}
			} else {
				for j, a := range xre {
					b := xim[j]
					qre[j] = a*c[j] - b*s[j]
					qim[j] = a*s[j] + b*c[j]
				}
			}
		}
	}
}

func opBackward(op workload.Operator, adj bool, d, n int, X, P []float32, ps, off int, rot, Q, gQ, gX, gP []float32) {
	switch op {
	case workload.OpNone:
		for i := 0; i < n; i++ {
			vecAxpy(1, gQ[i*d:i*d+d], gX[i*d:i*d+d])
		}
	case workload.OpDiagonal:
		for i := 0; i < n; i++ {
			g := gQ[i*d : i*d+d]
			hadamardAcc(g, P[i*ps+off:i*ps+off+d], gX[i*d:i*d+d])
			hadamardAcc(g, X[i*d:i*d+d], gP[i*ps+off:i*ps+off+d])
		}
	case workload.OpTranslation:
		sign := float32(1)
		if adj {
			sign = -1
		}
		for i := 0; i < n; i++ {
			g := gQ[i*d : i*d+d]
			vecAxpy(1, g, gX[i*d:i*d+d])
			vecAxpy(sign, g, gP[i*ps+off:i*ps+off+d])
		}
	case workload.OpLinear, workload.OpAffine:
		for i := 0; i < n; i++ {
			x, g, gx := X[i*d:i*d+d], gQ[i*d:i*d+d], gX[i*d:i*d+d]
			A := P[i*ps+off : i*ps+off+d*d]
			gA := gP[i*ps+off : i*ps+off+d*d]
			for j, v := range g {
				if v == 0 {
					continue
				}
				vecAxpy(v, x, gA[j*d:j*d+d]) // dL/dA_jk = g_j x_k
				vecAxpy(v, A[j*d:j*d+d], gx) // dL/dx_k = Σ_j g_j A_jk
			}
			if op == workload.OpAffine {
				vecAxpy(1, g, gP[i*ps+off+d*d:i*ps+off+d*d+d])
			}
		}
	case workload.OpComplexDiagonal:
		complexQBack(d, n, X, P, ps, off, gQ, gX, gP)
	case workload.OpRotate:
		h := d / 2
		for i := 0; i < n; i++ {
			o, po := i*d, i*ps+off
			c, s := rot[o:o+h], rot[o+h:o+d]
			qre, qim := Q[o:o+h], Q[o+h:o+d]
			gre, gim := gQ[o:o+h], gQ[o+h:o+d]
			gxre, gxim := gX[o:o+h], gX[o+h:o+d]
			gth := gP[po : po+h]
			s, qre, qim, gre, gim = s[:len(c)], qre[:len(c)], qim[:len(c)], gre[:len(c)], gim[:len(c)]
			gxre, gxim, gth = gxre[:len(c)], gxim[:len(c)], gth[:len(c)]
			if adj { // q = x·e^{−iθ}: dq/dθ = −i·q
				for j, cs := range c {
					u, v, sn := gre[j], gim[j], s[j]
					gxre[j] += u*cs - v*sn
					gxim[j] += u*sn + v*cs
					gth[j] += u*qim[j] - v*qre[j]
				}
			} else { // q = x·e^{iθ}: dq/dθ = i·q
				for j, cs := range c {
					u, v, sn := gre[j], gim[j], s[j]
					gxre[j] += u*cs + v*sn
					gxim[j] += v*cs - u*sn
					gth[j] += v*qre[j] - u*qim[j]
				}
			}
		}
	}
}

// queryRow writes into q (length d) the query of one edge on the given
// side for model k: G(s; r) for candidates as destinations, H(dst; r) for
// candidates as sources (the table of workload.Model), r the edge's
// relation row (k.RelWidth(d) floats). It returns q, or the embedding
// itself when the operator is none.
func queryRow(k workload.Model, d int, s, r, dst []float32, side Side, q []float32) []float32 {
	op := k.Operator()
	x, off, adj := s, 0, false
	if side == SrcSide {
		x = dst
		if k.Named() {
			adj = true
		} else {
			off = workload.OperatorWidth(op, d)
		}
	}
	switch op {
	case workload.OpNone:
		return x[:d]
	case workload.OpRotate:
		h := d / 2
		xre, xim := x[:h], x[h:d]
		qre, qim := q[:h], q[h:d]
		for j, a := range xre {
			sn, cs := math.Sincos(float64(r[j]))
			c, s, b := float32(cs), float32(sn), xim[j]
			if adj {
				qre[j] = a*c + b*s
				qim[j] = b*c - a*s
			} else {
				qre[j] = a*c - b*s
				qim[j] = a*s + b*c
			}
		}
		return q[:d]
	}
	opForward(op, adj, d, 1, x, r, 0, off, nil, q)
	return q[:d]
}

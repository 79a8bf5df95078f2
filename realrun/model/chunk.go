package model

import (
	"fmt"
	"math"

	"github.com/tierflow/tierflow/workload"
)

// Scratch holds the reusable buffers of ChunkGrad. Buffers grow on demand and
// are kept, so after the first chunk of the largest shape ChunkGrad does not
// allocate. A Scratch must not be used by two goroutines at once; give each
// worker its own. The zero value is ready to use.
type Scratch struct {
	q   []float32          // n×d: the query rows Q (or Q′) of the current side
	gq  []float32          // n×d: dL/dQ
	t   []float32          // n×m: scores, then softmax weights G
	gt  []float32          // m×n: Gᵀ
	qt  []float32          // d×n: Qᵀ
	nt  []float32          // d×m: Nᵀ (shared by both sides)
	gp  []float32          // n: dL/d(positive score)
	pos []float32          // n: positive scores
	pk  packBuf            // packed GEMM panels (SIMD levels)
	obj workload.Objective // the chunk's loss (set by ChunkGrad)

	// The general path (operators and comparators other than the three
	// original models).
	qn   []float32 // n: ‖Q_i‖²
	rc   []float32 // n: each query row's multiple in the backward (sideGEMM)
	nn   []float32 // m: ‖N_k‖²
	ninv []float32 // m: 1/max(‖N_k‖, 1e-30)
	ncl  []float32 // m: ninv² where the norm is above the clamp, else 0
	cc   []float32 // m: each negative's multiple in the backward
	f    []float32 // m: one row's per-entry factor
	rot  []float32 // n×d: cos θ | sin θ of each edge's phases (rotate)
}

// NewScratch returns an empty Scratch.
func NewScratch() *Scratch { return &Scratch{} }

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// CheckChunk validates the arguments of ChunkGrad: k and d (see CheckDim),
// n, m ≥ 0, len(S) = len(D) = len(gS) = len(gD) = n·d, len(N) = len(gN) = m·d,
// and, when k has relation parameters, len(R) = len(gR) = n·k.RelWidth(d):
// each edge's relation row (R and gR are ignored for Dot).
func CheckChunk(k workload.Model, d int, S, R, D, N []float32, n, m int, gS, gR, gD, gN []float32) error {
	if err := k.CheckDim(d); err != nil {
		return err
	}
	if n < 0 || m < 0 {
		return fmt.Errorf("model: chunk sizes n=%d, m=%d must be non-negative", n, m)
	}
	type arg struct {
		name string
		got  int
		want int
	}
	args := []arg{
		{"S", len(S), n * d}, {"D", len(D), n * d}, {"N", len(N), m * d},
		{"gS", len(gS), n * d}, {"gD", len(gD), n * d}, {"gN", len(gN), m * d},
	}
	if w := k.RelWidth(d); w > 0 {
		args = append(args, arg{"R", len(R), n * w}, arg{"gR", len(gR), n * w})
	}
	for _, a := range args {
		if a.got != a.want {
			return fmt.Errorf("model: chunk (n=%d, m=%d, d=%d): len(%s) = %d, want %d", n, m, d, a.name, a.got, a.want)
		}
	}
	return nil
}

// ChunkGrad computes the loss of one chunk of n positive edges sharing m
// negative nodes (PBG §4.3, Marius eq. 1), corrupting both sides, with the
// objective o (rowLoss per query row; the softmax loss when o is the zero
// value):
//
//	L = Σ_i ℓ(C(q_i, d_i); {C(q_i, n_k)}_k) + Σ_i ℓ(C(q′_i, s_i); {C(q′_i, n_k)}_k)
//	  + the regularisation (regularize)
//
// with q_i = G(s_i; r_i) the destination side's query and q′_i = H(d_i; r_i)
// the source side's (the operator table of workload.Model: for a named
// model H is G's adjoint, so both sides score f(s, r, d); for a PBG pair G
// and H are the relation's two operators), C the model's comparator. For
// the softmax loss ℓ(p; n) = logsumexp({p} ∪ n) − p. It adds dL/dS, dL/dR,
// dL/dD, dL/dN into gS, gR, gD, gN and returns L.
//
// S, D, gS, gD are n×d, N and gN are m×d, R and gR are n×k.RelWidth(d)
// (each edge's relation row; ignored, and may be nil, without relation
// parameters); all row-major. Lengths and d are assumed validated
// (CheckChunk); ChunkGrad does not re-check them. The gradient slices must
// not alias the inputs. For an unknown kind it returns NaN and leaves the
// gradients untouched.
//
// Dot, DistMult and ComplEx keep their own path: f(s_i,r_i,x) = <Q_i, x>
// with Q_i = s_i, s_i∘r_i or the complex product s_i·r_i ([re | im], so the
// real part of Q_i·conj(x) is the plain dot product of the two real
// layouts); the source side's Q′_i = d_i, r_i∘d_i, or (Re, −Im) of
// r_i·conj(d_i). The negative scores of each side are the n×m product
// Q·Nᵀ; the backward is G·N (n×d) and Gᵀ·Q (m×d). Every other model takes
// chunkGeneral: the dot, cos, l2 and squared_l2 comparators through the
// same products plus the rows' norms (sideGEMM), l1 and modulus_l1
// through the pairwise kernel (sidePair), and the operators' d×d matvecs
// (linear, affine) per edge on the active level's vector kernels.
func ChunkGrad(k workload.Model, o workload.Objective, d int, S, R, D, N []float32, n, m int, gS, gR, gD, gN []float32, sc *Scratch) float32 {
	return ChunkGradSides(k, o, d, S, R, D, N, N, n, m, gS, gR, gD, gN, gN, sc)
}

// ChunkGradSides is ChunkGrad with a set of negatives for each side: the
// destination side's queries (q_i = G(s_i; r_i), scored against d_i and
// the negatives) take Ndst and add their negatives' gradient into gNdst;
// the source side's (q′_i = H(d_i; r_i)) take Nsrc and gNsrc. Both sets are
// m×d. A typed graph's chunk draws its destination side's negatives from
// the destination's entity type and its source side's from the source's
// (PBG's semantics). With Ndst = Nsrc = N and gNdst = gNsrc = gN it is
// ChunkGrad, bit for bit: the same operations in the same order. The
// gradient slices must not alias the inputs; gNdst and gNsrc may be the
// same slice (and must be when Ndst and Nsrc are).
func ChunkGradSides(k workload.Model, o workload.Objective, d int, S, R, D, Ndst, Nsrc []float32, n, m int, gS, gR, gD, gNdst, gNsrc []float32, sc *Scratch) float32 {
	if !k.Valid() {
		return nan32()
	}
	if n <= 0 || d <= 0 {
		return 0
	}
	if sc == nil {
		sc = NewScratch()
	}
	sc.obj = o
	if k != workload.Dot && k != workload.DistMult && k != workload.ComplEx {
		loss := chunkGeneral(k, d, S, R, D, Ndst, Nsrc, n, m, gS, gR, gD, gNdst, gNsrc, sc)
		loss += regularize(k, &sc.obj, d, S, R, D, n, gS, gR, gD)
		return float32(loss)
	}
	sc.t = grow(sc.t, n*m)
	sc.gp = grow(sc.gp, n)
	sc.pos = grow(sc.pos, n)
	if k != workload.Dot {
		sc.q = grow(sc.q, n*d)
		sc.gq = grow(sc.gq, n*d)
	}
	side := sideSIMD
	if level == Generic {
		side = sideGo
		sc.gt = grow(sc.gt, m*n)
		sc.qt = grow(sc.qt, d*n)
		sc.nt = grow(sc.nt, d*m)
		transpose(m, d, Ndst, sc.nt)
	}

	var loss float64
	// Destination side: queries built from (s, r); positives are D; the
	// gradient of the positive term flows into gD.
	N, gN := Ndst, gNdst
	switch k {
	case workload.Dot:
		loss += side(d, n, m, S, D, N, gS, gD, gN, sc)
	case workload.DistMult:
		hadamard(S[:n*d], R, sc.q)
		clear(sc.gq)
		loss += side(d, n, m, sc.q, D, N, sc.gq, gD, gN, sc)
		hadamardAcc(sc.gq, R, gS)
		hadamardAcc(sc.gq, S, gR)
	case workload.ComplEx:
		complexQ(d, n, S, R, d, 0, sc.q)
		clear(sc.gq)
		loss += side(d, n, m, sc.q, D, N, sc.gq, gD, gN, sc)
		complexQBack(d, n, S, R, d, 0, sc.gq, gS, gR)
	}
	// Source side: queries built from (r, d); positives are S.
	N, gN = Nsrc, gNsrc
	if level == Generic && !sameRows(Nsrc, Ndst) {
		transpose(m, d, N, sc.nt)
	}
	switch k {
	case workload.Dot:
		loss += side(d, n, m, D, S, N, gD, gS, gN, sc)
	case workload.DistMult:
		hadamard(D[:n*d], R, sc.q)
		clear(sc.gq)
		loss += side(d, n, m, sc.q, S, N, sc.gq, gS, gN, sc)
		hadamardAcc(sc.gq, R, gD)
		hadamardAcc(sc.gq, D, gR)
	case workload.ComplEx:
		complexQSrc(d, n, R, D, sc.q)
		clear(sc.gq)
		loss += side(d, n, m, sc.q, S, N, sc.gq, gS, gN, sc)
		complexQSrcBack(d, n, R, D, sc.gq, gR, gD)
	}
	loss += regularize(k, &sc.obj, d, S, R, D, n, gS, gR, gD)
	return float32(loss)
}

// sameRows reports whether a and b are the same slice (same start and
// length), so that what was prepared for one side's negatives serves the
// other's.
func sameRows(a, b []float32) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// chunkGeneral is ChunkGrad's two sides for every model but Dot, DistMult
// and ComplEx (which keep their own path above): per side the query rows
// by the operator (opForward), the side by the comparator (sideSIMD or
// sideGo for dot, sideGEMM for cos, l2 and squared_l2, sidePair for l1
// and modulus_l1), then dL/dQ back through the operator (opBackward).
func chunkGeneral(k workload.Model, d int, S, R, D, Ndst, Nsrc []float32, n, m int, gS, gR, gD, gNdst, gNsrc []float32, sc *Scratch) float64 {
	op, cmp := k.Operator(), k.Comparator()
	w, rw := workload.OperatorWidth(op, d), k.RelWidth(d)
	sc.t = grow(sc.t, n*m)
	sc.gp = grow(sc.gp, n)
	sc.pos = grow(sc.pos, n)
	sc.chunkPrep(cmp, d, m, Ndst)
	if level == Generic && cmp == workload.CmpDot {
		sc.gt = grow(sc.gt, m*n)
		sc.qt = grow(sc.qt, d*n)
	}
	if op != workload.OpNone {
		sc.q = grow(sc.q, n*d)
		sc.gq = grow(sc.gq, n*d)
	}
	if op == workload.OpRotate {
		sc.rot = grow(sc.rot, n*d)
		rotSetup(d, n, R, rw, sc.rot)
	}
	var loss float64
	for side := DstSide; side <= SrcSide; side++ {
		// Destination side: queries from (s, r), positives D; source side:
		// queries from (r, d), positives S.
		X, Y, gX, gY := S, D, gS, gD
		N, gN := Ndst, gNdst
		off, adj := 0, false
		if side == SrcSide {
			X, Y, gX, gY = D, S, gD, gS
			N, gN = Nsrc, gNsrc
			if !sameRows(Nsrc, Ndst) {
				sc.chunkPrep(cmp, d, m, N)
			}
			if k.Named() {
				adj = true
			} else {
				off = w
			}
		}
		Q, gQ := X[:n*d], gX[:n*d]
		if op != workload.OpNone {
			Q, gQ = sc.q[:n*d], sc.gq[:n*d]
			opForward(op, adj, d, n, X, R, rw, off, sc.rot, Q)
			clear(gQ)
		}
		switch cmp {
		case workload.CmpDot:
			if level == Generic {
				loss += sideGo(d, n, m, Q, Y, N, gQ, gY, gN, sc)
			} else {
				loss += sideSIMD(d, n, m, Q, Y, N, gQ, gY, gN, sc)
			}
		case workload.CmpCos, workload.CmpL2, workload.CmpSquaredL2:
			loss += sideGEMM(cmp, d, n, m, Q, Y, N, gQ, gY, gN, sc)
		default:
			loss += sidePair(cmp, d, n, m, Q, Y, N, gQ, gY, gN, sc)
		}
		if op != workload.OpNone {
			opBackward(op, adj, d, n, X, R, rw, off, sc.rot, Q, gQ, gX, gR)
		}
	}
	return loss
}

// sideSIMD computes one corrupted side of the loss for queries Q (n×d)
// whose positive partners are X (n×d) and whose negatives are N (m×d). It
// adds dL/dQ into gQ, dL/dX into gX and dL/dN into gN, and returns the side's
// loss. It is sideGo on the SIMD kernels: the three products read their
// operands through strided views, so no transposes are needed.
func sideSIMD(d, n, m int, Q, X, N, gQ, gX, gN []float32, sc *Scratch) float64 {
	pos := sc.pos[:n]
	gp := sc.gp[:n]
	for i := range pos {
		pos[i] = vecDot(Q[i*d:i*d+d], X[i*d:i*d+d])
	}
	t := sc.t[:n*m]
	clear(t)
	// T = Q·Nᵀ: B(p, j) = N[j*d + p].
	gemm(n, m, d, mat{Q, d, 1}, mat{N, 1, d}, t, m, &sc.pk)
	var loss float64
	for i, p := range pos {
		l, g := rowLoss(&sc.obj, p, t[i*m:i*m+m])
		gp[i] = g
		loss += l
	}
	for i, g := range gp {
		vecAxpy(g, X[i*d:i*d+d], gQ[i*d:i*d+d])
		vecAxpy(g, Q[i*d:i*d+d], gX[i*d:i*d+d])
	}
	if m == 0 {
		return loss
	}
	// gQ += G·N;  gN += Gᵀ·Q with A(i, p) = G[p*m + i].
	gemm(n, d, m, mat{t, m, 1}, mat{N, d, 1}, gQ, d, &sc.pk)
	gemm(m, d, n, mat{t, 1, m}, mat{Q, d, 1}, gN, d, &sc.pk)
	return loss
}

// sideGo is the portable sideSIMD (Nᵀ already in sc.nt).
func sideGo(d, n, m int, Q, X, N, gQ, gX, gN []float32, sc *Scratch) float64 {
	pos := sc.pos[:n]
	gp := sc.gp[:n]
	for i := range pos {
		pos[i] = dot(Q[i*d:i*d+d], X[i*d:i*d+d])
	}
	t := sc.t[:n*m]
	clear(t)
	sgemmNTGo(n, m, d, Q, N, t)

	// Each row's loss; t becomes G = dL/dT.
	var loss float64
	for i, p := range pos {
		l, g := rowLoss(&sc.obj, p, t[i*m:i*m+m])
		gp[i] = g
		loss += l
	}

	// Positive term: p_i = <Q_i, X_i>.
	for i, g := range gp {
		axpy(g, X[i*d:i*d+d], gQ[i*d:i*d+d])
		axpy(g, Q[i*d:i*d+d], gX[i*d:i*d+d])
	}
	if m == 0 {
		return loss
	}
	// gQ += G·N  (as G · (Nᵀ)ᵀ);  gN += Gᵀ·Q  (as Gᵀ · (Qᵀ)ᵀ).
	sgemmNTGo(n, d, m, t, sc.nt, gQ)
	transpose(n, m, t, sc.gt)
	transpose(n, d, Q, sc.qt)
	sgemmNTGo(m, d, n, sc.gt, sc.qt, gN)
	return loss
}

// hadamard sets q = a∘b (len(b) ≥ len(a), len(q) ≥ len(a)).
func hadamard(a, b, q []float32) {
	b = b[:len(a)]
	q = q[:len(a)]
	for i, v := range a {
		q[i] = v * b[i]
	}
}

// hadamardAcc adds g∘b into out (len(b), len(out) ≥ len(g)).
func hadamardAcc(g, b, out []float32) {
	b = b[:len(g)]
	out = out[:len(g)]
	for i, v := range g {
		out[i] += v * b[i]
	}
}

// complexQ sets each row of q to the complex product s_i·r_i ([re | im]);
// relation row i starts at R[i·rs+ro] (rs = d, ro = 0 for one relation row
// an edge; a PBG pair's rows hold two operators).
func complexQ(d, n int, S, R []float32, rs, ro int, q []float32) {
	h := d / 2
	for i := 0; i < n; i++ {
		o, po := i*d, i*rs+ro
		sre, sim := S[o:o+h], S[o+h:o+d]
		rre, rim := R[po:po+h], R[po+h:po+d]
		qre, qim := q[o:o+h], q[o+h:o+d]
		sim, rre, rim, qre, qim = sim[:len(sre)], rre[:len(sre)], rim[:len(sre)], qre[:len(sre)], qim[:len(sre)]
		for j, a := range sre {
			b, c, e := sim[j], rre[j], rim[j]
			qre[j] = a*c - b*e
			qim[j] = a*e + b*c
		}
	}
}

// complexQBack adds the gradient of Q = s·r (complex) into gS and gR
// (relation rows laid out as complexQ's).
func complexQBack(d, n int, S, R []float32, rs, ro int, gq, gS, gR []float32) {
	h := d / 2
	for i := 0; i < n; i++ {
		o, po := i*d, i*rs+ro
		sre, sim := S[o:o+h], S[o+h:o+d]
		rre, rim := R[po:po+h], R[po+h:po+d]
		gre, gim := gq[o:o+h], gq[o+h:o+d]
		gsre, gsim := gS[o:o+h], gS[o+h:o+d]
		grre, grim := gR[po:po+h], gR[po+h:po+d]
		sim, rre, rim = sim[:len(sre)], rre[:len(sre)], rim[:len(sre)]
		gre, gim = gre[:len(sre)], gim[:len(sre)]
		gsre, gsim, grre, grim = gsre[:len(sre)], gsim[:len(sre)], grre[:len(sre)], grim[:len(sre)]
		for j, a := range sre {
			b, c, e := sim[j], rre[j], rim[j]
			x, y := gre[j], gim[j]
			gsre[j] += x*c + y*e
			gsim[j] += y*c - x*e
			grre[j] += x*a + y*b
			grim[j] += y*a - x*b
		}
	}
}

// complexQSrc sets each row of q to Q′ = (Re, −Im) of r_i·conj(d_i), so that
// <Q′, x> = Re(Σ x r conj(d)).
func complexQSrc(d, n int, R, D, q []float32) {
	h := d / 2
	for i := 0; i < n; i++ {
		o := i * d
		rre, rim := R[o:o+h], R[o+h:o+d]
		dre, dim := D[o:o+h], D[o+h:o+d]
		qre, qim := q[o:o+h], q[o+h:o+d]
		rim, dre, dim, qre, qim = rim[:len(rre)], dre[:len(rre)], dim[:len(rre)], qre[:len(rre)], qim[:len(rre)]
		for j, c := range rre {
			e, u, v := rim[j], dre[j], dim[j]
			qre[j] = c*u + e*v
			qim[j] = c*v - e*u
		}
	}
}

// complexQSrcBack adds the gradient of Q′ (see complexQSrc) into gR and gD.
func complexQSrcBack(d, n int, R, D, gq, gR, gD []float32) {
	h := d / 2
	for i := 0; i < n; i++ {
		o := i * d
		rre, rim := R[o:o+h], R[o+h:o+d]
		dre, dim := D[o:o+h], D[o+h:o+d]
		gre, gim := gq[o:o+h], gq[o+h:o+d]
		grre, grim := gR[o:o+h], gR[o+h:o+d]
		gdre, gdim := gD[o:o+h], gD[o+h:o+d]
		rim, dre, dim = rim[:len(rre)], dre[:len(rre)], dim[:len(rre)]
		gre, gim = gre[:len(rre)], gim[:len(rre)]
		grre, grim, gdre, gdim = grre[:len(rre)], grim[:len(rre)], gdre[:len(rre)], gdim[:len(rre)]
		for j, c := range rre {
			e, u, v := rim[j], dre[j], dim[j]
			x, y := gre[j], gim[j]
			grre[j] += x*u + y*v
			grim[j] += x*v - y*u
			gdre[j] += x*c - y*e
			gdim[j] += x*e + y*c
		}
	}
}

// expNeg returns e^x for x ≤ 0 (as produced by subtracting a row maximum),
// to about 1 ulp of float32, without a float64 round trip: Cody–Waite range
// reduction x = k·ln2 + r and the Cephes expf polynomial on |r| ≤ ln2/2.
// Results below the smallest normal float32 flush to 0.
func expNeg(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
	)
	if !(x > -87.3) { // also catches NaN
		if x != x {
			return x
		}
		return 0
	}
	kf := float32(int32(x*log2e - 0.5)) // round to nearest for x ≤ 0
	r := x - kf*ln2hi - kf*ln2lo
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	y := p*r*r + r + 1
	return y * math.Float32frombits(uint32(int32(kf)+127)<<23)
}

// adagradGo is the portable Adagrad step.
func adagradGo(emb, state, grad []float32, lr, eps float32) {
	state = state[:len(emb)]
	grad = grad[:len(emb)]
	for i, g := range grad {
		s := state[i] + g*g
		state[i] = s
		emb[i] -= lr * g / (float32(math.Sqrt(float64(s))) + eps)
	}
}

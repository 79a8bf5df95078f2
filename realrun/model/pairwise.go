package model

import (
	"math"

	"github.com/tierflow/tierflow/workload"
)

// The pairwise comparators, l1 and modulus_l1, which no product of Q and
// Nᵀ gives. At a SIMD level on the assembly kernels (l1Dist4 and modDist4
// score four candidates at once, a lone pair as four copies of itself;
// l1Grad and modGrad one pair; the ragged tails in Go); at Generic
// portable Go, four candidates at a time, each candidate summed with the
// same two accumulators (even and odd coordinates) as a lone pair. Either
// way every score is the same arithmetic wherever it is computed at a
// given level (ties are exact), and the gradients' lanes compute exactly
// what the Go loop does. The conversions float32(…) around products keep
// the compiler from fusing them into FMAs.

// l1Dist is Σ_j |q_j − c_j| (len(c) ≥ len(q)).
func l1Dist(q, c []float32) float32 {
	c = c[:len(q)]
	var a0, a1 float32
	j := 0
	for ; j+2 <= len(q); j += 2 {
		a0 += abs32(q[j] - c[j])
		a1 += abs32(q[j+1] - c[j+1])
	}
	if j < len(q) {
		a0 += abs32(q[j] - c[j])
	}
	return a0 + a1
}

// l1Dist4 is l1Dist of q against four candidates.
func l1Dist4(q, c0, c1, c2, c3 []float32) (float32, float32, float32, float32) {
	c0, c1, c2, c3 = c0[:len(q)], c1[:len(q)], c2[:len(q)], c3[:len(q)]
	var a0, a1, b0, b1, e0, e1, f0, f1 float32
	j := 0
	for ; j+2 <= len(q); j += 2 {
		x, y := q[j], q[j+1]
		a0 += abs32(x - c0[j])
		a1 += abs32(y - c0[j+1])
		b0 += abs32(x - c1[j])
		b1 += abs32(y - c1[j+1])
		e0 += abs32(x - c2[j])
		e1 += abs32(y - c2[j+1])
		f0 += abs32(x - c3[j])
		f1 += abs32(y - c3[j+1])
	}
	if j < len(q) {
		x := q[j]
		a0 += abs32(x - c0[j])
		b0 += abs32(x - c1[j])
		e0 += abs32(x - c2[j])
		f0 += abs32(x - c3[j])
	}
	return a0 + a1, b0 + b1, e0 + e1, f0 + f1
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// modDist is Σ_k sqrt(max((q_re,k − c_re,k)² + (q_im,k − c_im,k)², 1e-30))
// over the d/2 complex coordinates of [re | im] rows of length d.
func modDist(d int, q, c []float32) float32 {
	h := d / 2
	qre, qim, cre, cim := q[:h], q[h:2*h], c[:h], c[h:2*h]
	var a0, a1 float32
	j := 0
	for ; j+2 <= h; j += 2 {
		a0 += modTerm(qre[j]-cre[j], qim[j]-cim[j])
		a1 += modTerm(qre[j+1]-cre[j+1], qim[j+1]-cim[j+1])
	}
	if j < h {
		a0 += modTerm(qre[j]-cre[j], qim[j]-cim[j])
	}
	return a0 + a1
}

func modTerm(x, y float32) float32 {
	return sqrt32(max(float32(x*x)+float32(y*y), distClamp))
}

// modGradTerm adds one complex coordinate's gradient of −modulus scaled
// by g (x, y: q − c there) into the four outputs.
func modGradTerm(g, x, y float32, gqre, gqim, gcre, gcim *float32) {
	sq := float32(x*x) + float32(y*y)
	if sq <= distClamp {
		return
	}
	w := g / sqrt32(sq)
	u, v := w*x, w*y
	*gqre -= u
	*gqim -= v
	*gcre += u
	*gcim += v
}

// vecL1Dist4 sets out[j] to the l1 distance of q (length d) to the
// candidate C[j·ldc : j·ldc+d], j < 4, on the active SIMD level's kernel
// (l1Dist4Z/Y, then the ragged tail in Go): one accumulator chain per
// candidate whatever ldc is, so a lone pair (ldc = 0) gets the same bits
// as in a block of four. Not for Generic.
func vecL1Dist4(q, C []float32, ldc int, out *[4]float32) {
	d := len(q)
	C = C[:3*ldc+d]
	z, y := split(d)
	var tz, ty [4]float32
	if z > 0 {
		l1Dist4Z(&q[0], &C[0], ldc, z, &tz[0])
	}
	if y > 0 {
		l1Dist4Y(&q[z], &C[z], ldc, y, &ty[0])
	}
	for j := range out {
		s := tz[j] + ty[j]
		c := C[j*ldc : j*ldc+d]
		for i := z + y; i < d; i++ {
			s += abs32(q[i] - c[i])
		}
		out[j] = s
	}
}

// vecModDist4 is vecL1Dist4 for the modulus_l1 distance of [re | im] rows.
func vecModDist4(d int, q, C []float32, ldc int, out *[4]float32) {
	h := d / 2
	q, C = q[:2*h], C[:3*ldc+2*h]
	z, y := split(h)
	var tz, ty [4]float32
	if z > 0 {
		modDist4Z(&q[0], &C[0], ldc, h, z, &tz[0])
	}
	if y > 0 {
		modDist4Y(&q[z], &C[z], ldc, h, y, &ty[0])
	}
	for j := range out {
		s := tz[j] + ty[j]
		c := C[j*ldc : j*ldc+2*h]
		for i := z + y; i < h; i++ {
			s += modTerm(q[i]-c[i], q[h+i]-c[h+i])
		}
		out[j] = s
	}
}

// dist4 is the active level's distance of q to four candidates (ldc
// apart) under cmp.
func dist4(cmp workload.Comparator, d int, q, C []float32, ldc int, out *[4]float32) {
	if cmp == workload.CmpModulusL1 {
		vecModDist4(d, q, C, ldc, out)
		return
	}
	vecL1Dist4(q[:d], C, ldc, out)
}

// pairScore is the score C(q, c) = −distance of one pair.
func pairScore(cmp workload.Comparator, d int, q, c []float32) float32 {
	if level == Generic {
		if cmp == workload.CmpModulusL1 {
			return -modDist(d, q, c)
		}
		return -l1Dist(q[:d], c)
	}
	var o [4]float32
	dist4(cmp, d, q, c, 0, &o)
	return -o[0]
}

// pairScores sets out[j] = C(q, C_j) for the m rows of C (m×d).
func pairScores(cmp workload.Comparator, d, m int, q, C, out []float32) {
	out = out[:m]
	q = q[:d]
	j := 0
	if level != Generic {
		var o [4]float32
		for ; j+4 <= m; j += 4 {
			dist4(cmp, d, q, C[j*d:(j+4)*d], d, &o)
			r := out[j : j+4 : j+4]
			r[0], r[1], r[2], r[3] = -o[0], -o[1], -o[2], -o[3]
		}
	} else if cmp == workload.CmpL1 {
		for ; j+4 <= m; j += 4 {
			o := j * d
			v0, v1, v2, v3 := l1Dist4(q, C[o:o+d], C[o+d:o+2*d], C[o+2*d:o+3*d], C[o+3*d:o+4*d])
			r := out[j : j+4 : j+4]
			r[0], r[1], r[2], r[3] = -v0, -v1, -v2, -v3
		}
	}
	for ; j < m; j++ {
		out[j] = pairScore(cmp, d, q, C[j*d:j*d+d])
	}
}

// pairGrad adds g·∂C/∂q into gq and g·∂C/∂c into gc for C = −l1 (the
// subgradient sign(q − c), sign(0) = 0) or −modulus_l1 (0 where a
// coordinate's squared modulus is at or under the clamp), on the active
// level's vector kernels (which compute every lane as the Go loop does).
func pairGrad(cmp workload.Comparator, d int, g float32, q, c, gq, gc []float32) {
	if level == Generic {
		pairGradGo(cmp, d, g, q, c, gq, gc)
		return
	}
	n := d
	if cmp == workload.CmpModulusL1 {
		n = d / 2
	}
	z, y := split(n)
	if cmp == workload.CmpModulusL1 {
		h := n
		q, c, gq, gc = q[:2*h], c[:2*h], gq[:2*h], gc[:2*h]
		if z > 0 {
			modGradZ(g, &q[0], &c[0], &gq[0], &gc[0], h, z)
		}
		if y > 0 {
			modGradY(g, &q[z], &c[z], &gq[z], &gc[z], h, y)
		}
		for j := z + y; j < h; j++ {
			modGradTerm(g, q[j]-c[j], q[h+j]-c[h+j], &gq[j], &gq[h+j], &gc[j], &gc[h+j])
		}
		return
	}
	q, c, gq, gc = q[:d], c[:d], gq[:d], gc[:d]
	if z > 0 {
		l1GradZ(g, &q[0], &c[0], &gq[0], &gc[0], z)
	}
	if y > 0 {
		l1GradY(g, &q[z], &c[z], &gq[z], &gc[z], y)
	}
	pairGradGo(cmp, d-z-y, g, q[z+y:], c[z+y:], gq[z+y:], gc[z+y:])
}

// pairGrad4 is pairGrad for four candidates C[j·d:(j+1)·d] with
// gradients gC[j·d:(j+1)·d] and factors g[j], in order j = 0..3 (the same
// sums as four pairGrad calls). Not for Generic.
func pairGrad4(cmp workload.Comparator, d int, g *[4]float32, q, C, gq, gC []float32) {
	n := d
	if cmp == workload.CmpModulusL1 {
		n = d / 2
	}
	z, y := split(n)
	C, gC = C[:4*d], gC[:4*d]
	if cmp == workload.CmpModulusL1 {
		h := n
		q, gq = q[:2*h], gq[:2*h]
		if z > 0 {
			modGrad4Z(&g[0], &q[0], &C[0], d, &gq[0], &gC[0], h, z)
		}
		if y > 0 {
			modGrad4Y(&g[0], &q[z], &C[z], d, &gq[z], &gC[z], h, y)
		}
		if z+y < h {
			for j, gj := range g {
				c, gc := C[j*d:j*d+d], gC[j*d:j*d+d]
				for i := z + y; i < h; i++ {
					modGradTerm(gj, q[i]-c[i], q[h+i]-c[h+i], &gq[i], &gq[h+i], &gc[i], &gc[h+i])
				}
			}
		}
		return
	}
	q, gq = q[:d], gq[:d]
	if z > 0 {
		l1Grad4Z(&g[0], &q[0], &C[0], d, &gq[0], &gC[0], z)
	}
	if y > 0 {
		l1Grad4Y(&g[0], &q[z], &C[z], d, &gq[z], &gC[z], y)
	}
	if z+y < d {
		for j, gj := range g {
			o := j*d + z + y
			pairGradGo(cmp, d-z-y, gj, q[z+y:], C[o:], gq[z+y:], gC[o:])
		}
	}
}

// pairGradGo is the portable pairGrad.
func pairGradGo(cmp workload.Comparator, d int, g float32, q, c, gq, gc []float32) {
	if cmp == workload.CmpModulusL1 {
		h := d / 2
		qre, qim, cre, cim := q[:h], q[h:2*h], c[:h], c[h:2*h]
		gqre, gqim, gcre, gcim := gq[:h], gq[h:2*h], gc[:h], gc[h:2*h]
		for j, a := range qre {
			modGradTerm(g, a-cre[j], qim[j]-cim[j], &gqre[j], &gqim[j], &gcre[j], &gcim[j])
		}
		return
	}
	q = q[:d]
	c, gq, gc = c[:d], gq[:d], gc[:d]
	gb := math.Float32bits(g)
	for j, a := range q {
		x := a - c[j]
		v := math.Float32frombits(gb ^ (math.Float32bits(x) & (1 << 31)))
		if x == 0 {
			v = 0
		}
		gq[j] -= v
		gc[j] += v
	}
}

// sidePair is one corrupted side under l1 or modulus_l1 (see sideSIMD for
// the arguments): the scores pairwise, each row's loss, and the
// subgradients back pairwise (skipping pairs whose dL/dscore is 0).
func sidePair(cmp workload.Comparator, d, n, m int, Q, X, N, gQ, gX, gN []float32, sc *Scratch) float64 {
	pos, gp := sc.pos[:n], sc.gp[:n]
	t := sc.t[:n*m]
	for i := range pos {
		q := Q[i*d : i*d+d]
		pos[i] = pairScore(cmp, d, q, X[i*d:i*d+d])
		pairScores(cmp, d, m, q, N, t[i*m:i*m+m])
	}
	var loss float64
	for i, p := range pos {
		l, g := rowLoss(&sc.obj, p, t[i*m:i*m+m])
		gp[i] = g
		loss += l
	}
	for i, g := range gp {
		q, gq := Q[i*d:i*d+d], gQ[i*d:i*d+d]
		if g != 0 {
			pairGrad(cmp, d, g, q, X[i*d:i*d+d], gq, gX[i*d:i*d+d])
		}
		row := t[i*m : i*m+m]
		k := 0
		if level != Generic {
			for ; k+4 <= m; k += 4 {
				g4 := (*[4]float32)(row[k : k+4])
				if g4[0] != 0 || g4[1] != 0 || g4[2] != 0 || g4[3] != 0 {
					pairGrad4(cmp, d, g4, q, N[k*d:(k+4)*d], gq, gN[k*d:(k+4)*d])
				}
			}
		}
		for ; k < m; k++ {
			if G := row[k]; G != 0 {
				pairGrad(cmp, d, G, q, N[k*d:k*d+d], gq, gN[k*d:k*d+d])
			}
		}
	}
	return loss
}

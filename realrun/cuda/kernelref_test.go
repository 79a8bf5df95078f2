package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/workload"
)

// TestReferenceMatchesChunkGrad: for every model and objective of the
// kernel checks, model.ChunkGrad (float32, products and norms) and
// refChunkGrad (float64, pair by pair) agree on the loss and every
// gradient to float32 rounding, so the kernels and the CPU engine follow
// the same conventions (clamps, N3's moduli, adjoints, weights).
func TestReferenceMatchesChunkGrad(t *testing.T) {
	for _, c := range append(append([]kernelCase(nil), kernelCases...), modelCases...) {
		t.Run(c.String(), func(t *testing.T) {
			d, n, m := c.d, c.n, c.m
			w := c.kind.RelWidth(d)
			rng := rand.New(rand.NewPCG(uint64(d), uint64(n*100+m)))
			S, D, N, R := randFloats(rng, n*d), randFloats(rng, n*d), randFloats(rng, m*d), randFloats(rng, n*w)
			grads := func() [4][]float32 {
				return [4][]float32{make([]float32, n*d), make([]float32, n*w), make([]float32, n*d), make([]float32, m*d)}
			}
			a, b := grads(), grads()
			la := model.ChunkGrad(c.kind, c.obj, d, S, R, D, N, n, m, a[0], a[1], a[2], a[3], nil)
			lb := refChunkGrad(c.kind, c.obj, d, S, R, D, N, n, m, b[0], b[1], b[2], b[3])
			assert.InDelta(t, lb, float64(la), 1e-5*(1+math.Abs(lb)), "loss")
			for j, name := range []string{"gS", "gR", "gD", "gN"} {
				var num, den float64
				for i := range a[j] {
					num += math.Pow(float64(a[j][i]-b[j][i]), 2)
					den += math.Pow(float64(b[j][i]), 2)
				}
				assert.LessOrEqual(t, math.Sqrt(num), 1e-5*(1+math.Sqrt(den)), "%s", name)
			}
		})
	}
}

// refChunkGrad is the spec's chunk math in float64, written straight from
// its definitions (no products, no norms trick): the kernels were written
// against it before model.ChunkGrad trained every model, and it stays as
// a second opinion on the conventions the kernel checks take from
// model.ChunkGrad (TestReferenceMatchesChunkGrad). Arguments as
// model.ChunkGrad's (R and gR n rows of RelWidth); the gradients are
// added into gS, gR, gD, gN.
func refChunkGrad(k workload.Model, o workload.Objective, d int, S, R, D, N []float32, n, m int, gS, gR, gD, gN []float32) float64 {
	op, cmp, pair := k.Operator(), k.Comparator(), !k.Named()
	w := k.RelWidth(d)
	w0 := workload.OperatorWidth(op, d)
	row := func(f []float32, i, width int) []float64 {
		out := make([]float64, width)
		for j := range out {
			out[j] = float64(f[i*width+j])
		}
		return out
	}
	addTo := func(f []float32, i, width int, g []float64) {
		for j, v := range g {
			f[i*width+j] += float32(v)
		}
	}
	negs := make([][]float64, m)
	for kk := range negs {
		negs[kk] = row(N, kk, d)
	}
	gNeg := make([][]float64, m)
	for kk := range gNeg {
		gNeg[kk] = make([]float64, d)
	}
	var loss float64
	for i := range n {
		s, t := row(S, i, d), row(D, i, d)
		var r []float64
		if w > 0 {
			r = row(R, i, w)
		}
		gs, gt, gr := make([]float64, d), make([]float64, d), make([]float64, w)
		rg, rh := r, r
		grg, grh := gr, gr
		if pair && w > 0 {
			rg, rh, grg, grh = r[:w0], r[w0:], gr[:w0], gr[w0:]
		}
		// side: query op(x) against partner y and the negatives.
		side := func(x, y, rx []float64, adj bool, gx, gy, grx []float64) {
			q := refForward(op, adj, d, x, rx)
			p, _, _ := refCmp(cmp, q, y)
			scores := make([]float64, m)
			for kk := range m {
				scores[kk], _, _ = refCmp(cmp, q, negs[kk])
			}
			l, gp, gn := refRowLoss(o, p, scores)
			loss += l
			gq := make([]float64, d)
			_, cq, cy := refCmp(cmp, q, y)
			for j := range d {
				gq[j] += gp * cq[j]
				gy[j] += gp * cy[j]
			}
			for kk := range m {
				_, cq, cn := refCmp(cmp, q, negs[kk])
				for j := range d {
					gq[j] += gn[kk] * cq[j]
					gNeg[kk][j] += gn[kk] * cn[j]
				}
			}
			refBack(op, adj, d, x, rx, gq, gx, grx)
		}
		side(s, t, rg, false, gs, gt, grg)
		side(t, s, rh, !pair, gt, gs, grh)
		if lam := o.RegCoef; o.Reg() != workload.RegNone {
			cx := k.Complex()
			loss += lam * refReg(o.Reg(), cx, s, gs, lam)
			loss += lam * refReg(o.Reg(), cx, t, gt, lam)
			switch {
			case w > 0 && o.Reg() == workload.RegN3 && op == workload.OpComplexDiagonal:
				// each complex_diagonal operator's (re, im) moduli
				for b := 0; b < w; b += d {
					loss += lam * refReg(o.Reg(), true, r[b:b+d], gr[b:b+d], lam)
				}
			case w > 0 && op != workload.OpRotate:
				loss += lam * refReg(o.Reg(), false, r, gr, lam)
			}
		}
		addTo(gS, i, d, gs)
		addTo(gD, i, d, gt)
		if w > 0 {
			addTo(gR, i, w, gr)
		}
	}
	for kk := range m {
		addTo(gN, kk, d, gNeg[kk])
	}
	return loss
}

// refForward is op(x) with parameters r (adj: the named models' adjoint).
func refForward(op workload.Operator, adj bool, d int, x, r []float64) []float64 {
	q := make([]float64, d)
	h := d / 2
	switch op {
	case workload.OpNone:
		copy(q, x)
	case workload.OpDiagonal:
		for j := range d {
			q[j] = x[j] * r[j]
		}
	case workload.OpTranslation:
		for j := range d {
			if adj {
				q[j] = x[j] - r[j]
			} else {
				q[j] = x[j] + r[j]
			}
		}
	case workload.OpLinear, workload.OpAffine:
		for j := range d {
			for kk := range d {
				q[j] += r[j*d+kk] * x[kk]
			}
			if op == workload.OpAffine {
				q[j] += r[d*d+j]
			}
		}
	case workload.OpComplexDiagonal, workload.OpRotate:
		for c := range h {
			cr, ci := refRot(op, adj, r, c, h)
			q[c] = cr*x[c] - ci*x[c+h]
			q[c+h] = cr*x[c+h] + ci*x[c]
		}
	}
	return q
}

// refRot is the complex multiplier of coordinate c (conjugated when adj).
func refRot(op workload.Operator, adj bool, r []float64, c, h int) (float64, float64) {
	var cr, ci float64
	if op == workload.OpComplexDiagonal {
		cr, ci = r[c], r[c+h]
	} else {
		cr, ci = math.Cos(r[c]), math.Sin(r[c])
	}
	if adj {
		ci = -ci
	}
	return cr, ci
}

// refBack adds the gradient gq of q = op(x) into gx and gr.
func refBack(op workload.Operator, adj bool, d int, x, r, gq, gx, gr []float64) {
	h := d / 2
	switch op {
	case workload.OpNone:
		for j := range d {
			gx[j] += gq[j]
		}
	case workload.OpDiagonal:
		for j := range d {
			gx[j] += gq[j] * r[j]
			gr[j] += gq[j] * x[j]
		}
	case workload.OpTranslation:
		for j := range d {
			gx[j] += gq[j]
			if adj {
				gr[j] -= gq[j]
			} else {
				gr[j] += gq[j]
			}
		}
	case workload.OpLinear, workload.OpAffine:
		for j := range d {
			for kk := range d {
				gx[kk] += r[j*d+kk] * gq[j]
				gr[j*d+kk] += gq[j] * x[kk]
			}
			if op == workload.OpAffine {
				gr[d*d+j] += gq[j]
			}
		}
	case workload.OpComplexDiagonal, workload.OpRotate:
		for c := range h {
			cr, ci := refRot(op, adj, r, c, h)
			ar, ai := gq[c], gq[c+h]
			gx[c] += ar*cr + ai*ci
			gx[c+h] += -ar*ci + ai*cr
			gcr, gci := ar*x[c]+ai*x[c+h], -ar*x[c+h]+ai*x[c]
			sign := 1.0
			if adj {
				sign = -1
			}
			if op == workload.OpComplexDiagonal {
				gr[c] += gcr
				gr[c+h] += sign * gci
			} else {
				gr[c] += sign * (-gcr*ci + gci*cr)
			}
		}
	}
}

// refCmp is C(q, x) and its gradients ∂C/∂q, ∂C/∂x.
func refCmp(cmp workload.Comparator, q, x []float64) (float64, []float64, []float64) {
	d := len(q)
	gq, gx := make([]float64, d), make([]float64, d)
	switch cmp {
	case workload.CmpDot:
		var s float64
		for j := range d {
			s += q[j] * x[j]
			gq[j], gx[j] = x[j], q[j]
		}
		return s, gq, gx
	case workload.CmpCos:
		var dot, qq, xx float64
		for j := range d {
			dot += q[j] * x[j]
			qq += q[j] * q[j]
			xx += x[j] * x[j]
		}
		iq, ix := 1/math.Max(math.Sqrt(qq), 1e-30), 1/math.Max(math.Sqrt(xx), 1e-30)
		c := dot * iq * ix
		for j := range d {
			gq[j] = x[j]*iq*ix - c*q[j]*iq*iq
			gx[j] = q[j]*iq*ix - c*x[j]*ix*ix
		}
		return c, gq, gx
	case workload.CmpL2, workload.CmpSquaredL2:
		var s float64
		for j := range d {
			s += (q[j] - x[j]) * (q[j] - x[j])
		}
		f := 2.0
		score := -s
		if cmp == workload.CmpL2 {
			dist := math.Sqrt(math.Max(s, 1e-30))
			f, score = 1/dist, -dist
		}
		for j := range d {
			gq[j], gx[j] = -f*(q[j]-x[j]), f*(q[j]-x[j])
		}
		return score, gq, gx
	case workload.CmpL1:
		var s float64
		for j := range d {
			e := q[j] - x[j]
			s += math.Abs(e)
			sg := 0.0
			if e > 0 {
				sg = 1
			} else if e < 0 {
				sg = -1
			}
			gq[j], gx[j] = -sg, sg
		}
		return -s, gq, gx
	case workload.CmpModulusL1:
		h := d / 2
		var s float64
		for c := range h {
			a, b := q[c]-x[c], q[c+h]-x[c+h]
			dist := math.Sqrt(math.Max(a*a+b*b, 1e-30))
			s += dist
			gq[c], gq[c+h] = -a/dist, -b/dist
			gx[c], gx[c+h] = a/dist, b/dist
		}
		return -s, gq, gx
	}
	return math.NaN(), gq, gx
}

// refRowLoss is one row's loss, dL/dp and dL/dn_k.
func refRowLoss(o workload.Objective, p float64, n []float64) (float64, float64, []float64) {
	m := len(n)
	gn := make([]float64, m)
	softplus := func(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }
	sigmoid := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	weights := func(f float64) []float64 { // softmax of α·n_k, times f
		wt := make([]float64, m)
		mx := math.Inf(-1)
		for _, v := range n {
			mx = math.Max(mx, o.Adversarial*v)
		}
		var z float64
		for k, v := range n {
			wt[k] = math.Exp(o.Adversarial*v - mx)
			z += wt[k]
		}
		for k := range wt {
			wt[k] *= f / z
		}
		return wt
	}
	switch o.LossKind() {
	case workload.Ranking:
		wt := make([]float64, m)
		for k := range wt {
			wt[k] = 1
		}
		if o.Adversarial > 0 {
			wt = weights(float64(m))
		}
		var l, gp float64
		for k, v := range n {
			if h := o.Margin - p + v; h > 0 {
				l += wt[k] * h
				gn[k] = wt[k]
				gp -= wt[k]
			}
		}
		return l, gp, gn
	case workload.Logistic:
		wt := make([]float64, m)
		for k := range wt {
			wt[k] = 1 / float64(m)
		}
		if o.Adversarial > 0 {
			wt = weights(1)
		}
		g := o.Margin
		l := softplus(-(p + g))
		for k, v := range n {
			l += wt[k] * softplus(v+g)
			gn[k] = wt[k] * sigmoid(v+g)
		}
		return l, -sigmoid(-(p + g)), gn
	}
	mx := p
	for _, v := range n {
		mx = math.Max(mx, v)
	}
	z := math.Exp(p - mx)
	for _, v := range n {
		z += math.Exp(v - mx)
	}
	for k, v := range n {
		gn[k] = math.Exp(v-mx) / z
	}
	return mx + math.Log(z) - p, math.Exp(p-mx)/z - 1, gn
}

// refReg returns P(v) and adds lam·∂P/∂v into g (pairs: n3 on the (re, im)
// moduli).
func refReg(reg workload.Regularizer, pairs bool, v, g []float64, lam float64) float64 {
	var P float64
	if reg == workload.RegN3 && pairs {
		h := len(v) / 2
		for c := range h {
			a, b := v[c], v[c+h]
			mod := math.Sqrt(a*a + b*b)
			P += mod * mod * mod
			g[c] += lam * 3 * mod * a
			g[c+h] += lam * 3 * mod * b
		}
		return P
	}
	for j, a := range v {
		if reg == workload.RegN3 {
			P += math.Abs(a) * a * a
			g[j] += lam * 3 * math.Abs(a) * a
		} else {
			P += a * a
			g[j] += lam * 2 * a
		}
	}
	return P
}

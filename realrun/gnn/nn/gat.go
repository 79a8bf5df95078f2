package nn

import (
	"math"
	"math/rand/v2"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/model"
)

// GAT is a multi-head graph attention layer (DGL GATConv without
// attention dropout): z = fc(x) (no bias), split into heads of F
// features; for destination i and each j in N(i) ∪ {i} (a self loop is
// always added), e_ij = LeakyReLU_0.2(el_j + er_i) with el_j = z_j·attn_l
// and er_i = z_i·attn_r per head; α_ij = softmax over j; out_i = Σ_j α_ij
// z_j per head, the heads concatenated (OutDim heads·F) or averaged
// (OutDim F), plus bias (OutDim values).
//
// A destination's edges are numbered Ptr[i]+i … Ptr[i+1]+i: its
// neighbours in Nbr order, then its self loop.
type GAT struct {
	// FC is fc.weight (heads·F × in), AttnL and AttnR are attn_l and
	// attn_r (heads × F), Bias has OutDim values.
	FC, AttnL, AttnR, Bias Param
	in, f, heads           int
	concat                 bool
	noDx                   bool // Backward skips dx (SetInputGrad(false))

	x          []float32 // the last Forward's input (a view)
	b          *block.Block
	nsrc, ndst int
	z          []float32 // nsrc×heads·F
	el, er     []float32 // nsrc×heads, ndst×heads
	alpha      []float32 // edges×heads
	y          []float32 // ndst×OutDim

	dpre, der, dz, dx []float32
	rptr, redge, rdst []int32     // the edges by source: rptr[j]…rptr[j+1] index redge (edge ids) and rdst (their destinations)
	dattn             [][]float32 // per-worker dattn_l then dattn_r, 2·heads·F
	partials          [][]float32
}

// NewGAT returns a multi-head GAT layer: heads heads of outPerHead
// features, concatenated (OutDim heads·outPerHead) or averaged (OutDim
// outPerHead). fc.weight (heads·outPerHead × in), attn_l and attn_r
// (heads × outPerHead) are Glorot-uniform with gain √2 and PyTorch's fans
// for DGL's shapes — the variance of DGL's xavier_normal_(gain √2) — drawn
// from rng in that order; bias (OutDim) is zero. With mean the bias has
// outPerHead values: DGL's heads·outPerHead bias, averaged over the heads,
// is the same function (and, started at zero, gets equal gradients in
// every head).
func NewGAT(name string, in, outPerHead, heads int, concat bool, rng *rand.Rand) Layer {
	l := &GAT{in: in, f: outPerHead, heads: heads, concat: concat}
	hf := heads * outPerHead
	newParam := func(suffix string, shape ...int) Param {
		n := 1
		for _, s := range shape {
			n *= s
		}
		return Param{Name: name + suffix, Shape: shape, W: make([]float32, n), G: make([]float32, n)}
	}
	l.FC = newParam(".fc.weight", hf, in)
	l.AttnL = newParam(".attn_l", heads, outPerHead)
	l.AttnR = newParam(".attn_r", heads, outPerHead)
	l.Bias = newParam(".bias", l.OutDim())
	glorotGain(l.FC.W, in, hf, math.Sqrt2, rng)
	// DGL's attn_l is 1×heads×F: PyTorch's fan_in heads·F, fan_out F.
	glorotGain(l.AttnL.W, hf, outPerHead, math.Sqrt2, rng)
	glorotGain(l.AttnR.W, hf, outPerHead, math.Sqrt2, rng)
	return l
}

// glorotGain fills w uniformly in ±gain·√(6/(fanIn+fanOut)).
func glorotGain(w []float32, fanIn, fanOut int, gain float64, rng *rand.Rand) {
	a := gain * math.Sqrt(6/float64(fanIn+fanOut))
	for i := range w {
		w[i] = float32((2*rng.Float64() - 1) * a)
	}
}

// InDim returns the input width.
func (l *GAT) InDim() int { return l.in }

// OutDim returns heads·F when concatenating, else F.
func (l *GAT) OutDim() int {
	if l.concat {
		return l.heads * l.f
	}
	return l.f
}

// Params returns fc.weight, attn_l, attn_r and bias.
func (l *GAT) Params() []*Param { return []*Param{&l.FC, &l.AttnL, &l.AttnR, &l.Bias} }

// SetInputGrad says whether Backward must compute the gradient of the
// layer's input (true at first); with false it skips dx = dz·fc and
// returns nil (the parameters' gradients are the same).
func (l *GAT) SetInputGrad(need bool) { l.noDx = !need }

// leaky is LeakyReLU with slope 0.2.
func leaky(v float32) float32 {
	if v > 0 {
		return v
	}
	return 0.2 * v
}

// Forward computes z for every source row (one GEMM), the attention
// logits, and each destination's softmax-weighted sum.
func (l *GAT) Forward(b *block.Block, in []float32, train bool, rng *rand.Rand) []float32 {
	H, F, HF := l.heads, l.f, l.heads*l.f
	l.x, l.b, l.nsrc, l.ndst = in, b, b.NumSrc(), b.NumDst
	l.z = resize(l.z, l.nsrc*HF)
	l.el = resize(l.el, l.nsrc*H)
	l.er = resize(l.er, l.ndst*H)
	parallelRows(l.nsrc, func(_, lo, hi int) {
		z := l.z[lo*HF : hi*HF]
		clear(z)
		model.SgemmNT(hi-lo, HF, l.in, in[lo*l.in:hi*l.in], l.FC.W, z)
		for j := lo; j < hi; j++ {
			zj := l.z[j*HF : (j+1)*HF]
			for h := 0; h < H; h++ {
				l.el[j*H+h] = dot(zj[h*F:(h+1)*F], l.AttnL.W[h*F:(h+1)*F])
				if j < l.ndst {
					l.er[j*H+h] = dot(zj[h*F:(h+1)*F], l.AttnR.W[h*F:(h+1)*F])
				}
			}
		}
	})
	nE := len(b.Nbr) + l.ndst
	l.alpha = resize(l.alpha, nE*H)
	od := l.OutDim()
	l.y = resize(l.y, l.ndst*od)
	scale := float32(1)
	if !l.concat {
		scale = 1 / float32(H)
	}
	parallelRows(l.ndst, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			e0, deg := int(b.Ptr[i])+i, int(b.Ptr[i+1]-b.Ptr[i])
			nbr := b.Nbr[b.Ptr[i]:b.Ptr[i+1]]
			y := l.y[i*od : (i+1)*od]
			copy(y, l.Bias.W)
			for h := 0; h < H; h++ {
				er := l.er[i*H+h]
				m := leaky(l.el[i*H+h] + er) // the self loop
				for _, j := range nbr {
					m = max(m, leaky(l.el[int(j)*H+h]+er))
				}
				s := float32(0)
				for k := 0; k <= deg; k++ {
					j := i
					if k < deg {
						j = int(nbr[k])
					}
					a := expf(leaky(l.el[j*H+h]+er) - m)
					l.alpha[(e0+k)*H+h] = a
					s += a
				}
				yh := y
				if l.concat {
					yh = y[h*F : (h+1)*F]
				}
				for k := 0; k <= deg; k++ {
					j := i
					if k < deg {
						j = int(nbr[k])
					}
					a := l.alpha[(e0+k)*H+h] / s
					l.alpha[(e0+k)*H+h] = a
					model.Axpy(a*scale, l.z[j*HF+h*F:j*HF+(h+1)*F], yh)
				}
			}
		}
	})
	return l.y
}

// Backward adds the parameters' gradients and returns the input's (nil
// after SetInputGrad(false)).
func (l *GAT) Backward(dOut []float32) []float32 {
	H, F, HF, od := l.heads, l.f, l.heads*l.f, l.OutDim()
	b := l.b
	nE := len(b.Nbr) + l.ndst
	scale := float32(1)
	if !l.concat {
		scale = 1 / float32(H)
	}
	for i := 0; i < l.ndst; i++ {
		for k, v := range dOut[i*od : (i+1)*od] {
			l.Bias.G[k] += v
		}
	}
	// gOut returns the gradient of destination i's head-h sum Σ_j α_ij z_j.
	gOut := func(i, h int) []float32 {
		if l.concat {
			return dOut[i*od+h*F : i*od+(h+1)*F]
		}
		return dOut[i*od : (i+1)*od] // times scale
	}

	// Per destination: the gradient of each edge's pre-activation logit
	// (dpre) and of er_i.
	l.dpre = resize(l.dpre, nE*H)
	l.der = resize(l.der, l.ndst*H)
	parallelRows(l.ndst, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			e0, deg := int(b.Ptr[i])+i, int(b.Ptr[i+1]-b.Ptr[i])
			nbr := b.Nbr[b.Ptr[i]:b.Ptr[i+1]]
			for h := 0; h < H; h++ {
				g := gOut(i, h)
				er := l.er[i*H+h]
				// dα_ij = g·z_j (kept in dpre), then s = Σ α dα.
				s := float32(0)
				for k := 0; k <= deg; k++ {
					j := i
					if k < deg {
						j = int(nbr[k])
					}
					da := scale * dot(g, l.z[j*HF+h*F:j*HF+(h+1)*F])
					l.dpre[(e0+k)*H+h] = da
					s += l.alpha[(e0+k)*H+h] * da
				}
				sr := float32(0)
				for k := 0; k <= deg; k++ {
					j := i
					if k < deg {
						j = int(nbr[k])
					}
					e := (e0+k)*H + h
					d := l.alpha[e] * (l.dpre[e] - s)
					if l.el[j*H+h]+er <= 0 {
						d *= 0.2
					}
					l.dpre[e] = d
					sr += d
				}
				l.der[i*H+h] = sr
			}
		}
	})

	// The edges by source, for the gradient of z without write conflicts.
	l.rptr = resizeI32(l.rptr, l.nsrc+1)
	clear(l.rptr)
	for _, j := range b.Nbr {
		l.rptr[j+1]++
	}
	for i := 0; i < l.ndst; i++ {
		l.rptr[i+1]++
	}
	for j := 0; j < l.nsrc; j++ {
		l.rptr[j+1] += l.rptr[j]
	}
	l.redge = resizeI32(l.redge, nE)
	l.rdst = resizeI32(l.rdst, nE)
	for i := 0; i < l.ndst; i++ {
		e0, deg := int(b.Ptr[i])+i, int(b.Ptr[i+1]-b.Ptr[i])
		for k := 0; k <= deg; k++ {
			j := i
			if k < deg {
				j = int(b.Nbr[int(b.Ptr[i])+k])
			}
			p := l.rptr[j]
			l.redge[p], l.rdst[p] = int32(e0+k), int32(i)
			l.rptr[j]++
		}
	}
	for j := l.nsrc; j > 0; j-- {
		l.rptr[j] = l.rptr[j-1]
	}
	l.rptr[0] = 0

	// Per source row: dz_j = Σ_edges α·g_i + del_j·attn_l (+ der_j·attn_r
	// for a destination row), the attention vectors' gradients, and dx_j.
	l.dz = resize(l.dz, l.nsrc*HF)
	if !l.noDx {
		l.dx = resize(l.dx, l.nsrc*l.in)
	}
	for len(l.dattn) < Workers {
		l.dattn = append(l.dattn, nil)
	}
	parts := parallelRows(l.nsrc, func(w, lo, hi int) {
		l.dattn[w] = grow(l.dattn[w], 2*HF)
		dl, dr := l.dattn[w][:HF], l.dattn[w][HF:]
		dz := l.dz[lo*HF : hi*HF]
		clear(dz)
		for j := lo; j < hi; j++ {
			dzj := l.dz[j*HF : (j+1)*HF]
			zj := l.z[j*HF : (j+1)*HF]
			for h := 0; h < H; h++ {
				dzh := dzj[h*F : (h+1)*F]
				del := float32(0)
				for p := l.rptr[j]; p < l.rptr[j+1]; p++ {
					e, i := int(l.redge[p]), int(l.rdst[p])
					model.Axpy(scale*l.alpha[e*H+h], gOut(i, h), dzh)
					del += l.dpre[e*H+h]
				}
				model.Axpy(del, l.AttnL.W[h*F:(h+1)*F], dzh)
				model.Axpy(del, zj[h*F:(h+1)*F], dl[h*F:(h+1)*F])
				if j < l.ndst {
					der := l.der[j*H+h]
					model.Axpy(der, l.AttnR.W[h*F:(h+1)*F], dzh)
					model.Axpy(der, zj[h*F:(h+1)*F], dr[h*F:(h+1)*F])
				}
			}
		}
		if !l.noDx {
			dx := l.dx[lo*l.in : hi*l.in]
			clear(dx)
			model.SgemmNN(hi-lo, l.in, HF, dz, l.FC.W, dx)
		}
	})
	for w := 0; w < parts; w++ {
		for k := 0; k < HF; k++ {
			l.AttnL.G[k] += l.dattn[w][k]
			l.AttnR.G[k] += l.dattn[w][HF+k]
		}
	}
	l.partials = tnParallel(l.partials, l.FC.G, HF, l.in, l.nsrc, l.dz, l.x)
	if l.noDx {
		return nil
	}
	return l.dx
}

// dot returns Σ a[k]·b[k] over len(a): AVX2 over the multiple-of-8
// prefix where it can, Go over the rest.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	if n := len(a) &^ 7; n > 0 && vecAct() {
		s = dotY(&a[0], &b[0], n)
		a, b = a[n:], b[n:]
	}
	var s0, s1, s2, s3 float32
	k := 0
	for ; k+4 <= len(a); k += 4 {
		s0 += a[k] * b[k]
		s1 += a[k+1] * b[k+1]
		s2 += a[k+2] * b[k+2]
		s3 += a[k+3] * b[k+3]
	}
	for ; k < len(a); k++ {
		s0 += a[k] * b[k]
	}
	return s + (s0 + s1) + (s2 + s3)
}

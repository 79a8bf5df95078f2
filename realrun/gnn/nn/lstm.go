package nn

import (
	"math"
	"math/rand/v2"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/model"
)

// SAGELSTM is GraphSAGE with the LSTM aggregator (DGL SAGEConv 'lstm'):
// the neighbours of destination i, in the block's Nbr order, are a
// sequence fed to an LSTM with input and hidden size in (PyTorch layout:
// weight_ih and weight_hh 4in×in, bias_ih and bias_hh 4in, gates i, f, g,
// o; h0 = c0 = 0); agg_i is its last hidden state (0 with no neighbours),
// and h_i = fc_self(x_i) + fc_neigh(agg_i), fc_self with bias, fc_neigh
// without.
//
// The destinations run sorted by degree, descending, so that the ones
// still running at step t are a prefix of that order: each step's
// hidden-to-gate product is one GEMM over them. The input-to-gate product
// is one GEMM over the distinct neighbour rows before the recurrence.
// Per-step values are stored step-major: step t's rows are off[t] …
// off[t]+act[t], one per running destination, in sorted order.
type SAGELSTM struct {
	// Wih, Whh, Bih, Bhh are the LSTM's weight_ih, weight_hh, bias_ih
	// and bias_hh.
	Wih, Whh, Bih, Bhh Param
	fcSelf, fcNeigh    *Linear
	in, out            int
	noDx               bool // Backward skips dx (SetInputGrad(false))

	// The last Forward's shapes and the sequence layout.
	x          []float32 // its input (a view)
	nsrc, ndst int
	perm       []int32 // sorted position → destination
	act, off   []int   // act[t]: destinations running at step t; off[t]: Σ_{s<t} act[s]; both len T+1
	uid        []int32 // sequence row → distinct-neighbour row
	urows      []int32 // distinct-neighbour row → source row
	mark       []int32 // source row → distinct-neighbour row + 1 (scratch)
	cnt        []int32 // scratch for the degree sort
	identity   bool    // every sequence row is its own distinct row

	xg    []float32 // distinct neighbour rows of the input, nU×in
	p     []float32 // their input-to-gate products + biases, nU×4in: pbuf, or gates when identity
	pbuf  []float32
	gates []float32 // activated gates i, f, g, o, E×4in
	cell  []float32 // cell state, E×in
	tc    []float32 // tanh(cell), E×in
	hprev []float32 // row off[t]+r: h_{t-1} of sorted destination r (0 at t = 0), E×in
	agg   []float32 // NumDst×in
	y     []float32 // NumDst×out

	dG, dP, dxg, dh, dc, dagg, dx []float32 // dP: dPbuf, or dG when identity
	dPbuf, zeros                  []float32
	partials                      [][]float32
}

// NewSAGELSTM returns a GraphSAGE layer with the LSTM aggregator. The
// LSTM's weights and biases are uniform in ±1/√in (PyTorch's
// initialisation), drawn from rng in the order weight_ih, weight_hh,
// bias_ih, bias_hh; then fc_self and fc_neigh are Glorot-uniform with
// the ReLU gain √2, as NewSAGE's (DGL's SAGEConv init); fc_self's bias is
// zero.
func NewSAGELSTM(name string, in, out int, rng *rand.Rand) Layer {
	l := &SAGELSTM{in: in, out: out}
	param := func(suffix string, shape ...int) Param {
		n := 1
		for _, s := range shape {
			n *= s
		}
		k := 1 / math.Sqrt(float64(in))
		w := make([]float32, n)
		for i := range w {
			w[i] = float32((2*rng.Float64() - 1) * k)
		}
		return Param{Name: name + ".lstm." + suffix, Shape: shape, W: w, G: make([]float32, n)}
	}
	l.Wih = param("weight_ih", 4*in, in)
	l.Whh = param("weight_hh", 4*in, in)
	l.Bih = param("bias_ih", 4*in)
	l.Bhh = param("bias_hh", 4*in)
	l.fcSelf = NewLinear(name+".fc_self", in, out, rng)
	l.fcNeigh = NewLinear(name+".fc_neigh", in, out, rng)
	for _, w := range [][]float32{l.fcSelf.W.W, l.fcNeigh.W.W} {
		for i := range w {
			w[i] *= math.Sqrt2 // the ReLU gain, as NewSAGE (DGL's SAGEConv init)
		}
	}
	return l
}

// InDim returns the input width.
func (l *SAGELSTM) InDim() int { return l.in }

// OutDim returns the output width.
func (l *SAGELSTM) OutDim() int { return l.out }

// Params returns the LSTM's weight_ih, weight_hh, bias_ih, bias_hh, then
// fc_self's weight and bias and fc_neigh's weight.
func (l *SAGELSTM) Params() []*Param {
	return []*Param{&l.Wih, &l.Whh, &l.Bih, &l.Bhh, &l.fcSelf.W, &l.fcSelf.B, &l.fcNeigh.W}
}

// SetInputGrad says whether Backward must compute the gradient of the
// layer's input (true at first). With false, Backward skips what only
// dx needs — fc_self's dX and the input-to-gate product's dX
// (dP·weight_ih) — and returns nil; the gradient through time (dh, dc,
// the gates') still runs, for the weights, whose gradients are the same.
func (l *SAGELSTM) SetInputGrad(need bool) { l.noDx = !need }

// Forward runs the LSTM over every destination's neighbour sequence and
// returns fc_self(x_i) + fc_neigh(agg_i) for the destinations.
func (l *SAGELSTM) Forward(b *block.Block, in []float32, train bool, rng *rand.Rand) []float32 {
	H, G4 := l.in, 4*l.in
	l.x, l.nsrc, l.ndst = in, b.NumSrc(), b.NumDst
	l.layout(b)
	E := l.off[len(l.off)-1]
	T := len(l.act) - 1
	nU := len(l.urows)

	// The input-to-gate products of the distinct neighbour rows, with both
	// biases: one GEMM (straight into gates when no row repeats).
	l.gates = resize(l.gates, E*G4)
	if l.identity {
		l.p = l.gates
	} else {
		l.pbuf = resize(l.pbuf, nU*G4)
		l.p = l.pbuf
	}
	l.xg = resize(l.xg, nU*H)
	parallelRows(nU, func(_, lo, hi int) {
		for u := lo; u < hi; u++ {
			copy(l.xg[u*H:(u+1)*H], in[int(l.urows[u])*H:int(l.urows[u]+1)*H])
			pr := l.p[u*G4 : (u+1)*G4]
			for k := range pr {
				pr[k] = l.Bih.W[k] + l.Bhh.W[k]
			}
		}
		model.SgemmNT(hi-lo, G4, H, l.xg[lo*H:hi*H], l.Wih.W, l.p[lo*G4:hi*G4])
	})

	// The recurrence.
	l.cell = resize(l.cell, E*H)
	l.tc = resize(l.tc, E*H)
	l.hprev = grow(l.hprev, E*H)
	l.agg = grow(l.agg, l.ndst*H)
	for t := 0; t < T; t++ {
		a, o, an := l.act[t], l.off[t], l.act[t+1]
		parallelRows(a, func(_, lo, hi int) {
			g := l.gates[(o+lo)*G4 : (o+hi)*G4]
			if !l.identity {
				for r := lo; r < hi; r++ {
					u := int(l.uid[o+r])
					copy(g[(r-lo)*G4:(r-lo+1)*G4], l.p[u*G4:(u+1)*G4])
				}
			}
			if t > 0 {
				model.SgemmNT(hi-lo, G4, H, l.hprev[(o+lo)*H:(o+hi)*H], l.Whh.W, g)
			}
			for r := lo; r < hi; r++ {
				row := (o + r)
				gr := l.gates[row*G4 : (row+1)*G4]
				gi, gf, gg, go_ := gr[:H], gr[H:2*H], gr[2*H:3*H], gr[3*H:G4]
				c := l.cell[row*H : (row+1)*H]
				tc := l.tc[row*H : (row+1)*H]
				var cp []float32
				if t > 0 {
					p := l.off[t-1] + r
					cp = l.cell[p*H : (p+1)*H]
				}
				var hout []float32
				if r < an {
					p := l.off[t+1] + r
					hout = l.hprev[p*H : (p+1)*H]
				} else {
					d := int(l.perm[r])
					hout = l.agg[d*H : (d+1)*H]
				}
				sigmoidSlice(gr[:2*H])
				tanhSlice(gg, gg)
				sigmoidSlice(go_)
				if t > 0 {
					for k := 0; k < H; k++ {
						c[k] = gi[k]*gg[k] + gf[k]*cp[k]
					}
				} else {
					for k := 0; k < H; k++ {
						c[k] = gi[k] * gg[k]
					}
				}
				tanhSlice(c, tc)
				for k := 0; k < H; k++ {
					hout[k] = go_[k] * tc[k]
				}
			}
		})
	}

	// h_i = fc_self(x_i) + fc_neigh(agg_i).
	ys := l.fcSelf.forwardRows(in[:l.ndst*H], l.ndst)
	yn := l.fcNeigh.forwardRows(l.agg, l.ndst)
	l.y = resize(l.y, l.ndst*l.out)
	for i := range l.y {
		l.y[i] = ys[i] + yn[i]
	}
	return l.y
}

// layout sorts b's destinations by degree (descending, ties by index) and
// builds the step-major sequence: act, off, perm, and the distinct
// neighbour rows urows with each sequence row's index into them (uid).
func (l *SAGELSTM) layout(b *block.Block) {
	n := b.NumDst
	T := 0
	for i := 0; i < n; i++ {
		T = max(T, int(b.Ptr[i+1]-b.Ptr[i]))
	}
	// Counting sort by degree, descending.
	l.cnt = resizeI32(l.cnt, T+2)
	clear(l.cnt)
	for i := 0; i < n; i++ {
		l.cnt[T-int(b.Ptr[i+1]-b.Ptr[i])+1]++
	}
	for d := 1; d < len(l.cnt); d++ {
		l.cnt[d] += l.cnt[d-1]
	}
	l.perm = resizeI32(l.perm, n)
	for i := 0; i < n; i++ {
		k := T - int(b.Ptr[i+1]-b.Ptr[i])
		l.perm[l.cnt[k]] = int32(i)
		l.cnt[k]++
	}
	// act[t] = #destinations of degree > t: the sorted prefix.
	l.act = l.act[:0]
	l.off = l.off[:0]
	a, o := n, 0
	for t := 0; t <= T; t++ {
		for a > 0 && int(b.Ptr[l.perm[a-1]+1]-b.Ptr[l.perm[a-1]]) <= t {
			a--
		}
		l.act = append(l.act, a)
		l.off = append(l.off, o)
		o += a
	}
	E := o
	// Distinct neighbour rows, numbered by first appearance in step-major
	// order.
	l.mark = resizeI32(l.mark, b.NumSrc())
	clear(l.mark)
	l.uid = resizeI32(l.uid, E)
	l.urows = l.urows[:0]
	for t := 0; t < T; t++ {
		for r := 0; r < l.act[t]; r++ {
			d := l.perm[r]
			j := b.Nbr[int(b.Ptr[d])+t]
			if l.mark[j] == 0 {
				l.urows = append(l.urows, j)
				l.mark[j] = int32(len(l.urows))
			}
			l.uid[l.off[t]+r] = l.mark[j] - 1
		}
	}
	l.identity = len(l.urows) == E
}

// Backward runs backpropagation through time over every sequence, adds
// the parameters' gradients, and returns the gradient of the input (nil
// after SetInputGrad(false)).
func (l *SAGELSTM) Backward(dOut []float32) []float32 {
	H, G4 := l.in, 4*l.in
	E := l.off[len(l.off)-1]
	T := len(l.act) - 1
	nU := len(l.urows)

	l.dagg = grow(l.dagg, l.ndst*H)
	l.fcNeigh.backwardRows(dOut, l.ndst, l.dagg)
	clear(l.fcNeigh.B.G) // fc_neigh has no bias: drop the sum backwardRows added
	if l.noDx {
		l.fcSelf.backwardRows(dOut, l.ndst, nil)
	} else {
		l.dx = grow(l.dx, l.nsrc*H)
		l.fcSelf.backwardRows(dOut, l.ndst, l.dx[:l.ndst*H])
	}

	l.dG = resize(l.dG, E*G4)
	a0 := l.act[0]
	l.dh = grow(l.dh, a0*H) // dh[r]: the gradient of h_t of sorted destination r from step t+1
	l.dc = grow(l.dc, a0*H) // dc[r]: the gradient of c_t from step t+1 (through f_{t+1})
	nv := 0                 // the features the AVX2 kernel takes, a multiple of 8
	if vecAct() {
		nv = H &^ 7
	}
	l.zeros = grow(l.zeros, H)
	for t := T - 1; t >= 0; t-- {
		a, o, an := l.act[t], l.off[t], l.act[t+1]
		parallelRows(a, func(_, lo, hi int) {
			for r := lo; r < hi; r++ {
				row := o + r
				gr := l.gates[row*G4 : (row+1)*G4]
				gi, gf, gg, go_ := gr[:H], gr[H:2*H], gr[2*H:3*H], gr[3*H:G4]
				dr := l.dG[row*G4 : (row+1)*G4]
				di, df, dg, do := dr[:H], dr[H:2*H], dr[2*H:3*H], dr[3*H:G4]
				tc := l.tc[row*H : (row+1)*H]
				var cp []float32
				if t > 0 {
					p := l.off[t-1] + r
					cp = l.cell[p*H : (p+1)*H]
				}
				dc := l.dc[r*H : (r+1)*H]
				dh := l.dh[r*H : (r+1)*H]
				if r >= an { // the last step of this sequence: dh from fc_neigh
					d := int(l.perm[r])
					dh = l.dagg[d*H : (d+1)*H]
					clear(dc)
				}
				k0 := 0
				if nv > 0 {
					cpp := &l.zeros[0]
					if t > 0 {
						cpp = &cp[0]
					}
					lstmCellBackY(&gr[0], &tc[0], cpp, &dh[0], &dc[0], &dr[0], H, nv)
					k0 = nv
				}
				for k := k0; k < H; k++ {
					i, f, gv, ov, th := gi[k], gf[k], gg[k], go_[k], tc[k]
					dhk := dh[k]
					dck := dc[k] + dhk*ov*(1-th*th)
					do[k] = dhk * th * ov * (1 - ov)
					di[k] = dck * gv * i * (1 - i)
					dg[k] = dck * i * (1 - gv*gv)
					if t > 0 {
						df[k] = dck * cp[k] * f * (1 - f)
					} else {
						df[k] = 0
					}
					dc[k] = dck * f
				}
			}
			if t > 0 {
				dh := l.dh[lo*H : hi*H]
				clear(dh)
				model.SgemmNN(hi-lo, H, G4, l.dG[(o+lo)*G4:(o+hi)*G4], l.Whh.W, dh)
			}
		})
	}

	// Through the input-to-gate products.
	if l.identity {
		l.dP = l.dG
	} else {
		l.dPbuf = grow(l.dPbuf, nU*G4)
		l.dP = l.dPbuf
		// Column ranges: no two workers add to the same element.
		parallelRows(G4, func(_, lo, hi int) {
			for e := 0; e < E; e++ {
				u := int(l.uid[e])
				dst := l.dP[u*G4+lo : u*G4+hi]
				for k, v := range l.dG[e*G4+lo : e*G4+hi] {
					dst[k] += v
				}
			}
		})
	}
	// Both biases get the column sums of dP; split by columns.
	parallelRows(G4, func(_, lo, hi int) {
		bi, bh := l.Bih.G[lo:hi], l.Bhh.G[lo:hi]
		for u := 0; u < nU; u++ {
			for k, v := range l.dP[u*G4+lo : u*G4+hi] {
				bi[k] += v
				bh[k] += v
			}
		}
	})
	if !l.noDx {
		l.dxg = resize(l.dxg, nU*H)
		parallelRows(nU, func(_, lo, hi int) {
			clear(l.dxg[lo*H : hi*H])
			model.SgemmNN(hi-lo, H, G4, l.dP[lo*G4:hi*G4], l.Wih.W, l.dxg[lo*H:hi*H])
			for u := lo; u < hi; u++ { // distinct rows: no two workers share one
				dst := l.dx[int(l.urows[u])*H : int(l.urows[u]+1)*H]
				for k, v := range l.dxg[u*H : (u+1)*H] {
					dst[k] += v
				}
			}
		})
	}
	l.addTN(l.Wih.G, G4, H, nU, l.dP, l.xg)
	if a0 < E {
		l.addTN(l.Whh.G, G4, H, E-a0, l.dG[a0*G4:], l.hprev[a0*H:])
	}
	if l.noDx {
		return nil
	}
	return l.dx
}

// addTN adds Aᵀ·B to g (m×n), A rows×m and B rows×n, split over the rows
// with per-worker partial sums.
func (l *SAGELSTM) addTN(g []float32, m, n, rows int, A, B []float32) {
	l.partials = tnParallel(l.partials, g, m, n, rows, A, B)
}

// tnParallel adds Aᵀ·B to g (m×n), A rows×m and B rows×n, split over the
// rows with per-worker partial sums kept in partials (returned, grown).
func tnParallel(partials [][]float32, g []float32, m, n, rows int, A, B []float32) [][]float32 {
	for len(partials) < Workers {
		partials = append(partials, nil)
	}
	parts := parallelRows(rows, func(w, lo, hi int) {
		p := g
		if min(Workers, rows/minRows) > 1 { // parallelRows splits: sum apart

			partials[w] = grow(partials[w], m*n)
			p = partials[w]
		}
		model.SgemmTN(m, n, hi-lo, A[lo*m:hi*m], B[lo*n:hi*n], p)
	})
	if parts > 1 {
		for w := 0; w < parts; w++ {
			for i, v := range partials[w][:m*n] {
				g[i] += v
			}
		}
	}
	return partials
}

// resize returns buf with length n, reusing its array when it can; the
// contents are not cleared.
func resize(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

// resizeI32 is resize for int32.
func resizeI32(buf []int32, n int) []int32 {
	if cap(buf) < n {
		return make([]int32, n)
	}
	return buf[:n]
}

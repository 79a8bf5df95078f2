package nn

import (
	"math"
	"math/rand/v2"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/model"
)

// Aggregator is how a GraphSAGE layer combines a node's neighbours.
type Aggregator int

// The aggregators.
const (
	Mean Aggregator = iota
	Pool
	LSTM
)

// SAGE is a GraphSAGE layer with the mean or max-pool aggregator, as DGL's
// SAGEConv: h_i = fc_self(x_i) + fc_neigh(agg_i), where agg_i is the mean
// of the neighbours' rows (Mean) or the elementwise max of
// ReLU(fc_pool(x_j)) over the neighbours (Pool), and 0 for a destination
// without neighbours. fc_self has a bias, fc_neigh none; fc_pool (in×in)
// has one. A narrowing Mean layer may apply fc_neigh to the source rows
// before the mean, as DGL does, where that saves work (projectFirst): the
// same function, rounded differently.
type SAGE struct {
	// Self and SelfB are fc_self's weight (out×in) and bias, Neigh is
	// fc_neigh's weight (out×in).
	Self, SelfB, Neigh Param
	// PoolW (in×in) and PoolB are fc_pool's weight and bias (Pool only).
	PoolW, PoolB Param
	agg          Aggregator
	in, out      int
	noDx         bool
	// order forces Mean's order of operations (tests and benchmarks):
	// 0 lets projectFirst choose, 1 aggregates first, 2 projects first.
	order int

	// The last Forward's state.
	b    *block.Block
	x    []float32 // its input (a view)
	proj bool      // Mean projected first (h unused, p = x·fc_neighᵀ)
	h    []float32 // NumDst×in: the aggregates (not when proj)
	p    []float32 // Pool: NumSrc×in, ReLU(fc_pool(x)); proj: NumSrc×out, x·fc_neighᵀ
	arg  []int32   // Pool: NumDst×in, the source row of each maximum (-1: no neighbour, or a maximum of 0)
	y    []float32

	// Backward's buffers.
	dx, dh, dp []float32
	rptr, rdst []int32     // Mean: the block's edges by source
	partials   [][]float32 // per-worker parameter gradients (worker 0 adds into G)
	dOut       []float32   // Backward's argument
	needDx     bool        // this Backward computes dx

	// The row-range passes, bound once so that calls do not allocate.
	poolFn, aggFn, bwdFn, meanDxFn, scatterFn, poolBwdFn, selfDxFn, clearDpFn func(w, lo, hi int)
	projFn, projAggFn, projDpFn, projBwdFn                                    func(w, lo, hi int)
}

// NewSAGE returns a GraphSAGE layer with the Mean or Pool aggregator
// (LSTM: NewSAGELSTM; another value panics, a programming error). Like
// DGL's reset_parameters, the weights are Glorot-uniform with the ReLU
// gain √2, drawn from rng in the order fc_pool, fc_self, fc_neigh; the
// biases start at zero. Parameter names are name+".fc_self.weight",
// ".fc_self.bias", ".fc_neigh.weight" and, for Pool, ".fc_pool.weight",
// ".fc_pool.bias", in PyTorch's layouts (weights out×in).
func NewSAGE(name string, agg Aggregator, in, out int, rng *rand.Rand) Layer {
	if agg != Mean && agg != Pool {
		panic("nn.NewSAGE: the aggregator is not Mean or Pool")
	}
	l := &SAGE{agg: agg, in: in, out: out}
	param := func(suffix string, shape ...int) Param {
		n := 1
		for _, s := range shape {
			n *= s
		}
		return Param{Name: name + suffix, Shape: shape, W: make([]float32, n), G: make([]float32, n)}
	}
	if agg == Pool {
		l.PoolW = param(".fc_pool.weight", in, in)
		l.PoolB = param(".fc_pool.bias", in)
		sageGlorot(l.PoolW.W, in, in, rng)
	}
	l.Self = param(".fc_self.weight", out, in)
	l.SelfB = param(".fc_self.bias", out)
	l.Neigh = param(".fc_neigh.weight", out, in)
	sageGlorot(l.Self.W, in, out, rng)
	sageGlorot(l.Neigh.W, in, out, rng)
	l.poolFn, l.aggFn, l.bwdFn = l.poolRows, l.aggRows, l.bwdRows
	l.meanDxFn, l.scatterFn, l.poolBwdFn = l.meanDxRows, l.scatterCols, l.poolBwdRows
	l.selfDxFn, l.clearDpFn = l.selfDxRows, l.clearDpRows
	l.projFn, l.projAggFn, l.projDpFn, l.projBwdFn = l.projRows, l.projAggRows, l.projDpRows, l.projBwdRows
	return l
}

// sageGlorot is glorot with the ReLU gain √2 (DGL's SAGEConv init).
func sageGlorot(w []float32, fanIn, fanOut int, rng *rand.Rand) {
	glorot(w, fanIn, fanOut, rng)
	for i := range w {
		w[i] *= math.Sqrt2
	}
}

// InDim returns the input width.
func (l *SAGE) InDim() int { return l.in }

// OutDim returns the output width.
func (l *SAGE) OutDim() int { return l.out }

// Params returns fc_self's weight and bias, fc_neigh's weight and, for
// Pool, fc_pool's weight and bias.
func (l *SAGE) Params() []*Param {
	ps := []*Param{&l.Self, &l.SelfB, &l.Neigh}
	if l.agg == Pool {
		ps = append(ps, &l.PoolW, &l.PoolB)
	}
	return ps
}

// SetInputGrad says whether Backward must compute the gradient of the
// layer's input (true at first). A model's first layer, whose input is
// the features, can set it false: Backward then skips that work and
// returns nil.
func (l *SAGE) SetInputGrad(need bool) { l.noDx = !need }

// Forward returns the destination rows from the source rows in; train
// and rng are unused (the layer has no dropout of its own).
func (l *SAGE) Forward(b *block.Block, in []float32, train bool, rng *rand.Rand) []float32 {
	nd, ns, k := b.NumDst, b.NumSrc(), l.in
	l.b, l.x = b, in[:ns*k]
	l.y = grow(l.y, nd*l.out)
	l.proj = l.agg == Mean && (l.order == 2 || l.order == 0 && projectFirst(k, l.out, nd, ns, len(b.Nbr)))
	if l.proj {
		l.p = sageResize(l.p, ns*l.out) // projRows sets every element
		parallelRows(ns, l.projFn)
		parallelRows(nd, l.projAggFn)
		return l.y
	}
	l.h = grow(l.h, nd*k)
	if l.agg == Pool {
		l.p = sageResize(l.p, ns*k) // poolRows sets every element
		parallelRows(ns, l.poolFn)
		if cap(l.arg) < nd*k {
			l.arg = make([]int32, nd*k)
		}
		l.arg = l.arg[:nd*k]
	}
	parallelRows(nd, l.aggFn)
	return l.y
}

// poolRows sets p = ReLU(x·fc_poolᵀ + b) over source rows [lo, hi).
func (l *SAGE) poolRows(_, lo, hi int) {
	k := l.in
	p := l.p[lo*k : hi*k]
	for i := 0; i < hi-lo; i++ {
		copy(p[i*k:(i+1)*k], l.PoolB.W)
	}
	model.SgemmNT(hi-lo, k, k, l.x[lo*k:hi*k], l.PoolW.W, p)
	for i, v := range p {
		p[i] = max(v, 0) // branch-free, unlike if v < 0
	}
}

// aggRows aggregates destinations [lo, hi) and computes their output rows.
func (l *SAGE) aggRows(_, lo, hi int) {
	b, x, k, o := l.b, l.x, l.in, l.out
	for i := lo; i < hi; i++ {
		h := l.h[i*k : (i+1)*k]
		nb := b.Nbr[b.Ptr[i]:b.Ptr[i+1]]
		if l.agg == Mean {
			a := 1 / float32(len(nb))
			for _, j := range nb {
				model.Axpy(a, x[int(j)*k:int(j+1)*k], h)
			}
			continue
		}
		arg := l.arg[i*k : (i+1)*k]
		if len(nb) == 0 {
			for f := range arg {
				arg[f] = -1
			}
			continue
		}
		j0 := nb[0]
		copy(h, l.p[int(j0)*k:int(j0+1)*k])
		for f := range arg {
			arg[f] = j0
		}
		for _, j := range nb[1:] {
			p := l.p[int(j)*k : int(j+1)*k]
			p = p[:len(h)]
			for f, v := range p {
				if v > h[f] {
					h[f], arg[f] = v, j
				}
			}
		}
		// A maximum of 0 is a ReLU at rest: no gradient flows back
		// (ReLU'(0) = 0, as PyTorch has it), so Backward needs no mask.
		for f, v := range h {
			if v == 0 {
				arg[f] = -1
			}
		}
	}
	y := l.y[lo*o : hi*o]
	for i := 0; i < hi-lo; i++ {
		copy(y[i*o:(i+1)*o], l.SelfB.W)
	}
	model.SgemmNT(hi-lo, o, k, x[lo*k:hi*k], l.Self.W, y)
	model.SgemmNT(hi-lo, o, k, l.h[lo*k:hi*k], l.Neigh.W, y)
}

// sageAdd adds x to y over len(y).
func sageAdd(y, x []float32) {
	x = x[:len(y)]
	f := 0
	for ; f+4 <= len(y); f += 4 {
		y[f] += x[f]
		y[f+1] += x[f+1]
		y[f+2] += x[f+2]
		y[f+3] += x[f+3]
	}
	for ; f < len(y); f++ {
		y[f] += x[f]
	}
}

// workerGrad returns worker w's gradient accumulator of n floats: g itself
// for worker 0, a zeroed per-worker buffer (at offset off of its
// partial) for the others, which addPartials folds into the G's after.
func (l *SAGE) workerGrad(w int, g []float32, off int) []float32 {
	if w == 0 {
		return g
	}
	return l.partials[w][off : off+len(g)]
}

// preparePartials sizes the per-worker buffers for n floats each, zeroed.
func (l *SAGE) preparePartials(n int) {
	for len(l.partials) < Workers {
		l.partials = append(l.partials, nil)
	}
	for w := 1; w < Workers; w++ {
		l.partials[w] = grow(l.partials[w], n)
	}
}

// addPartials adds workers 1…parts-1's buffers, laid out as gs in order,
// into gs.
func (l *SAGE) addPartials(parts int, gs ...[]float32) {
	for w := 1; w < parts; w++ {
		off := 0
		for _, g := range gs {
			sageAdd(g, l.partials[w][off:off+len(g)])
			off += len(g)
		}
	}
}

// Backward adds the parameters' gradients and returns the input's (nil
// after SetInputGrad(false)).
func (l *SAGE) Backward(dOut []float32) []float32 {
	b := l.b
	nd, ns, k := b.NumDst, b.NumSrc(), l.in
	l.dOut, l.needDx = dOut, !l.noDx
	if l.needDx {
		l.dx = sageResize(l.dx, ns*k) // each row is cleared by the pass that first adds to it
	}
	switch {
	case l.proj:
		l.projBackward() // sets dx's rows
	case l.agg == Mean:
		l.backwardDst()
		if l.needDx {
			l.meanBackward()
		}
	default:
		l.backwardDst()
		l.poolBackward()
	}
	if l.needDx {
		parallelRows(nd, l.selfDxFn)
	}
	l.dOut = nil
	if !l.needDx {
		return nil
	}
	return l.dx
}

// backwardDst runs bwdRows over the destinations: fc_self's and
// fc_neigh's gradients and dh.
func (l *SAGE) backwardDst() {
	l.dh = sageResize(l.dh, l.b.NumDst*l.in)
	if l.needDx || l.agg == Pool {
		clear(l.dh) // bwdRows adds into it
	}
	l.preparePartials(len(l.Self.G) + len(l.Neigh.G) + len(l.SelfB.G))
	parts := parallelRows(l.b.NumDst, l.bwdFn)
	l.addPartials(parts, l.Self.G, l.Neigh.G, l.SelfB.G)
}

// bwdRows: for destinations [lo, hi), the gradients of fc_self and,
// unless the layer projected first, fc_neigh's gradient and dh =
// dOut·fc_neigh (for Mean only when dx is needed).
func (l *SAGE) bwdRows(w, lo, hi int) {
	k, o := l.in, l.out
	sw, nw := len(l.Self.G), len(l.Neigh.G)
	d := l.dOut[lo*o : hi*o]
	model.SgemmTN(o, k, hi-lo, d, l.x[lo*k:hi*k], l.workerGrad(w, l.Self.G, 0))
	if !l.proj {
		if l.needDx || l.agg == Pool { // Mean's dh flows to dx only
			model.SgemmNN(hi-lo, k, o, d, l.Neigh.W, l.dh[lo*k:hi*k])
		}
		model.SgemmTN(o, k, hi-lo, d, l.h[lo*k:hi*k], l.workerGrad(w, l.Neigh.G, sw))
	}
	gb := l.workerGrad(w, l.SelfB.G, sw+nw)
	for i := 0; i < hi-lo; i++ {
		sageAdd(gb, d[i*o:(i+1)*o])
	}
}

// meanBackward adds dx_j += dh_i/deg_i over the edges, by source row (no
// two workers write one row).
func (l *SAGE) meanBackward() {
	l.reverseIndex()
	parallelRows(l.b.NumSrc(), l.meanDxFn)
}

// reverseIndex sets rptr and rdst to the block's edges by source row:
// rdst[rptr[j-1]:rptr[j]] (from 0 for j = 0) are the destinations that
// read source row j.
func (l *SAGE) reverseIndex() {
	b := l.b
	ns, nd := b.NumSrc(), b.NumDst
	l.rptr = sageGrowI32(l.rptr, ns+1)
	clear(l.rptr)
	for _, j := range b.Nbr[:b.Ptr[nd]] {
		l.rptr[j+1]++
	}
	for j := 0; j < ns; j++ {
		l.rptr[j+1] += l.rptr[j]
	}
	l.rdst = sageGrowI32(l.rdst, int(b.Ptr[nd]))
	for i := 0; i < nd; i++ { // after this, rptr[j] is where row j ends
		for _, j := range b.Nbr[b.Ptr[i]:b.Ptr[i+1]] {
			l.rdst[l.rptr[j]] = int32(i)
			l.rptr[j]++
		}
	}
}

// selfDxRows adds dOut·fc_self to dx's destination rows [lo, hi), after
// the aggregator's pass has set them.
func (l *SAGE) selfDxRows(_, lo, hi int) {
	k, o := l.in, l.out
	model.SgemmNN(hi-lo, k, o, l.dOut[lo*o:hi*o], l.Self.W, l.dx[lo*k:hi*k])
}

// meanDxRows sets source rows [lo, hi) of dx to their share of the mean's
// gradient.
func (l *SAGE) meanDxRows(_, lo, hi int) { l.meanScatter(l.dx, l.dh, l.in, lo, hi) }

// meanScatter sets source rows [lo, hi) of out (width w) to Σ over the
// destinations i that read them of g_i/deg(i): the mean's transpose,
// through the reverse index.
func (l *SAGE) meanScatter(out, g []float32, w, lo, hi int) {
	b := l.b
	start := int32(0)
	if lo > 0 {
		start = l.rptr[lo-1]
	}
	for j := lo; j < hi; j++ {
		row := out[j*w : (j+1)*w]
		clear(row)
		for _, i := range l.rdst[start:l.rptr[j]] {
			model.Axpy(1/float32(b.Ptr[i+1]-b.Ptr[i]), g[int(i)*w:int(i+1)*w], row)
		}
		start = l.rptr[j]
	}
}

// poolBackward routes dh to the maxima's rows, through the ReLU, and
// back through fc_pool.
func (l *SAGE) poolBackward() {
	ns := l.b.NumSrc()
	l.dp = sageResize(l.dp, ns*l.in)
	parallelRows(ns, l.clearDpFn)
	parallelRows(l.in, l.scatterFn)
	l.preparePartials(len(l.PoolW.G) + len(l.PoolB.G))
	parts := parallelRows(ns, l.poolBwdFn)
	l.addPartials(parts, l.PoolW.G, l.PoolB.G)
}

// clearDpRows zeroes dp's rows [lo, hi).
func (l *SAGE) clearDpRows(_, lo, hi int) { clear(l.dp[lo*l.in : hi*l.in]) }

// scatterCols adds dh into dp at the maxima, for feature columns [lo, hi):
// split by column, no two workers write one element.
func (l *SAGE) scatterCols(_, lo, hi int) {
	k := l.in
	for i := 0; i < l.b.NumDst; i++ {
		arg := l.arg[i*k+lo : i*k+hi]
		dh := l.dh[i*k+lo : i*k+hi]
		for f, j := range arg {
			if j >= 0 {
				l.dp[int(j)*k+lo+f] += dh[f]
			}
		}
	}
}

// poolBwdRows: for source rows [lo, hi), dp through the ReLU, fc_pool's
// gradients and dx = dp·fc_pool, in slices of rows that stay in cache.
func (l *SAGE) poolBwdRows(w, lo, hi int) {
	for ; lo < hi; lo += PoolSlice {
		l.poolBwdSlice(w, lo, min(hi, lo+PoolSlice))
	}
}

// PoolSlice is how many rows poolBwdRows handles at a time (the memory
// estimator sizes the pool backward's buffers by it).
const PoolSlice = 256

func (l *SAGE) poolBwdSlice(w, lo, hi int) {
	k := l.in
	dp := l.dp[lo*k : hi*k] // ReLU's mask is in arg already
	model.SgemmTN(k, k, hi-lo, dp, l.x[lo*k:hi*k], l.workerGrad(w, l.PoolW.G, 0))
	gb := l.workerGrad(w, l.PoolB.G, len(l.PoolW.G))
	for i := 0; i < hi-lo; i++ {
		sageAdd(gb, dp[i*k:(i+1)*k])
	}
	if l.needDx {
		dx := l.dx[lo*k : hi*k]
		clear(dx)
		model.SgemmNN(hi-lo, k, k, dp, l.PoolW.W, dx)
	}
}

// sageResize returns buf resized to n, not zeroed, reusing its array
// when it can.
func sageResize(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

// sageGrowI32 returns buf resized to n (not zeroed), reusing its array
// when it can.
func sageGrowI32(buf []int32, n int) []int32 {
	if cap(buf) < n {
		return make([]int32, n)
	}
	return buf[:n]
}

// ProjectFirst reports whether a sage-mean layer of in → out features
// over a block of nd destinations, ns sources and e edges applies
// fc_neigh to every source row before the mean: the rule the layer
// follows (projectFirst), for those who size its buffers.
func ProjectFirst(in, out, nd, ns, e int) bool { return projectFirst(in, out, nd, ns, e) }

// projectFirst reports whether a Mean layer of in → out features over a
// block of nd destinations, ns sources and e edges applies fc_neigh to
// the source rows before the mean (as DGL's SAGEConv does whenever
// in > out, "lin_before_mp"): the mean then reads out-wide rows instead
// of in-wide ones, but fc_neigh's products run over all ns source rows
// instead of the nd destinations. It does when the estimated saving on
// the edges, e·(in−out) values gathered (forward) and scattered
// (backward), outweighs the extra products, 2·(ns−nd)·in·out
// multiply-adds, a gathered value costing about aggCost multiply-adds.
func projectFirst(in, out, nd, ns, e int) bool {
	return in > out && 2*float64(ns-nd)*float64(in)*float64(out) < aggCost*float64(e)*float64(in-out)
}

// aggCost is how many of the GEMMs' multiply-adds one value gathered or
// scattered by the mean costs, measured with BenchmarkSAGEOrder (CPU
// time, 2 cores): at 602 → 128 with 10 neighbours a destination, the
// orders tie with 1.5 times as many sources as destinations (where 16
// puts the break-even) and aggregating first is 1.25× faster with 2
// times; at the Reddit shape's layers projecting first is 1.17× faster
// where sources ≈ destinations (602 → 128) and 1.45× slower with 6.6
// times (128 → 41), which 16 both gets right.
const aggCost = 16

// projRows sets p = x·fc_neighᵀ over source rows [lo, hi).
func (l *SAGE) projRows(_, lo, hi int) {
	k, o := l.in, l.out
	p := l.p[lo*o : hi*o]
	clear(p)
	model.SgemmNT(hi-lo, o, k, l.x[lo*k:hi*k], l.Neigh.W, p)
}

// projAggRows sets destinations [lo, hi)'s output rows to fc_self(x_i)
// plus the mean of their neighbours' projected rows.
func (l *SAGE) projAggRows(_, lo, hi int) {
	b, k, o := l.b, l.in, l.out
	y := l.y[lo*o : hi*o]
	for i := 0; i < hi-lo; i++ {
		copy(y[i*o:(i+1)*o], l.SelfB.W)
	}
	model.SgemmNT(hi-lo, o, k, l.x[lo*k:hi*k], l.Self.W, y)
	for i := lo; i < hi; i++ {
		nb := b.Nbr[b.Ptr[i]:b.Ptr[i+1]]
		a := 1 / float32(len(nb))
		yi := l.y[i*o : (i+1)*o]
		for _, j := range nb {
			model.Axpy(a, l.p[int(j)*o:int(j+1)*o], yi)
		}
	}
}

// projBackward is Backward's work when the layer projected first:
// fc_self's gradients over the destinations, then by source row
// dp_j = Σ_{i reads j} dOut_i/deg_i, fc_neigh's gradient dpᵀ·x and
// dx = dp·fc_neigh.
func (l *SAGE) projBackward() {
	ns := l.b.NumSrc()
	l.preparePartials(len(l.Self.G) + len(l.Neigh.G) + len(l.SelfB.G))
	parts := parallelRows(l.b.NumDst, l.bwdFn)
	l.reverseIndex()
	l.dp = sageResize(l.dp, ns*l.out) // projDpRows sets every row
	parallelRows(ns, l.projDpFn)
	parts = max(parts, parallelRows(ns, l.projBwdFn))
	l.addPartials(parts, l.Self.G, l.Neigh.G, l.SelfB.G)
}

// projDpRows sets source rows [lo, hi) of dp.
func (l *SAGE) projDpRows(_, lo, hi int) { l.meanScatter(l.dp, l.dOut, l.out, lo, hi) }

// projBwdRows: for source rows [lo, hi), fc_neigh's gradient dpᵀ·x and
// dx = dp·fc_neigh.
func (l *SAGE) projBwdRows(w, lo, hi int) {
	k, o := l.in, l.out
	dp := l.dp[lo*o : hi*o]
	model.SgemmTN(o, k, hi-lo, dp, l.x[lo*k:hi*k], l.workerGrad(w, l.Neigh.G, len(l.Self.G)))
	if l.needDx {
		dx := l.dx[lo*k : hi*k]
		clear(dx)
		model.SgemmNN(hi-lo, k, o, dp, l.Neigh.W, dx)
	}
}

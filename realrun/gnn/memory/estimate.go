package memory

import (
	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
)

// Batch estimates, from b's shape alone, the bytes one training step of a
// model of spec holds for b: every array the engine allocates for the
// step (what Measure counts), with the layers splitting their rows over
// nn.Workers goroutines. Per layer it reads the block's destinations,
// sources and edges, and for sage-lstm the destinations' degrees and the
// distinct neighbour rows. b must have spec.Layers well-formed blocks
// (a batch the sampler or split.Builder made): Batch does not check, and
// a malformed one may panic.
func Batch(spec nn.Spec, b *block.Batch) Estimate {
	return estimate(spec, b, nn.Workers)
}

// f32 and i32 are the bytes of a new []float32 or []int32 of n values.
func f32(n int) int64 { return roundup(4*int64(n), false) }
func i32(n int) int64 { return roundup(4*int64(n), false) }

// sliceList is the bytes of a new [][]T of n slices; grownSlices those
// of appending n slices to a nil one, one at a time.
func sliceList(n int) int64   { return roundup(sliceHdr*int64(n), true) }
func grownSlices(n int) int64 { return appended(int64(n), sliceHdr, true) }

// estimator adds up one step's arrays by category.
type estimator struct {
	spec    nn.Spec
	workers int
	e       Estimate
	nParams int // the parameter tensors Adam holds moments for

	// The GEMM products of the forward pass and of the layer's backward
	// pass.
	fwd, bwd []gemmCall
}

// split returns the rows of the largest range a pass splits rows into
// (parallelRows).
func (s *estimator) split(rows int) int {
	parts := nn.RowParts(s.workers, rows)
	return (rows + parts - 1) / parts
}

// fw records a forward product C (rows×n) += A·op(B) (depth k) over rows
// split across the workers; bw the same in the backward pass.
func (s *estimator) fw(kind gemmKind, rows, n, k int) {
	s.fwd = append(s.fwd, gemmCall{kind: kind, m: s.split(rows), n: n, k: k})
}

func (s *estimator) bw(kind gemmKind, rows, n, k int) {
	s.bwd = append(s.bwd, gemmCall{kind: kind, m: s.split(rows), n: n, k: k})
}

// bwTN records a backward weight gradient G (m×n) += Aᵀ·B summed over
// rows split across the workers.
func (s *estimator) bwTN(m, n, rows int) {
	s.bwd = append(s.bwd, gemmCall{kind: gemmTN, m: m, n: n, k: s.split(rows)})
}

// param counts a parameter of n values: its values, its gradient and,
// when the model lists it (adam), Adam's two moments.
func (s *estimator) param(n int, adam bool) {
	s.e.Params += f32(n)
	s.e.Gradients += f32(n)
	if adam {
		s.e.Optimizer += 2 * f32(n)
		s.nParams++
	}
}

func estimate(spec nn.Spec, b *block.Batch, workers int) Estimate {
	s := &estimator{spec: spec, workers: max(workers, 1)}
	last := len(b.Blocks) - 1
	bwd := make([][]gemmCall, len(b.Blocks))
	for l := range b.Blocks {
		blk := &b.Blocks[l]
		in, out := spec.Dims(l)
		s.e.Blocks += i32(len(blk.Src)) + i32(len(blk.Ptr)) + i32(len(blk.Nbr))
		switch spec.Model {
		case "mlp":
			s.linear(blk, in, out, l == 0)
		case "sage-mean", "sage-pool":
			s.sage(blk, in, out, l == 0)
		case "sage-lstm":
			s.lstm(blk, in, out, l == 0)
		case "gat":
			s.gat(blk, in, out, l == 0, l == last)
		}
		bwd[l], s.bwd = s.bwd, nil
		if l < last { // the activation h, its derivative k, and dh
			n := blk.NumDst * out
			s.e.Hidden += 2 * f32(n)
			s.e.Gradients += f32(n)
		}
	}
	outs := b.Blocks[last].NumDst
	s.e.Features += f32(len(b.Blocks[0].Src) * spec.In)
	s.e.Labels += i32(outs)
	s.e.Gradients += f32(outs * spec.Classes) // dLogits
	// The model's h, k, dh lists; Adam's lists of moments.
	s.e.Hidden += 3 * sliceList(spec.Layers-1)
	s.e.Optimizer += 2 * grownSlices(s.nParams)
	calls := s.fwd
	for l := last; l >= 0; l-- {
		calls = append(calls, bwd[l]...)
	}
	s.e.Pool = poolBytes(calls, gemmBuffers(s.workers))
	s.e.Scratch += fixed(spec)
	return s.e
}

// The model's small objects — the layer structs, the parameters' names
// and shapes, the bound methods and the closures the passes hand to
// parallelRows — by model: bytes for the model, bytes per layer, and for
// sage-lstm bytes per step of the recurrence (a closure forward and one
// backward), after the first step and after the second. They are what
// Measure finds beyond the arrays above, with Go 1.26 on amd64
// (TestEstimateMatchesMeasure holds them to it).
var smallObjects = map[string]struct{ model, layer int64 }{
	"mlp":       {176, 656},
	"sage-mean": {224, 1352},
	"sage-pool": {184, 1544},
	"sage-lstm": {140, 2896},
	"gat":       {200, 1656},
}

const (
	lstmStep  = 128 // per step
	lstmFirst = 4   // a layer with a step
	lstmHH    = 156 // a layer with a second step: weight_hh's gradient pass
)

// fixed is the small objects of a model of spec.
func fixed(spec nn.Spec) int64 {
	c := smallObjects[spec.Model]
	return c.model + int64(spec.Layers)*c.layer
}

// lstmFixed is the small objects of an LSTM layer's T steps.
func lstmFixed(T int) int64 {
	var n int64
	if T >= 1 {
		n += lstmFirst + lstmStep*int64(T)
	}
	if T >= 2 {
		n += lstmHH
	}
	return n
}

// linear is nn.Linear over a block's destinations (mlp); first: the
// model's first layer, which computes no input gradient.
func (s *estimator) linear(blk *block.Block, in, out int, first bool) {
	nd := blk.NumDst
	s.param(out*in, true)
	s.param(out, true)
	s.e.Hidden += f32(nd * out) // y
	s.fw(gemmNT, nd, out, in)
	if !first {
		s.e.Gradients += f32(blk.NumSrc() * in) // dx
	}
	s.linearBackward(nd, in, out, !first)
}

// linearBackward is nn.Linear.backwardRows over m rows: dx = dOut·W when
// dx, and the weight's gradient, summed apart by worker when it splits.
func (s *estimator) linearBackward(m, in, out int, dx bool) {
	if dx {
		s.bw(gemmNN, m, in, out)
	}
	s.bwTN(out, in, m)
	parts := nn.RowParts(s.workers, m)
	s.e.Gradients += grownSlices(parts)
	if parts > 1 {
		s.e.Gradients += int64(parts) * f32(out*in)
	}
}

// sage is nn.SAGE with the mean or max-pool aggregator.
func (s *estimator) sage(blk *block.Block, in, out int, first bool) {
	nd, ns, e := blk.NumDst, blk.NumSrc(), len(blk.Nbr)
	pool := s.spec.Model == "sage-pool"
	if pool {
		s.param(in*in, true)
		s.param(in, true)
	}
	s.param(out*in, true)
	s.param(out, true)
	s.param(out*in, true)
	s.e.Hidden += f32(nd * out) // y
	proj := !pool && nn.ProjectFirst(in, out, nd, ns, e)
	switch {
	case proj:
		s.e.Aggregator += f32(ns * out) // p = x·fc_neighᵀ
		s.fw(gemmNT, ns, out, in)
		s.fw(gemmNT, nd, out, in)
	case pool:
		s.e.Aggregator += f32(nd*in) + f32(ns*in) + i32(nd*in) // h, p, arg
		s.fw(gemmNT, ns, in, in)
		s.fw(gemmNT, nd, out, in)
		s.fw(gemmNT, nd, out, in)
	default:
		s.e.Aggregator += f32(nd * in) // h
		s.fw(gemmNT, nd, out, in)
		s.fw(gemmNT, nd, out, in)
	}

	needDx := !first
	if needDx {
		s.e.Gradients += f32(ns * in) // dx
	}
	// Workers 1… hold partial gradients of fc_self and fc_neigh (and
	// then of fc_pool, in the same arrays when they are large enough).
	n1 := 2*out*in + out
	bwd := grownSlices(s.workers) + int64(s.workers-1)*f32(n1)
	rev := i32(ns+1) + i32(e) // the edges by source
	switch {
	case proj:
		s.bwTN(out, in, nd)      // fc_self
		bwd += rev + f32(ns*out) // dp
		s.bwTN(out, in, ns)      // fc_neigh
		if needDx {
			s.bw(gemmNN, ns, in, out)
		}
	case pool:
		bwd += f32(nd*in) + f32(ns*in) // dh, dp
		s.bwTN(out, in, nd)
		s.bw(gemmNN, nd, in, out)
		s.bwTN(out, in, nd)
		if n2 := in*in + in; n2 > n1 {
			bwd += int64(s.workers-1) * f32(n2)
		}
		s.bwTN(in, in, min(ns, nn.PoolSlice*nn.RowParts(s.workers, ns)))
		if needDx {
			s.bw(gemmNN, min(ns, nn.PoolSlice*nn.RowParts(s.workers, ns)), in, in)
		}
	default:
		bwd += f32(nd * in) // dh
		s.bwTN(out, in, nd)
		if needDx {
			s.bw(gemmNN, nd, in, out)
		}
		s.bwTN(out, in, nd)
		if needDx {
			bwd += rev
		}
	}
	if needDx {
		s.bw(gemmNN, nd, in, out) // fc_self's share of dx
	}
	s.e.Gradients += bwd
}

// lstm is nn.SAGELSTM: per destination, an LSTM over its neighbours in
// order. Betty's Eq. 5 counts Σ_L L·B_L·H·c values for the B_L
// destinations of degree L — H·c per edge; this engine keeps c = 11 per
// edge (the gates and their gradient 4H each, the cell state, its tanh
// and the previous hidden state H each), plus per distinct neighbour row
// its input-to-gate product and gradient (4H each, only when a row
// repeats) and its copy and gradient (H each).
func (s *estimator) lstm(blk *block.Block, in, out int, first bool) {
	nd, ns, E := blk.NumDst, blk.NumSrc(), len(blk.Nbr)
	H, G4 := in, 4*in
	s.param(G4*H, true) // weight_ih
	s.param(G4*H, true) // weight_hh
	s.param(G4, true)   // bias_ih
	s.param(G4, true)   // bias_hh
	s.param(out*H, true)
	s.param(out, true)
	s.param(out*H, true)
	s.param(out, false) // fc_neigh's unused bias

	// The sequence layout: the degree histogram, the running
	// destinations per step, the distinct neighbour rows.
	hist := degrees(blk)
	T := len(hist) - 1
	dPlus := nd - hist[0]
	nU := distinct(blk)
	identity := nU == E
	agg := i32(T+2) + i32(nd) + 2*appended(int64(T+1), 8, false) + i32(ns) + i32(E) + appended(int64(nU), 4, false)
	agg += f32(E*G4) + f32(nU*H) + 3*f32(E*H) + f32(nd*H) // gates, xg, cell, tc, hprev, agg
	if !identity {
		agg += f32(nU * G4) // pbuf
	}
	s.e.Aggregator += agg
	s.e.Scratch += lstmFixed(T)
	s.e.Hidden += 3 * f32(nd*out) // fc_self's, fc_neigh's and the sum
	s.fw(gemmNT, nU, G4, H)
	act := dPlus // destinations running at step t
	for t := 0; t < T; t++ {
		if t > 0 {
			s.fw(gemmNT, act, G4, H)
		}
		act -= hist[t+1]
	}
	s.fw(gemmNT, nd, out, H)
	s.fw(gemmNT, nd, out, H)

	bwd := f32(nd * H) // dagg
	s.linearBackward(nd, H, out, true)
	s.linearBackward(nd, H, out, !first)
	if !first {
		bwd += f32(ns * H) // dx
	}
	bwd += f32(E*G4) + 2*f32(dPlus*H) + f32(H) // dG, dh, dc, zeros
	act = 0
	for t := T - 1; t >= 0; t-- {
		act += hist[t+1]
		if t > 0 {
			s.bw(gemmNN, act, H, G4)
		}
	}
	if !identity {
		bwd += f32(nU * G4) // dPbuf
	}
	if !first {
		bwd += f32(nU * H) // dxg
		s.bw(gemmNN, nU, H, G4)
	}
	// weight_ih's and weight_hh's gradients over nU and E-d₊ rows, with
	// per-worker partial sums where they split.
	bwd += grownSlices(s.workers)
	parts := 0
	if nn.RowParts(s.workers, nU) > 1 {
		parts = nn.RowParts(s.workers, nU)
	}
	s.bwTN(G4, H, nU)
	if dPlus < E {
		if nn.RowParts(s.workers, E-dPlus) > 1 {
			parts = max(parts, nn.RowParts(s.workers, E-dPlus))
		}
		s.bwTN(G4, H, E-dPlus)
	}
	bwd += int64(parts) * f32(G4*H)
	s.e.Gradients += bwd
}

// degrees returns the histogram of blk's destinations' degrees: hist[d]
// destinations have d neighbours, up to the largest degree.
func degrees(blk *block.Block) []int {
	hist := []int{0}
	for i := 0; i < blk.NumDst; i++ {
		d := int(blk.Ptr[i+1] - blk.Ptr[i])
		for len(hist) <= d {
			hist = append(hist, 0)
		}
		hist[d]++
	}
	return hist
}

// distinct returns how many distinct source rows blk's edges read.
func distinct(blk *block.Block) int {
	seen := make([]bool, blk.NumSrc())
	n := 0
	for _, j := range blk.Nbr {
		if !seen[j] {
			seen[j] = true
			n++
		}
	}
	return n
}

// gat is nn.GAT: heads·F features per source row, attention per edge
// (each destination's self loop included) and head.
func (s *estimator) gat(blk *block.Block, in, out int, first, last bool) {
	nd, ns := blk.NumDst, blk.NumSrc()
	heads := s.spec.Heads
	f := out / heads
	if last {
		f = out
	}
	hf := heads * f
	nE := len(blk.Nbr) + nd
	s.param(hf*in, true)
	s.param(heads*f, true)
	s.param(heads*f, true)
	s.param(out, true)
	s.e.Aggregator += f32(ns*hf) + f32(ns*heads) + f32(nd*heads) + f32(nE*heads) // z, el, er, alpha
	s.e.Hidden += f32(nd * out)
	s.fw(gemmNT, ns, hf, in)
	bwd := f32(nE*heads) + f32(nd*heads) + i32(ns+1) + 2*i32(nE) + f32(ns*hf) // dpre, der, rptr, redge, rdst, dz
	if !first {
		bwd += f32(ns * in)
		s.bw(gemmNN, ns, in, hf)
	}
	parts := nn.RowParts(s.workers, ns)
	bwd += grownSlices(s.workers) + int64(parts)*f32(2*hf) // dattn
	bwd += grownSlices(s.workers)
	if nn.RowParts(s.workers, ns) > 1 {
		bwd += int64(parts) * f32(hf*in)
	}
	s.bwTN(hf, in, ns)
	s.e.Gradients += bwd
}

package block

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/tierflow/tierflow/realrun/gnn/data"
)

// Full is the fanout that takes every neighbour.
const Full = -1

// index maps global node ids to local source indices for one block at a
// time without clearing: slot[v] holds stamp<<32 | local, valid only when
// its stamp is the current one.
type index struct {
	slot  []uint64
	stamp uint32
}

// reset makes the index hold no node, for a graph of n nodes.
func (x *index) reset(n int) {
	if len(x.slot) < n {
		x.slot = make([]uint64, n)
		x.stamp = 0
	}
	x.stamp++
	if x.stamp == 0 { // wrapped: old stamps could match again
		clear(x.slot)
		x.stamp = 1
	}
}

// local returns v's local index, adding v as source len(*src) if new.
func (x *index) local(v int32, src *[]int32) int32 {
	s := x.slot[v]
	if uint32(s>>32) == x.stamp {
		return int32(uint32(s))
	}
	l := int32(len(*src))
	*src = append(*src, v)
	x.slot[v] = uint64(x.stamp)<<32 | uint64(uint32(l))
	return l
}

// Sampler draws batches from one graph with fixed fanouts (DGL's order:
// fanouts[0] for the input layer, the last for the output layer; Full or
// a count ≥ 0), reusing its buffers. A Sampler is not safe for concurrent
// use; make one per goroutine.
type Sampler struct {
	g       *data.Graph
	fanouts []int
	idx     index
	scratch []int32 // a copy of a neighbour list, for partial shuffles
}

// NewSampler returns a sampler of g with the given fanouts, one per layer
// (copied). A fanout below Full is a programming error and panics.
func NewSampler(g *data.Graph, fanouts []int) *Sampler {
	for l, f := range fanouts {
		if f < Full {
			panic(fmt.Sprintf("block.NewSampler: fanout %d of layer %d is below Full", f, l))
		}
	}
	return &Sampler{g: g, fanouts: append([]int(nil), fanouts...)}
}

// Layers returns the number of layers (blocks per batch).
func (s *Sampler) Layers() int { return len(s.fanouts) }

// Sample returns a new batch whose output nodes are seeds: one block per
// fanout. It builds the blocks from the output layer backwards: the last
// block's destinations are the seeds; each block's sources are its
// destinations followed by the sampled neighbours not among them, in the
// order first drawn; block l-1's destinations are block l's sources.
// Each destination draws min(fanout, degree) distinct neighbours uniformly
// without replacement, in random order (Full: every neighbour, in the
// graph's order; 0: none).
//
// seeds must be distinct node ids in [0, N): a repeated seed gives
// repeated destination rows (its neighbours refer to its first row), an
// out-of-range one panics. The returned batch is the caller's; the
// Sampler keeps only scratch space (see SampleInto to reuse a batch).
func (s *Sampler) Sample(seeds []int32, rng *rand.Rand) *Batch {
	return s.SampleInto(nil, seeds, rng)
}

// SampleInto is Sample writing into b (its slices reused where they are
// large enough) and returning it; b nil allocates a new batch. The
// returned batch's slices are b's own, so a batch still in use must not
// be passed.
func (s *Sampler) SampleInto(b *Batch, seeds []int32, rng *rand.Rand) *Batch {
	if b == nil {
		b = &Batch{}
	}
	L := len(s.fanouts)
	if cap(b.Blocks) < L {
		b.Blocks = append(b.Blocks[:cap(b.Blocks)], make([]Block, L-cap(b.Blocks))...)
	}
	b.Blocks = b.Blocks[:L]
	dst := seeds
	for l := L - 1; l >= 0; l-- {
		blk := &b.Blocks[l]
		s.sampleBlock(blk, dst, s.fanouts[l], rng)
		dst = blk.Src
	}
	return b
}

// sampleBlock fills blk with the destinations dst and fanout neighbours
// of each.
func (s *Sampler) sampleBlock(blk *Block, dst []int32, fanout int, rng *rand.Rand) {
	g := s.g
	x := &s.idx
	x.reset(g.N())
	blk.Src = append(blk.Src[:0], dst...)
	blk.NumDst = len(dst)
	for i := len(dst) - 1; i >= 0; i-- { // the first of repeated seeds wins
		x.slot[dst[i]] = uint64(x.stamp)<<32 | uint64(uint32(i))
	}
	blk.Ptr = append(blk.Ptr[:0], 0)
	blk.Nbr = blk.Nbr[:0]
	for _, v := range dst {
		nb := g.Nbr[g.Ptr[v]:g.Ptr[v+1]]
		d := len(nb)
		switch {
		case fanout == 0:
		case fanout == Full || fanout >= d:
			for _, u := range nb {
				blk.Nbr = append(blk.Nbr, x.local(u, &blk.Src))
			}
		case 2*fanout <= d:
			// Rejection: each draw is uniform over the neighbours not yet
			// drawn, so the sequence is a uniform random k-permutation.
			// A drawn neighbour that was already a source may be a repeat:
			// look for it among this destination's (at most fanout) picks.
			start := len(blk.Nbr)
			for len(blk.Nbr)-start < fanout {
				u := nb[rng.IntN(d)]
				sl := x.slot[u]
				if uint32(sl>>32) != x.stamp { // a new source
					x.slot[u] = uint64(x.stamp)<<32 | uint64(uint32(len(blk.Src)))
					blk.Nbr = append(blk.Nbr, int32(len(blk.Src)))
					blk.Src = append(blk.Src, u)
					continue
				}
				l := int32(uint32(sl))
				if !slices.Contains(blk.Nbr[start:], l) {
					blk.Nbr = append(blk.Nbr, l)
				}
			}
		default:
			// Partial Fisher–Yates on a copy (d < 2·fanout, so short).
			sc := append(s.scratch[:0], nb...)
			s.scratch = sc
			for k := 0; k < fanout; k++ {
				j := k + rng.IntN(d-k)
				sc[k], sc[j] = sc[j], sc[k]
				blk.Nbr = append(blk.Nbr, x.local(sc[k], &blk.Src))
			}
		}
		if len(blk.Nbr) > math.MaxInt32 {
			panic("block: a block has more than 2³¹-1 edges")
		}
		blk.Ptr = append(blk.Ptr, int32(len(blk.Nbr)))
	}
}

// Neighborhood returns the one-layer block of dst (distinct node ids) with
// all their neighbours in the graph's order, for layer-wise inference:
// its sources are dst followed by the neighbours not among them, in the
// order first met. Its scratch space comes from a pool, so calls may run
// concurrently.
func Neighborhood(g *data.Graph, dst []int32) *Block {
	x := indexPool.Get().(*index)
	defer indexPool.Put(x)
	e := 0
	for _, v := range dst {
		e += int(g.Ptr[v+1] - g.Ptr[v])
	}
	if e > math.MaxInt32 {
		panic(fmt.Sprintf("block.Neighborhood: %d edges, over 2³¹-1: take fewer destinations", e))
	}
	blk := &Block{Src: make([]int32, 0, len(dst)+min(e, g.N())), Ptr: make([]int32, 0, len(dst)+1), Nbr: make([]int32, 0, e)}
	s := Sampler{g: g, idx: *x}
	s.sampleBlock(blk, dst, Full, nil)
	*x = s.idx
	return blk
}

var indexPool = sync.Pool{New: func() any { return new(index) }}

// FullGraph returns the batch of every node with every neighbour, for
// layers layers: every block has Src = 0 … N-1, NumDst = N and the
// graph's CSR as Ptr and Nbr. The blocks share their slices (Nbr is the
// graph's own); do not modify them. It panics when the graph has more
// than 2³¹-1 neighbour entries, which a block cannot index.
func FullGraph(g *data.Graph, layers int) *Batch {
	n := g.N()
	if g.Edges() > math.MaxInt32 {
		panic(fmt.Sprintf("block.FullGraph: %d neighbour entries, over 2³¹-1", g.Edges()))
	}
	src := make([]int32, n)
	for i := range src {
		src[i] = int32(i)
	}
	ptr := make([]int32, n+1)
	nbr := g.Nbr[:0]
	if len(g.Ptr) > n {
		for i, p := range g.Ptr[:n+1] {
			ptr[i] = int32(p)
		}
		nbr = g.Nbr[:g.Ptr[n]]
	}
	b := &Batch{Blocks: make([]Block, layers)}
	for l := range b.Blocks {
		b.Blocks[l] = Block{Src: src, NumDst: n, Ptr: ptr, Nbr: nbr}
	}
	return b
}

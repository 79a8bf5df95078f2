package split

import (
	"fmt"

	"github.com/tierflow/tierflow/realrun/gnn/block"
)

// Builder builds micro-batches, reusing its scratch between calls. A
// Builder is not safe for concurrent use.
type Builder struct {
	// slot maps a source row of the batch's current block to its row in
	// the micro-batch's block: stamp<<32 | row, valid only when its stamp
	// is the current one (no clearing between blocks).
	slot  []uint64
	stamp uint32
	// cur are the batch's rows of the current block's destinations in
	// the micro-batch, next the batch's rows of its sources (the next
	// block down's destinations).
	cur, next []int32
}

// NewBuilder returns a Builder.
func NewBuilder() *Builder { return &Builder{} }

// reset empties the row map for a block of n source rows.
func (bd *Builder) reset(n int) {
	if len(bd.slot) < n {
		bd.slot = make([]uint64, max(n, 2*len(bd.slot)))
		bd.stamp = 0
	}
	bd.stamp++
	if bd.stamp == 0 { // wrapped: old stamps could match again
		clear(bd.slot)
		bd.stamp = 1
	}
}

// Micro returns the micro-batch of b whose output nodes are those at
// positions outs (ascending) of b.Output(): its own stack of blocks, in
// which every destination keeps the neighbours b sampled for it, in the
// same order, and reads the rows it reads in b; its blocks obey
// block.Batch's invariants (a layer's destinations lead its sources, in
// the order of the next block's sources). into, when not nil, is reused.
//
// In detail: the last block's destinations are b.Output()[outs], in the
// order of outs; each block's sources are its destinations followed by
// the rows their neighbours read that are not among them, in the order
// first read; the block below has those sources as destinations. Rows
// are matched by their row in b's block, not by node id, so the
// micro-batch repeats b's computation exactly (even for a b whose rows
// repeat a node). Positions must be distinct and in range (a position
// out of range panics: it is a caller's bug, not input). into must not
// be b (a new batch is returned then); the returned batch's slices are
// into's, grown as needed. A block without edges (Ptr empty or all zero,
// a features-only model's) gives one without edges.
func (bd *Builder) Micro(b *block.Batch, outs []int32, into *block.Batch) *block.Batch {
	L := len(b.Blocks)
	if into == nil || into == b {
		into = &block.Batch{}
	}
	if cap(into.Blocks) < L {
		into.Blocks = append(into.Blocks[:cap(into.Blocks)], make([]block.Block, L-cap(into.Blocks))...)
	}
	into.Blocks = into.Blocks[:L]
	nOut := b.Blocks[L-1].NumDst
	for _, p := range outs {
		if p < 0 || int(p) >= nOut {
			panic(fmt.Sprintf("split.Builder.Micro: output position %d of a batch of %d outputs", p, nOut))
		}
	}
	bd.cur = append(bd.cur[:0], outs...)
	for l := L - 1; l >= 0; l-- {
		src, dst := &b.Blocks[l], &into.Blocks[l]
		bd.reset(src.NumSrc())
		st := uint64(bd.stamp) << 32
		for i := len(bd.cur) - 1; i >= 0; i-- { // a repeated row: the first wins
			bd.slot[bd.cur[i]] = st | uint64(uint32(i))
		}
		bd.next = append(bd.next[:0], bd.cur...)
		dst.Src = dst.Src[:0]
		for _, r := range bd.cur {
			dst.Src = append(dst.Src, src.Src[r])
		}
		dst.NumDst = len(bd.cur)
		dst.Ptr = append(dst.Ptr[:0], 0)
		dst.Nbr = dst.Nbr[:0]
		edges := len(src.Ptr) == src.NumDst+1
		for _, v := range bd.cur {
			if edges {
				for _, r := range src.Nbr[src.Ptr[v]:src.Ptr[v+1]] {
					s := bd.slot[r]
					if s&^0xffffffff == st {
						dst.Nbr = append(dst.Nbr, int32(uint32(s)))
						continue
					}
					row := int32(len(bd.next))
					bd.slot[r] = st | uint64(uint32(row))
					bd.next = append(bd.next, r)
					dst.Src = append(dst.Src, src.Src[r])
					dst.Nbr = append(dst.Nbr, row)
				}
			}
			dst.Ptr = append(dst.Ptr, int32(len(dst.Nbr)))
		}
		bd.cur, bd.next = bd.next, bd.cur
	}
	return into
}

// Inputs returns how many input nodes the micro-batch of outs has
// (len(Micro(b, outs, …).Input())), building only the row sets.
func (bd *Builder) Inputs(b *block.Batch, outs []int32) int {
	L := len(b.Blocks)
	nOut := b.Blocks[L-1].NumDst
	for _, p := range outs {
		if p < 0 || int(p) >= nOut {
			panic(fmt.Sprintf("split.Builder.Inputs: output position %d of a batch of %d outputs", p, nOut))
		}
	}
	bd.cur = append(bd.cur[:0], outs...)
	for l := L - 1; l >= 0; l-- {
		src := &b.Blocks[l]
		bd.reset(src.NumSrc())
		st := uint64(bd.stamp) << 32
		bd.next = bd.next[:0]
		for _, r := range bd.cur {
			if bd.slot[r]&^0xffffffff != st {
				bd.slot[r] = st
				bd.next = append(bd.next, r)
			}
		}
		if len(src.Ptr) == src.NumDst+1 {
			for _, v := range bd.cur {
				for _, r := range src.Nbr[src.Ptr[v]:src.Ptr[v+1]] {
					if bd.slot[r]&^0xffffffff != st {
						bd.slot[r] = st
						bd.next = append(bd.next, r)
					}
				}
			}
		}
		bd.cur, bd.next = bd.next, bd.cur
	}
	return len(bd.cur)
}

// Stats is what a split costs in input rows.
type Stats struct {
	// K is the number of micro-batches; Inputs the batch's own input
	// nodes; MicroInputs each micro-batch's input nodes.
	K           int
	Inputs      int
	MicroInputs []int
	// Redundant is sum(MicroInputs) - Inputs: the input rows gathered
	// more than once (Betty's Figure 16).
	Redundant int
}

// Measure returns the input rows of the split parts of b.
func Measure(b *block.Batch, parts [][]int32) Stats {
	bd := NewBuilder()
	s := Stats{K: len(parts), Inputs: len(b.Input()), MicroInputs: make([]int, len(parts))}
	sum := 0
	for i, p := range parts {
		s.MicroInputs[i] = bd.Inputs(b, p)
		sum += s.MicroInputs[i]
	}
	s.Redundant = sum - s.Inputs
	return s
}

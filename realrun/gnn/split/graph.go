package split

import (
	"cmp"
	"slices"

	"github.com/tierflow/tierflow/realrun/gnn/block"
)

// graph is an undirected graph among a batch's output nodes in CSR form,
// each edge listed at both ends, without self-loops or repeats: the
// neighbours of v are adj[ptr[v]:ptr[v+1]], with weights wgt (nil: all 1).
type graph struct {
	ptr []int32
	adj []int32
	wgt []int32
}

func (g *graph) n() int     { return len(g.ptr) - 1 }
func (g *graph) edges() int { return len(g.adj) / 2 }

// blockEdges reports whether blk has its neighbour lists (a features-only
// block may leave Ptr empty).
func blockEdges(blk *block.Block) bool { return len(blk.Ptr) == blk.NumDst+1 }

// readers returns, per source row r of blk, the destinations that read
// it — its own destination (r < NumDst) and those that sampled it — in
// CSR form (ascending destinations, each once).
func readers(blk *block.Block) (ptr, dst []int32) {
	nd, ns := blk.NumDst, blk.NumSrc()
	ptr = make([]int32, ns+1)
	for i := 0; i < nd; i++ {
		ptr[i+1]++
	}
	if blockEdges(blk) {
		for _, r := range blk.Nbr[:blk.Ptr[nd]] {
			ptr[r+1]++
		}
	}
	for r := 0; r < ns; r++ {
		ptr[r+1] += ptr[r]
	}
	fill := append([]int32(nil), ptr[:ns]...)
	dst = make([]int32, ptr[ns])
	add := func(r, i int32) {
		if f := fill[r]; f > ptr[r] && dst[f-1] == i {
			return // a repeated neighbour of i: counted once
		}
		dst[fill[r]] = i
		fill[r]++
	}
	for i := int32(0); i < int32(nd); i++ {
		add(i, i)
		if blockEdges(blk) {
			for _, r := range blk.Nbr[blk.Ptr[i]:blk.Ptr[i+1]] {
				add(r, i)
			}
		}
	}
	// Compact away the slots repeats left unused.
	w := int32(0)
	for r := 0; r < ns; r++ {
		lo, hi := ptr[r], fill[r]
		ptr[r] = w
		w += int32(copy(dst[w:], dst[lo:hi]))
	}
	ptr[ns] = w
	return ptr, dst[:w]
}

// regGraph returns Betty's redundancy-embedded graph of the last block
// blk: output nodes i ≠ j are joined with weight |R(i) ∩ R(j)|, R(i) the
// source rows i reads (its own and its sampled neighbours'), i.e. the
// off-diagonal of AᵀA for the reads matrix A (rows × outputs), leaving
// out the rows more than REGMaxReaders outputs read (when it is > 0).
// It is built row by row (Gustavson): for output i, every row r it reads
// adds one to each other reader of r, so the work is Σ_r readers(r)².
func regGraph(blk *block.Block) *graph {
	nd := blk.NumDst
	rptr, rdst := readers(blk)
	if REGMaxReaders > 0 {
		for r := 0; r+1 < len(rptr); r++ {
			if rptr[r+1]-rptr[r] > int32(REGMaxReaders) {
				rdst[rptr[r]] = -1 // a hub: no weight
			}
		}
	}
	g := &graph{ptr: make([]int32, 1, nd+1)}
	mark := make([]int32, nd) // i+1 when acc[j] is output i's
	acc := make([]int32, nd)
	var touched []int32
	row := func(i int32, r int32) {
		if rdst[rptr[r]] < 0 {
			return
		}
		for _, j := range rdst[rptr[r]:rptr[r+1]] {
			if j == i {
				continue
			}
			if mark[j] != i+1 {
				mark[j] = i + 1
				acc[j] = 0
				touched = append(touched, j)
			}
			acc[j]++
		}
	}
	for i := int32(0); i < int32(nd); i++ {
		touched = touched[:0]
		row(i, i)
		if blockEdges(blk) {
			for _, r := range blk.Nbr[blk.Ptr[i]:blk.Ptr[i+1]] {
				row(i, r)
			}
		}
		for _, j := range touched {
			g.adj = append(g.adj, j)
			g.wgt = append(g.wgt, acc[j])
		}
		g.ptr = append(g.ptr, int32(len(g.adj)))
	}
	return g
}

// REGMaxReaders is the most outputs a source row of the last block may
// be read by and still weigh in REG's graph (0: no limit, Betty's
// Algorithm 1 exactly). A hub row read by d outputs adds d(d-1)/2 pairs:
// it is gathered by most parts whatever the cut, yet its pairs dominate
// the weights METIS balances and the time it takes. On generated
// ogbn-products and Reddit batches (fanouts 10,25 and 10,25,30; 1,024
// and 8,192 outputs; K 2–16) 16 left up to 11% fewer redundant rows than
// no limit, never more than 3 rows more, and made REG 4–13× faster on
// the 8,192-output batches (TestRedundancyReport prints both).
var REGMaxReaders = 16

// outputGraph returns the batch's own graph among its output nodes: i
// and j joined (weight 1) when the last block blk has an edge between
// them in either direction.
func outputGraph(blk *block.Block) *graph {
	nd := blk.NumDst
	g := &graph{ptr: make([]int32, 1, nd+1)}
	if !blockEdges(blk) {
		g.ptr = make([]int32, nd+1)
		return g
	}
	// in[j] lists the outputs that sampled output j.
	inPtr := make([]int32, nd+1)
	for _, r := range blk.Nbr[:blk.Ptr[nd]] {
		if int(r) < nd {
			inPtr[r+1]++
		}
	}
	for j := 0; j < nd; j++ {
		inPtr[j+1] += inPtr[j]
	}
	fill := append([]int32(nil), inPtr[:nd]...)
	in := make([]int32, inPtr[nd])
	for i := int32(0); i < int32(nd); i++ {
		for _, r := range blk.Nbr[blk.Ptr[i]:blk.Ptr[i+1]] {
			if int(r) < nd {
				in[fill[r]] = i
				fill[r]++
			}
		}
	}
	mark := make([]int32, nd)
	for i := int32(0); i < int32(nd); i++ {
		mark[i] = i + 1 // no self-loop
		link := func(j int32) {
			if mark[j] != i+1 {
				mark[j] = i + 1
				g.adj = append(g.adj, j)
			}
		}
		for _, r := range blk.Nbr[blk.Ptr[i]:blk.Ptr[i+1]] {
			if int(r) < nd {
				link(r)
			}
		}
		for _, j := range in[inPtr[i]:inPtr[i+1]] {
			link(j)
		}
		g.ptr = append(g.ptr, int32(len(g.adj)))
	}
	return g
}

// ufactor is METIS's allowed imbalance in thousandths (its default: a
// part may hold up to 1.03·n/k nodes).
const ufactor = 30

// maxPart returns the most nodes a part may hold: METIS's bound, and at
// least ⌈n/k⌉.
func maxPart(n, k int) int {
	return max((n+k-1)/k, n*(1000+ufactor)/(1000*k))
}

// rebalance evens out a partition of g into k parts (part ids in assign)
// that has a part over maxPart or an empty one, moving as few nodes as
// that takes, those least tied to their part first, each to the part
// with room it is most tied to (the emptiest on ties).
func (g *graph) rebalance(assign []int32, k int) {
	n := g.n()
	limit := maxPart(n, k)
	size := make([]int, k)
	for _, p := range assign {
		size[p]++
	}
	over, empty := false, false
	for _, s := range size {
		over = over || s > limit
		empty = empty || s == 0
	}
	if !over && !empty {
		return
	}
	tie := make([]int64, k) // a node's weight to each part
	var touched []int32
	ties := func(v int32) {
		for _, p := range touched {
			tie[p] = 0
		}
		touched = touched[:0]
		for e := g.ptr[v]; e < g.ptr[v+1]; e++ {
			p := assign[g.adj[e]]
			if tie[p] == 0 {
				touched = append(touched, p)
			}
			w := int64(1)
			if g.wgt != nil {
				w = int64(g.wgt[e])
			}
			tie[p] += w
		}
	}
	// stay[v]: v's weight to its own part.
	stay := make([]int64, n)
	for v := int32(0); v < int32(n); v++ {
		ties(v)
		stay[v] = tie[assign[v]]
	}
	move := func(v int32) {
		ties(v)
		better := func(p, q int32) bool { // empty first, then most tied, then emptiest
			if ep, eq := size[p] == 0, size[q] == 0; ep != eq {
				return ep
			}
			if tie[p] != tie[q] {
				return tie[p] > tie[q]
			}
			return size[p] < size[q]
		}
		best := int32(-1) // exists: n ≤ k·limit, and v's part is over limit
		for p := int32(0); p < int32(k); p++ {
			if p != assign[v] && size[p] < limit && (best < 0 || better(p, best)) {
				best = p
			}
		}
		size[assign[v]]--
		size[best]++
		assign[v] = best
	}
	// Members of part p, least tied first.
	members := func(p int32) []int32 {
		var m []int32
		for v := int32(0); v < int32(n); v++ {
			if assign[v] == p {
				m = append(m, v)
			}
		}
		slices.SortStableFunc(m, func(a, b int32) int { return cmp.Compare(stay[a], stay[b]) })
		return m
	}
	for p := int32(0); p < int32(k); p++ {
		if size[p] > limit {
			for _, v := range members(p)[:size[p]-limit] {
				move(v)
			}
		}
	}
	for {
		e := slices.Index(size, 0)
		if e < 0 {
			return
		}
		// Take from the largest part (it has ≥ 2 nodes since k ≤ n).
		big := int32(0)
		for p := range size {
			if size[p] > size[big] {
				big = int32(p)
			}
		}
		v := members(big)[0]
		size[big]--
		size[e]++
		assign[v] = int32(e)
	}
}

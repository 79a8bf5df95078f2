// Package micro splits a batch of edges into micro-batches that share few
// rows: range, random and REG-style (redundancy-minimising) partitions, and
// the exact shape — distinct rows, chunk pieces — of every micro-batch.
//
// A batch's edges come in chunks that share one set of negative rows (PBG
// §4.3); an edge keeps its chunk's negatives in whichever micro-batch it
// lands, so any split trains the same loss as the whole batch. A row needed
// by several micro-batches is gathered, moved to the device and sent back
// once per micro-batch: those repeats are the duplicated rows a split
// should minimise (Betty §4.3, "redundancy").
package micro

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/tierflow/tierflow/workload"
)

// Batch is one batch's edges as row keys (any int64 naming a node row,
// e.g. partition<<32 | local row), in training order: edge i belongs to
// chunk Chunk[i] (non-decreasing), and chunk c shares the negative rows
// Neg[c].
type Batch struct {
	Src, Dst []int64
	Rel      []int32
	Chunk    []int32
	Neg      [][]int64
}

// Edges is the number of edges.
func (b Batch) Edges() int { return len(b.Src) }

// Method is a way to split a batch.
type Method string

// The split methods.
const (
	// Range cuts the edges, in training order, into k runs of (nearly)
	// equal length: whole chunks stay together except at the cuts.
	Range Method = "range"
	// Random deals the edges out in a seeded random order: every chunk
	// lands in (nearly) every micro-batch.
	Random Method = "random"
	// REG minimises duplicated rows (Betty's redundancy-embedded graph,
	// here as the hypergraph it approximates): starting from Range, single
	// edges move to the micro-batch that already holds most of their rows,
	// within a 5% balance slack, until no move helps.
	REG Method = "reg"
)

// Methods lists the split methods.
var Methods = []Method{REG, Range, Random}

// ParseMethod returns the named method.
func ParseMethod(s string) (Method, error) {
	m := Method(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Methods, m) {
		return m, nil
	}
	return "", fmt.Errorf("unknown split %q (want reg, range or random)", s)
}

// Slack is REG's balance tolerance: a micro-batch may hold up to
// (1 + Slack)·ceil(E/k) edges.
const Slack = 0.05

// Index is a batch with dense ids: node rows 0..Rows-1 in order of first
// use, relations 0..Rels-1 likewise.
type Index struct {
	Keys           []int64 // node row key by dense id
	RelKeys        []int32
	Src, Dst, Rel  []int32 // dense ids per edge
	Neg            [][]int32
	NegDistinct    []int32 // distinct negative rows per chunk
	UsesRelations  bool
	chunks, maxNeg int
}

// NewIndex gives the batch's rows dense ids. Relations count only when
// usesRelations.
func NewIndex(b Batch, usesRelations bool) Index {
	ix := Index{UsesRelations: usesRelations, chunks: len(b.Neg)}
	ids := make(map[int64]int32, 2*len(b.Src))
	id := func(k int64) int32 {
		if v, ok := ids[k]; ok {
			return v
		}
		v := int32(len(ix.Keys))
		ids[k] = v
		ix.Keys = append(ix.Keys, k)
		return v
	}
	ix.Src, ix.Dst = make([]int32, len(b.Src)), make([]int32, len(b.Dst))
	for i := range b.Src {
		ix.Src[i], ix.Dst[i] = id(b.Src[i]), id(b.Dst[i])
	}
	ix.Neg = make([][]int32, len(b.Neg))
	ix.NegDistinct = make([]int32, len(b.Neg))
	for c, ns := range b.Neg {
		ix.Neg[c] = make([]int32, len(ns))
		seen := map[int32]bool{}
		for j, k := range ns {
			v := id(k)
			ix.Neg[c][j] = v
			seen[v] = true
		}
		ix.NegDistinct[c] = int32(len(seen))
		ix.maxNeg = max(ix.maxNeg, len(ns))
	}
	if usesRelations {
		rels := map[int32]int32{}
		ix.Rel = make([]int32, len(b.Rel))
		for i, r := range b.Rel {
			v, ok := rels[r]
			if !ok {
				v = int32(len(ix.RelKeys))
				rels[r] = v
				ix.RelKeys = append(ix.RelKeys, r)
			}
			ix.Rel[i] = v
		}
	}
	return ix
}

// Split divides the batch's edges into k micro-batches by method; each is
// a list of edge positions in ascending (training) order. k is clamped to
// [1, edges]; seed drives Random and REG's visiting order.
func Split(b Batch, ix Index, k int, method Method, seed int64) ([][]int32, error) {
	e := b.Edges()
	k = max(1, min(k, e))
	switch method {
	case Range:
		return rangeSplit(e, k), nil
	case Random:
		perm := make([]int32, e)
		for i := range perm {
			perm[i] = int32(i)
		}
		rng := rand.New(rand.NewPCG(uint64(seed), 0x72616e64)) // "rand"
		rng.Shuffle(e, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		parts := make([][]int32, k)
		for p := range parts {
			lo, hi := p*e/k, (p+1)*e/k
			parts[p] = slices.Clone(perm[lo:hi])
			slices.Sort(parts[p])
		}
		return parts, nil
	case REG:
		return regSplit(b, ix, k, seed), nil
	}
	return nil, fmt.Errorf("unknown split %q", method)
}

func rangeSplit(e, k int) [][]int32 {
	parts := make([][]int32, k)
	for p := range parts {
		lo, hi := p*e/k, (p+1)*e/k
		parts[p] = make([]int32, 0, hi-lo)
		for i := lo; i < hi; i++ {
			parts[p] = append(parts[p], int32(i))
		}
	}
	return parts
}

// regSplit minimises Σ_pins w·(λ − 1), λ being the number of micro-batches
// a pin is in, over the hypergraph whose vertices are the edges and whose
// pins are node rows (weight 1), relation rows (weight 1) and each chunk's
// negative set (weight: its distinct rows). This is the connectivity
// objective that Betty's REG approximates by the weighted graph AᵀA and a
// min-cut. Starting from the Range split it refines in two levels, always
// within the balance bound: Kernighan–Lin swaps (and moves) of whole chunk
// pieces between micro-batches, then Fiduccia–Mattheyses-style single-edge
// moves with positive gain.
func regSplit(b Batch, ix Index, k int, seed int64) [][]int32 {
	e := b.Edges()
	parts := rangeSplit(e, k)
	if k == 1 {
		return parts
	}
	r := newRegState(b, ix, k, e)
	for p, es := range parts {
		for _, i := range es {
			r.place(int(i), p)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x72656731)) // "reg1"
	r.swapPieces(rng)
	r.moveEdges(rng)
	for p := range parts {
		parts[p] = parts[p][:0]
	}
	for i, p := range r.part {
		parts[p] = append(parts[p], int32(i))
	}
	return parts
}

type regState struct {
	b                       Batch
	ix                      Index
	k, rows, negBase, limit int
	part                    []int32
	size                    []int
	count                   []int32
	gain                    []int32
	buf                     []int
}

func newRegState(b Batch, ix Index, k, e int) *regState {
	r := &regState{b: b, ix: ix, k: k, rows: len(ix.Keys), part: make([]int32, e), size: make([]int, k), gain: make([]int32, k)}
	r.negBase = r.rows + len(ix.RelKeys)
	r.count = make([]int32, (r.negBase+len(b.Neg))*k)
	r.limit = int(float64((e+k-1)/k) * (1 + Slack))
	return r
}

func (r *regState) weight(q int) int32 {
	if q >= r.negBase {
		return r.ix.NegDistinct[q-r.negBase]
	}
	return 1
}

func (r *regState) pins(i int) []int {
	ix := r.ix
	r.buf = append(r.buf[:0], int(ix.Src[i]))
	if ix.Dst[i] != ix.Src[i] {
		r.buf = append(r.buf, int(ix.Dst[i]))
	}
	if ix.UsesRelations {
		r.buf = append(r.buf, r.rows+int(ix.Rel[i]))
	}
	return append(r.buf, r.negBase+int(r.b.Chunk[i]))
}

func (r *regState) place(i, p int) {
	r.part[i] = int32(p)
	r.size[p]++
	for _, q := range r.pins(i) {
		r.count[q*r.k+p]++
	}
}

// move moves edge i to part t and returns the change of the objective.
func (r *regState) move(i, t int) int32 {
	a := int(r.part[i])
	var delta int32
	for _, q := range r.pins(i) {
		w := r.weight(q)
		if r.count[q*r.k+a] == 1 {
			delta -= w
		}
		if r.count[q*r.k+t] == 0 {
			delta += w
		}
		r.count[q*r.k+a]--
		r.count[q*r.k+t]++
	}
	r.size[a]--
	r.size[t]++
	r.part[i] = int32(t)
	return delta
}

// pieces lists the chunk pieces: the edges of one chunk in one part.
func (r *regState) pieces() [][]int32 {
	at := map[[2]int32]int{}
	var out [][]int32
	for i, p := range r.part {
		key := [2]int32{r.b.Chunk[i], p}
		j, ok := at[key]
		if !ok {
			j = len(out)
			at[key] = j
			out = append(out, nil)
		}
		out[j] = append(out[j], int32(i))
	}
	return out
}

func (r *regState) moveAll(es []int32, t int) int32 {
	var d int32
	for _, i := range es {
		d += r.move(int(i), t)
	}
	return d
}

// piecesIn is the number of chunk pieces in part p.
func (r *regState) piecesIn(p int) int {
	n := 0
	for c := range r.b.Neg {
		if r.count[(r.negBase+c)*r.k+p] > 0 {
			n++
		}
	}
	return n
}

// swapPieces tries, for every pair of chunk pieces in different parts,
// moving one into the other's part and swapping the two, keeping a change
// only when it lowers the objective and respects the balance bounds: edges
// as for every move, and no part holding more chunk pieces than the most
// any part held before (a GPU computes a micro-batch's pieces at once, so
// pieces are memory — Betty §4.4's balance).
func (r *regState) swapPieces(rng *rand.Rand) {
	maxPieces := 0
	for p := 0; p < r.k; p++ {
		maxPieces = max(maxPieces, r.piecesIn(p))
	}
	for pass := 0; pass < 8; pass++ {
		ps := r.pieces()
		rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
		improved := false
		for x := range ps {
			for y := range ps {
				u, v := ps[x], ps[y]
				if x == y || len(u) == 0 || len(v) == 0 {
					continue
				}
				a, bp := int(r.part[u[0]]), int(r.part[v[0]])
				if a == bp {
					continue
				}
				// Move u alone into v's part.
				if r.size[bp]+len(u) <= r.limit {
					if d := r.moveAll(u, bp); d < 0 && r.piecesIn(bp) <= maxPieces {
						improved = true
						continue
					}
					r.moveAll(u, a)
				}
				// Swap u and v.
				if r.size[bp]+len(u)-len(v) <= r.limit && r.size[a]+len(v)-len(u) <= r.limit {
					d := r.moveAll(u, bp) + r.moveAll(v, a)
					if d < 0 {
						improved = true
						continue
					}
					r.moveAll(v, bp)
					r.moveAll(u, a)
				}
			}
		}
		if !improved {
			return
		}
	}
}

// moveEdges moves single edges to the part where the move lowers the
// objective most, while any does.
func (r *regState) moveEdges(rng *rand.Rand) {
	e, k := len(r.part), r.k
	order := make([]int32, e)
	for i := range order {
		order[i] = int32(i)
	}
	for pass := 0; pass < 16; pass++ {
		rng.Shuffle(e, func(i, j int) { order[i], order[j] = order[j], order[i] })
		moved := 0
		for _, i := range order {
			a := int(r.part[i])
			var freed int32
			clear(r.gain)
			for _, q := range r.pins(int(i)) {
				w := r.weight(q)
				if r.count[q*k+a] == 1 {
					freed += w
				}
				for t := 0; t < k; t++ {
					if r.count[q*k+t] == 0 {
						r.gain[t] -= w
					}
				}
			}
			best, bestGain := -1, int32(0)
			for t := 0; t < k; t++ {
				if t == a || r.size[t] >= r.limit {
					continue
				}
				if g := freed + r.gain[t]; g > bestGain {
					best, bestGain = t, g
				}
			}
			if best >= 0 {
				r.move(int(i), best)
				moved++
			}
		}
		if moved == 0 {
			return
		}
	}
}

// Shape is the exact shape of one micro-batch.
func (ix Index) Shape(b Batch, edges []int32, model workload.Model, dim, concurrent int) workload.BatchShape {
	s := workload.BatchShape{Model: model, Dim: dim, Edges: len(edges), Negatives: ix.maxNeg, Concurrent: concurrent}
	rowSeen := make(map[int32]struct{}, 2*len(edges))
	relSeen := map[int32]struct{}{}
	piece := map[int32]int{}
	for _, i := range edges {
		rowSeen[ix.Src[i]] = struct{}{}
		rowSeen[ix.Dst[i]] = struct{}{}
		if ix.UsesRelations {
			relSeen[ix.Rel[i]] = struct{}{}
		}
		c := b.Chunk[i]
		if _, ok := piece[c]; !ok {
			for _, v := range ix.Neg[c] {
				rowSeen[v] = struct{}{}
			}
		}
		piece[c]++
	}
	s.Rows, s.Relations, s.Chunks = int64(len(rowSeen)), int64(len(relSeen)), len(piece)
	if concurrent <= 0 {
		s.Concurrent = len(piece)
	}
	for _, n := range piece {
		s.ChunkEdges = max(s.ChunkEdges, n)
	}
	return s
}

// Stats compares a split with the whole batch.
type Stats struct {
	MicroBatches int `json:"micro_batches"`
	// Rows is the distinct rows of the whole batch; GatheredRows the sum
	// over micro-batches of theirs; DuplicatedRows the difference.
	Rows           int64 `json:"rows"`
	GatheredRows   int64 `json:"gathered_rows"`
	DuplicatedRows int64 `json:"duplicated_rows"`
	// H2DBytes is the node rows (d float32 each) and relation rows
	// (Model.RelWidth(d) each) moved to the device, summed over
	// micro-batches.
	H2DBytes int64 `json:"h2d_bytes"`
	// PeakBytes is the largest micro-batch's estimated peak memory and
	// MeanBytes the average: their ratio is the imbalance.
	PeakBytes int64 `json:"peak_bytes"`
	MeanBytes int64 `json:"mean_bytes"`
	Shapes    []workload.BatchShape
}

// Measure returns the split's Stats under the estimator.
func (ix Index) Measure(b Batch, parts [][]int32, model workload.Model, dim, concurrent int) Stats {
	all := make([]int32, b.Edges())
	for i := range all {
		all[i] = int32(i)
	}
	whole := ix.Shape(b, all, model, dim, concurrent)
	st := Stats{MicroBatches: len(parts), Rows: whole.Rows}
	var sum int64
	for _, es := range parts {
		s := ix.Shape(b, es, model, dim, concurrent)
		st.Shapes = append(st.Shapes, s)
		st.GatheredRows += s.Rows
		st.H2DBytes += (s.Rows*int64(dim) + s.Relations*int64(model.RelWidth(dim))) * workload.BytesPerFloat
		m := workload.EstimateBatch(s).Total
		st.PeakBytes = max(st.PeakBytes, m)
		sum += m
	}
	st.DuplicatedRows = st.GatheredRows - st.Rows
	if len(parts) > 0 {
		st.MeanBytes = sum / int64(len(parts))
	}
	return st
}

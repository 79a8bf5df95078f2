package cpu

import (
	"math/bits"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/workload"
)

// The sum rule (realrun.DuplicatesSum) takes one Adagrad step per distinct
// row of a chunk with the sum of its occurrences' gradients. A row is a
// (table, row) pair: the tables are the source partition's buffer and the
// destination partition's, one table when the two are the same buffer (a
// bucket within one partition), so that a row that is the source of one
// edge and the destination of another, or a negative, is one row. The
// relations are a table of their own.
//
// Rows are numbered in the order of their first occurrence (edge by edge,
// source before destination, then the negatives; relations edge by edge)
// by rowSet, an open-addressing hash table sized to the chunk, not to the
// partition: a few tens of KiB per worker that stay in cache, where a
// slot-per-row array would take 4 to 8 bytes per row of each of the two
// partitions per worker (tens of MiB for partitions of millions of rows,
// outside the memory the simulator models). Its
// entries carry the chunk's generation, so that starting a chunk clears
// nothing. The later occurrences' gradients are added, in the chunk's
// order, to the first occurrence's where ChunkGrad wrote it (gradSums),
// and each distinct row is stepped with that sum.

// Tables of the sum rule's keys (the key's upper 32 bits; the row is the
// lower 32).
const (
	srcTable uint64 = 0
	dstTable uint64 = 1 << 32
	relTable uint64 = 2 << 32
)

// rowSet numbers the distinct keys of one chunk.
type rowSet struct {
	e     []rowEntry
	gen   uint32
	shift uint
}

type rowEntry struct {
	key uint64
	gen uint32 // the chunk this entry belongs to; any other: empty
	num int32
}

// newRowSet holds up to n distinct keys at a load factor of at most ½.
func newRowSet(n int) rowSet {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	return rowSet{e: make([]rowEntry, size), gen: 1, shift: uint(64 - bits.Len(uint(size-1)))}
}

// reset empties the set: a new generation.
func (s *rowSet) reset() {
	s.gen++
	if s.gen == 0 { // wrapped: entries of generation 0 would look current
		clear(s.e)
		s.gen = 1
	}
}

// number returns key's number and true if it is in the set; otherwise it
// adds key as number next and returns next and false.
func (s *rowSet) number(key uint64, next int32) (int32, bool) {
	mask := len(s.e) - 1
	i := int((key * 0x9e3779b97f4a7c15) >> s.shift) // Fibonacci hashing
	for {
		e := &s.e[i]
		if e.gen != s.gen {
			*e = rowEntry{key: key, gen: s.gen, num: next}
			return next, false
		}
		if e.key == key {
			return e.num, true
		}
		i = (i + 1) & mask
	}
}

// gradSums are the distinct keys of one kind in the order of their first
// occurrence, each with its first occurrence's gradient (a slice of the
// worker's gradient buffers, which the chunk owns until its step), to
// which the later occurrences' are added in the chunk's order: no
// gradient is copied, and a row that occurs once is stepped with its
// gradient where ChunkGrad wrote it.
type gradSums struct {
	keys []uint64
	grad [][]float32
}

func newGradSums(n int) gradSums {
	return gradSums{keys: make([]uint64, 0, n), grad: make([][]float32, 0, n)}
}

// reset empties the list (its slices point into the worker's gradient
// buffers, which live as long as it does).
func (l *gradSums) reset() {
	l.keys, l.grad = l.keys[:0], l.grad[:0]
}

// add adds occurrence gradient g to key's sum (numbered in set).
func (l *gradSums) add(set *rowSet, key uint64, g []float32) {
	j, seen := set.number(key, int32(len(l.keys)))
	if !seen {
		l.keys = append(l.keys, key)
		l.grad = append(l.grad, g)
		return
	}
	axpyOne(g, l.grad[j])
}

// sumScratch is a worker's scratch for the sum rule, allocated the first
// time it takes a sum step.
type sumScratch struct {
	set  rowSet
	rows gradSums // node rows: srcTable or dstTable | row
	rels gradSums // relTable | relation
}

func newSumScratch(h realrun.Hyper) *sumScratch {
	n, m := h.Chunk(), h.Negatives
	s := &sumScratch{set: newRowSet(3*n + m), rows: newGradSums(2*n + m)}
	if h.Model.UsesRelations() {
		s.rels = newGradSums(n)
	}
	return s
}

// stepSum is the chunk step under realrun.DuplicatesSum: one Adagrad step
// per distinct row of the chunk with its occurrences' summed gradient, in
// the order of first occurrence, and one per distinct relation.
func (c *Engine) stepSum(ws *workerScratch, n, m int, sf, df, gR []float32) {
	d, lr := c.h.Dim, c.h.LR
	rowsD := int(c.rows) * d
	if ws.sum == nil {
		ws.sum = newSumScratch(c.h)
	}
	s := ws.sum
	s.set.reset()
	s.rows.reset()
	s.rels.reset()
	dstTab := dstTable
	if len(sf) > 0 && len(df) > 0 && &sf[0] == &df[0] {
		dstTab = srcTable // one buffer: one table
	}
	for i := 0; i < n; i++ {
		s.rows.add(&s.set, srcTable|uint64(uint32(ws.srcRow[i])), ws.gS[i*d:(i+1)*d])
		s.rows.add(&s.set, dstTab|uint64(uint32(ws.dstRow[i])), ws.gD[i*d:(i+1)*d])
	}
	for k := 0; k < m; k++ {
		tab := srcTable
		if ws.negSide[k] {
			tab = dstTab
		}
		s.rows.add(&s.set, tab|uint64(uint32(ws.negRow[k])), ws.gN[k*d:(k+1)*d])
	}
	for j, key := range s.rows.keys {
		f := sf
		if key&dstTable != 0 {
			f = df
		}
		row := int(uint32(key))
		model.Adagrad(f[row*d:(row+1)*d], f[rowsD+row*d:rowsD+(row+1)*d], s.rows.grad[j], lr, workload.AdagradEps)
	}
	c.stepRelationsSum(ws, n, gR)
}

// stepRelationsSum is the relations' part of the sum step: each relation
// row of the chunk stepped once with its occurrences' summed gradient
// (none without relation parameters, gR nil).
func (c *Engine) stepRelationsSum(ws *workerScratch, n int, gR []float32) {
	if gR == nil {
		return
	}
	s, lr := ws.sum, c.h.LR
	w := c.h.Model.RelWidth(c.h.Dim)
	for i := 0; i < n; i++ {
		s.rels.add(&s.set, relTable|uint64(uint32(ws.relIdx[i])), gR[i*w:(i+1)*w])
	}
	c.rel.mu.Lock()
	for j, key := range s.rels.keys {
		r := int(uint32(key))
		model.Adagrad(c.rel.emb[r*w:(r+1)*w], c.rel.state[r*w:(r+1)*w], s.rels.grad[j], lr, workload.AdagradEps)
	}
	c.rel.mu.Unlock()
}

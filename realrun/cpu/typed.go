package cpu

import (
	"fmt"
	"math"
	"sync"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// Typed graphs (entity types, issue 44). A typed store's bucket holds the
// edges of several classes, a class being the (lhs type, rhs type) of its
// edges' relation (store.Manifest.RelationTypes). After the bucket's
// shuffle its edges are grouped, stably, by class (in the order of the
// classes' (lhs, rhs) type indices), and no chunk straddles two classes
// (a class's last chunk may be short; each chunk keeps its stream,
// sample.SeedChunk with its first edge's place in the bucket). A chunk of
// class (a, b) draws its negatives per sample.NegativeSampler.DrawTyped:
// one shared set when a = b is partitioned, otherwise a set for each side
// (model.ChunkGradSides). An endpoint of an unpartitioned ("resident")
// type lives in the resident table (store.Manifest.ResidentRow), which the
// executor loads once and hands to the engine (realrun.ResidentUser); its
// rows are updated without locks by every worker, as partition rows are
// (Hogwild).

// typedInfo is what the engine knows of a typed store.
type typedInfo struct {
	pn       int64    // partitioned nodes: ids ≥ pn are resident
	resident int64    // rows of the resident table
	classOf  []int    // per relation: its class (an index into classes)
	classes  [][2]int // the (lhs, rhs) types of each class, sorted
	res      *store.Buffer
	resMu    sync.Mutex
}

func newTypedInfo(m *store.Manifest) *typedInfo {
	nt := len(m.Types)
	ti := &typedInfo{pn: m.PartitionedNodes(), resident: m.Resident, classOf: make([]int, m.Relations)}
	index := map[int]int{}
	for _, lr := range m.RelationTypes {
		index[lr[0]*nt+lr[1]] = 0
	}
	for k := 0; k < nt*nt; k++ {
		if _, ok := index[k]; ok {
			index[k] = len(ti.classes)
			ti.classes = append(ti.classes, [2]int{k / nt, k % nt})
		}
	}
	for r, lr := range m.RelationTypes {
		ti.classOf[r] = index[lr[0]*nt+lr[1]]
	}
	return ti
}

// SetResident implements realrun.ResidentUser: buf is the resident table
// (embeddings, then their Adagrad state) the following buckets train.
func (c *Engine) SetResident(buf *store.Buffer) {
	if c.typed == nil {
		return
	}
	c.typed.resMu.Lock()
	c.typed.res = buf
	c.typed.resMu.Unlock()
}

// residentFloats is the resident table the engine trains (nil when the
// store has none), or an error when it has one and the executor gave none.
func (c *Engine) residentFloats() ([]float32, error) {
	ti := c.typed
	if ti.resident == 0 {
		return nil, nil
	}
	ti.resMu.Lock()
	buf := ti.res
	ti.resMu.Unlock()
	if buf == nil {
		return nil, fmt.Errorf("cpu engine: the store has %d resident rows but no resident table was given (SetResident)", ti.resident)
	}
	f := buf.Floats()
	if int64(len(f)) < 2*ti.resident*int64(c.h.Dim) {
		return nil, fmt.Errorf("cpu engine: resident table of %d floats, want %d", len(f), 2*ti.resident*int64(c.h.Dim))
	}
	return f, nil
}

// groupByClass orders edges stably by class (a counting sort) and returns
// the end of each class's range (ends[k]: the first edge after class k).
func (ti *typedInfo) groupByClass(edges []store.Edge) []int {
	count := make([]int, len(ti.classes))
	for _, e := range edges {
		count[ti.classOf[e.Rel]]++
	}
	ends := make([]int, len(count))
	pos := make([]int, len(count))
	at := 0
	for k, n := range count {
		pos[k] = at
		at += n
		ends[k] = at
	}
	if len(count) > 1 {
		tmp := make([]store.Edge, len(edges))
		for _, e := range edges {
			k := ti.classOf[e.Rel]
			tmp[pos[k]] = e
			pos[k]++
		}
		copy(edges, tmp)
	}
	return ends
}

// typedScratch is a worker's buffers for typed chunks (allocated at its
// first one).
type typedScratch struct {
	srcTab, dstTab []sample.Table // each edge's endpoints' tables
	negTab         []sample.Table // the destination side's (or shared) negatives' tables
	negRow2        []int32        // the source side's negatives (two sets)
	negTab2        []sample.Table
	N2, gN2        []float32
}

func newTypedScratch(h realrun.Hyper) *typedScratch {
	n, m, d := h.Chunk(), h.Negatives, h.Dim
	return &typedScratch{srcTab: make([]sample.Table, n), dstTab: make([]sample.Table, n),
		negTab: make([]sample.Table, m), negRow2: make([]int32, m), negTab2: make([]sample.Table, m),
		N2: make([]float32, m*d), gN2: make([]float32, m*d)}
}

// tables are a typed chunk's three row tables: the source partition, the
// destination partition and the resident table, each with the offset of
// its Adagrad state.
type tables struct {
	f   [3][]float32
	off [3]int
}

func (t *tables) emb(tab sample.Table, row, d int) []float32 {
	return t.f[tab][row*d : (row+1)*d]
}

func (t *tables) state(tab sample.Table, row, d int) []float32 {
	o := t.off[tab]
	return t.f[tab][o+row*d : o+(row+1)*d]
}

// trainTypedBatch is trainBatch for a batch of one class.
func (c *Engine) trainTypedBatch(ws *workerScratch, at int, batch []store.Edge, class int, si int, src *store.Buffer, di int, dst *store.Buffer, rf []float32) float64 {
	chunk := c.h.Chunk()
	var loss float64
	for lo := 0; lo < len(batch); lo += chunk {
		sample.SeedChunk(ws.src, ws.bucket, at+lo)
		loss += c.trainTypedChunk(ws, batch[lo:min(lo+chunk, len(batch))], class, si, src, di, dst, rf)
	}
	return loss
}

// trainTypedChunk is trainChunk for a chunk of one class of a typed store.
func (c *Engine) trainTypedChunk(ws *workerScratch, ch []store.Edge, class int, si int, src *store.Buffer, di int, dst *store.Buffer, rf []float32) float64 {
	ti := c.typed
	if ws.typed == nil {
		ws.typed = newTypedScratch(c.h)
	}
	ts := ws.typed
	d := c.h.Dim
	n, m := len(ch), c.h.Negatives
	tb := tables{f: [3][]float32{src.Floats(), dst.Floats(), rf}}
	tb.off[sample.SrcPart], tb.off[sample.DstPart] = int(c.rows)*d, int(c.rows)*d
	tb.off[sample.Resident] = int(ti.resident) * d
	srcBase, dstBase := int64(si)*c.rows, int64(di)*c.rows
	uses := c.h.Model.UsesRelations()
	w := c.h.Model.RelWidth(d)
	locate := func(node int32, base int64, part sample.Table) (int32, sample.Table) {
		if int64(node) >= ti.pn {
			return int32(int64(node) - ti.pn), sample.Resident
		}
		return int32(int64(node) - base), part
	}
	// As trainChunk: every row picked and prefetched (with its Adagrad
	// state) before any is gathered.
	prefetch := func(tab sample.Table, row int32) {
		model.Prefetch(tb.emb(tab, int(row), d))
		model.Prefetch(tb.state(tab, int(row), d))
	}
	for i, e := range ch {
		ws.srcRow[i], ts.srcTab[i] = locate(e.Src, srcBase, sample.SrcPart)
		ws.dstRow[i], ts.dstTab[i] = locate(e.Dst, dstBase, sample.DstPart)
		ws.relIdx[i] = e.Rel
		prefetch(ts.srcTab[i], ws.srcRow[i])
		prefetch(ts.dstTab[i], ws.dstRow[i])
	}
	a, b := ti.classes[class][0], ti.classes[class][1]
	shared := c.neg.Shared(a, b)
	c.neg.DrawTyped(ws.rng, si, di, a, b, ws.negRow[:m], ts.negTab[:m], ts.negRow2[:m], ts.negTab2[:m])
	for k := 0; k < m; k++ {
		prefetch(ts.negTab[k], ws.negRow[k])
		if !shared {
			prefetch(ts.negTab2[k], ts.negRow2[k])
		}
	}
	for i := range ch {
		copy(ws.S[i*d:(i+1)*d], tb.emb(ts.srcTab[i], int(ws.srcRow[i]), d))
		copy(ws.D[i*d:(i+1)*d], tb.emb(ts.dstTab[i], int(ws.dstRow[i]), d))
		if uses {
			r := int(ws.relIdx[i])
			copy(ws.R[i*w:(i+1)*w], c.rel.emb[r*w:(r+1)*w])
		}
	}
	for k := 0; k < m; k++ {
		copy(ws.N[k*d:(k+1)*d], tb.emb(ts.negTab[k], int(ws.negRow[k]), d))
	}
	Ndst, gNdst := ws.N[:m*d], ws.gN[:m*d]
	Nsrc, gNsrc := Ndst, gNdst
	if !shared {
		for k := 0; k < m; k++ {
			copy(ts.N2[k*d:(k+1)*d], tb.emb(ts.negTab2[k], int(ts.negRow2[k]), d))
		}
		Nsrc, gNsrc = ts.N2[:m*d], ts.gN2[:m*d]
		clear(gNsrc)
	}
	clear(ws.gS[:n*d])
	clear(ws.gD[:n*d])
	clear(gNdst)
	var R, gR []float32
	if uses {
		R, gR = ws.R[:n*w], ws.gR[:n*w]
		clear(gR)
	}
	loss := model.ChunkGradSides(c.h.Model, c.h.Objective, d, ws.S[:n*d], R, ws.D[:n*d], Ndst, Nsrc, n, m, ws.gS[:n*d], gR, ws.gD[:n*d], gNdst, gNsrc, ws.sc)
	if c.h.Rule() == realrun.DuplicatesSum {
		c.stepSumTyped(ws, n, m, shared, &tb, gR)
	} else {
		c.stepEachTyped(ws, n, m, shared, &tb, gR)
	}
	if math.IsNaN(float64(loss)) {
		return math.NaN()
	}
	return float64(loss)
}

// stepEachTyped is stepEach for a typed chunk, in the same order: edge by
// edge, the source before the destination, then the negatives (the
// destination side's set, then the source side's), then the relations.
func (c *Engine) stepEachTyped(ws *workerScratch, n, m int, shared bool, tb *tables, gR []float32) {
	d, lr := c.h.Dim, c.h.LR
	ts := ws.typed
	step := func(tab sample.Table, row int, g []float32) {
		model.Adagrad(tb.emb(tab, row, d), tb.state(tab, row, d), g, lr, workload.AdagradEps)
	}
	for i := 0; i < n; i++ {
		step(ts.srcTab[i], int(ws.srcRow[i]), ws.gS[i*d:(i+1)*d])
		step(ts.dstTab[i], int(ws.dstRow[i]), ws.gD[i*d:(i+1)*d])
	}
	for k := 0; k < m; k++ {
		step(ts.negTab[k], int(ws.negRow[k]), ws.gN[k*d:(k+1)*d])
	}
	if !shared {
		for k := 0; k < m; k++ {
			step(ts.negTab2[k], int(ts.negRow2[k]), ts.gN2[k*d:(k+1)*d])
		}
	}
	c.stepRelations(ws, n, gR)
}

// stepRelations is stepEach's relation step (one per edge, in order,
// under the relations' lock).
func (c *Engine) stepRelations(ws *workerScratch, n int, gR []float32) {
	if gR == nil {
		return
	}
	d, lr := c.h.Dim, c.h.LR
	w := c.h.Model.RelWidth(d)
	c.rel.mu.Lock()
	for i := 0; i < n; i++ {
		r := int(ws.relIdx[i])
		model.Adagrad(c.rel.emb[r*w:(r+1)*w], c.rel.state[r*w:(r+1)*w], gR[i*w:(i+1)*w], lr, workload.AdagradEps)
	}
	c.rel.mu.Unlock()
}

// resTable is the sum rule's key table of resident rows.
const resTable uint64 = 3 << 32

// stepSumTyped is stepSum for a typed chunk: a row is a (table, row) pair
// of the source partition, the destination partition (the same table
// when the two are one buffer) or the resident table; occurrences in
// stepEachTyped's order.
func (c *Engine) stepSumTyped(ws *workerScratch, n, m int, shared bool, tb *tables, gR []float32) {
	d, lr := c.h.Dim, c.h.LR
	ts := ws.typed
	if ws.sum == nil {
		ws.sum = newSumScratch(c.h)
	}
	if !shared && cap(ws.sum.rows.keys) < 2*n+2*m {
		ws.sum.set = newRowSet(3*n + 2*m)
		ws.sum.rows = newGradSums(2*n + 2*m)
	}
	s := ws.sum
	s.set.reset()
	s.rows.reset()
	s.rels.reset()
	sf, df := tb.f[sample.SrcPart], tb.f[sample.DstPart]
	oneBuf := len(sf) > 0 && len(df) > 0 && &sf[0] == &df[0]
	keyOf := func(tab sample.Table, row int32) uint64 {
		k := uint64(uint32(row))
		switch {
		case tab == sample.Resident:
			return resTable | k
		case tab == sample.DstPart && !oneBuf:
			return dstTable | k
		}
		return srcTable | k
	}
	for i := 0; i < n; i++ {
		s.rows.add(&s.set, keyOf(ts.srcTab[i], ws.srcRow[i]), ws.gS[i*d:(i+1)*d])
		s.rows.add(&s.set, keyOf(ts.dstTab[i], ws.dstRow[i]), ws.gD[i*d:(i+1)*d])
	}
	for k := 0; k < m; k++ {
		s.rows.add(&s.set, keyOf(ts.negTab[k], ws.negRow[k]), ws.gN[k*d:(k+1)*d])
	}
	if !shared {
		for k := 0; k < m; k++ {
			s.rows.add(&s.set, keyOf(ts.negTab2[k], ts.negRow2[k]), ts.gN2[k*d:(k+1)*d])
		}
	}
	for j, key := range s.rows.keys {
		tab := sample.SrcPart
		switch key &^ math.MaxUint32 {
		case resTable:
			tab = sample.Resident
		case dstTable:
			tab = sample.DstPart
		}
		row := int(uint32(key))
		model.Adagrad(tb.emb(tab, row, d), tb.state(tab, row, d), s.rows.grad[j], lr, workload.AdagradEps)
	}
	if gR == nil {
		return
	}
	w := c.h.Model.RelWidth(d)
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

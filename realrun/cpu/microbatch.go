package cpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"time"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/micro"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// rowTables finds a node row's embedding and Adagrad state by key, and
// holds the relation embeddings.
type rowTables struct {
	row      func(key int64) (emb, state []float32)
	rel      *relations
	relation bool
}

// microProbe receives each micro-batch's shape and the bytes allocated
// while it ran (MeasureMicroBatches).
type microProbe func(s workload.BatchShape, allocated uint64)

// trainMicro is the CPU engine's hook: the batch's negatives are drawn as
// the default path draws them, then the batch runs split.
func (c *Engine) trainMicro(ws *workerScratch, at int, batch []store.Edge, si int, src *store.Buffer, di int, dst *store.Buffer) float64 {
	d, ch, m := c.h.Dim, c.h.Chunk(), c.h.Negatives
	sf, df := src.Floats(), dst.Floats()
	rowsD := int(c.rows) * d
	srcBase, dstBase := int64(si)*c.rows, int64(di)*c.rows
	b := micro.Batch{Src: make([]int64, len(batch)), Dst: make([]int64, len(batch)), Rel: make([]int32, len(batch)), Chunk: make([]int32, len(batch))}
	for i, e := range batch {
		b.Src[i] = int64(si)<<32 | (int64(e.Src) - srcBase)
		b.Dst[i] = int64(di)<<32 | (int64(e.Dst) - dstBase)
		b.Rel[i], b.Chunk[i] = e.Rel, int32(i/ch)
	}
	for lo := 0; lo < len(batch); lo += ch {
		negs := make([]int64, m)
		sample.SeedChunk(ws.src, ws.bucket, at+lo)
		c.neg.Draw(ws.rng, si, di, ws.negRow[:m], ws.negSide[:m])
		for k := range negs {
			p := si
			if ws.negSide[k] {
				p = di
			}
			negs[k] = int64(p)<<32 | int64(ws.negRow[k])
		}
		b.Neg = append(b.Neg, negs)
	}
	tb := rowTables{rel: c.rel, relation: c.h.Model.UsesRelations(), row: func(key int64) ([]float32, []float32) {
		f := sf
		if int(key>>32) != si {
			f = df
		}
		r := int(key & math.MaxUint32)
		return f[r*d : (r+1)*d], f[rowsD+r*d : rowsD+(r+1)*d]
	}}
	loss, _, err := trainSplit(c.h, b, tb, nil)
	if err != nil {
		c.microErr.set(err)
		return math.NaN()
	}
	return loss
}

// firstError keeps the first error workers report.
type firstError struct {
	mu  sync.Mutex
	err error
}

func (f *firstError) set(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

// take returns the first error and forgets it.
func (f *firstError) take() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.err
	f.err = nil
	return err
}

// chooseSplit returns the micro-batches of the batch: Count of them, or
// the fewest whose estimated peak fits Budget, found by
// workload.FewestMicroBatches (the simulator's search too) from the lower
// bound the whole batch's estimate gives (workload.MicroLowerBound).
func chooseSplit(mb realrun.MicroBatching, b micro.Batch, ix micro.Index, model workload.Model, d int) ([][]int32, error) {
	method := mb.Split
	if method == "" {
		method = micro.REG
	}
	if mb.Count > 0 {
		return micro.Split(b, ix, mb.Count, method, mb.Seed)
	}
	all := make([]int32, b.Edges())
	for i := range all {
		all[i] = int32(i)
	}
	whole := workload.EstimateBatch(ix.Shape(b, all, model, d, 1))
	splits := map[int][][]int32{1: {all}}
	k, err := workload.FewestMicroBatches(workload.MicroLowerBound(whole, mb.Budget), b.Edges(), func(k int) (bool, error) {
		if k == 1 {
			return whole.Total <= mb.Budget, nil
		}
		parts, err := micro.Split(b, ix, k, method, mb.Seed)
		if err != nil {
			return false, err
		}
		splits[k] = parts
		for _, es := range parts {
			if workload.EstimateBatch(ix.Shape(b, es, model, d, 1)).Total > mb.Budget {
				return false, nil
			}
		}
		return true, nil
	})
	if errors.Is(err, workload.ErrNoFit) {
		return nil, fmt.Errorf("micro-batching: no split of %d edges fits %d bytes", b.Edges(), mb.Budget)
	}
	if err != nil {
		return nil, err
	}
	return splits[k], nil
}

// trainSplit trains one batch split into micro-batches and returns its loss
// and the number of micro-batches. With a probe, every micro-batch's
// device buffers are allocated afresh so that the bytes allocated while it
// runs are its peak.
func trainSplit(h realrun.Hyper, b micro.Batch, tb rowTables, probe microProbe) (float64, int, error) {
	d := h.Dim
	if err := h.Micro.Check(h); err != nil {
		return 0, 0, err
	}
	ix := micro.NewIndex(b, tb.relation)
	parts, err := chooseSplit(h.Micro, b, ix, h.Model, d)
	if err != nil {
		return 0, 0, err
	}
	w := h.Model.RelWidth(d) // a relation row's floats
	acc := make([]float32, len(ix.Keys)*d)
	relAcc := make([]float32, len(ix.RelKeys)*w)
	loc := make([]int32, len(ix.Keys))
	relLoc := make([]int32, len(ix.RelKeys))
	for i := range loc {
		loc[i] = -1
	}
	for i := range relLoc {
		relLoc[i] = -1
	}
	var dev *deviceBuffers
	var loss float64
	for _, es := range parts {
		pieces := piecesOf(b, es)
		var before uint64
		if probe != nil || dev == nil {
			if probe != nil {
				before = allocatedBytes()
			}
			dev = &deviceBuffers{sc: model.NewScratch()}
		}
		loss += dev.run(h, b, ix, tb, es, pieces, loc, relLoc)
		if probe != nil {
			got := allocatedBytes() - before
			probe(ix.Shape(b, es, h.Model, d, 1), got)
		}
		// Device to host: add the micro-batch's gradient sums.
		for j, r := range dev.rowIDs {
			axpyOne(dev.G[j*d:(j+1)*d], acc[int(r)*d:int(r+1)*d])
			loc[r] = -1
		}
		for j, r := range dev.relIDs {
			axpyOne(dev.relG[j*w:(j+1)*w], relAcc[int(r)*w:int(r+1)*w])
			relLoc[r] = -1
		}
	}
	for r, key := range ix.Keys {
		emb, state := tb.row(key)
		model.Adagrad(emb, state, acc[r*d:(r+1)*d], h.LR, workload.AdagradEps)
	}
	if len(ix.RelKeys) > 0 {
		tb.rel.mu.Lock()
		for j, rel := range ix.RelKeys {
			o := int(rel) * w
			model.Adagrad(tb.rel.emb[o:o+w], tb.rel.state[o:o+w], relAcc[j*w:(j+1)*w], h.LR, workload.AdagradEps)
		}
		tb.rel.mu.Unlock()
	}
	return loss, len(parts), nil
}

func axpyOne(x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += v
	}
}

// piecesOf returns the chunk pieces of a micro-batch as [lo, hi) ranges of
// its edge list (a chunk's edges are contiguous there), the largest first
// and the rest in training order, so that scratch buffers are sized once.
func piecesOf(b micro.Batch, es []int32) [][2]int {
	var ps [][2]int
	for lo := 0; lo < len(es); {
		hi := lo + 1
		for hi < len(es) && b.Chunk[es[hi]] == b.Chunk[es[lo]] {
			hi++
		}
		ps = append(ps, [2]int{lo, hi})
		lo = hi
	}
	big := 0
	for i, p := range ps {
		if p[1]-p[0] > ps[big][1]-ps[big][0] {
			big = i
		}
	}
	if big > 0 {
		p := ps[big]
		ps = slices.Delete(ps, big, big+1)
		ps = slices.Insert(ps, 0, p)
	}
	return ps
}

// deviceBuffers are what one micro-batch holds on the device: the terms of
// workload.EstimateBatch, one for one.
type deviceBuffers struct {
	P, G, relP, relG       []float32 // gathered rows and their gradient sums
	srcL, dstL, relL, negL []int32   // local indices
	rowIDs, relIDs         []int64   // dense ids, for the write-back
	S, R, D, N             []float32 // one chunk's expanded rows
	gS, gR, gD, gN         []float32
	sc                     *model.Scratch
}

func growF(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	b = b[:n]
	clear(b)
	return b
}

func growI(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n)
	}
	return b[:n]
}

// run gathers the micro-batch's rows, computes every chunk piece's gradient
// against them and sums it per row in G; it returns the loss.
func (v *deviceBuffers) run(h realrun.Hyper, b micro.Batch, ix micro.Index, tb rowTables, es []int32, pieces [][2]int, loc, relLoc []int32) float64 {
	d, m := h.Dim, h.Negatives
	w := h.Model.RelWidth(d) // a relation row's floats
	v.rowIDs, v.relIDs = v.rowIDs[:0], v.relIDs[:0]
	local := func(r int32) int32 {
		if loc[r] < 0 {
			loc[r] = int32(len(v.rowIDs))
			v.rowIDs = append(v.rowIDs, int64(r))
		}
		return loc[r]
	}
	// Count first so that every buffer is allocated once, at its size.
	rows, rels := 0, 0
	for _, p := range pieces {
		for _, i := range es[p[0]:p[1]] {
			for _, r := range [2]int32{ix.Src[i], ix.Dst[i]} {
				if loc[r] == -1 {
					loc[r] = -2
					rows++
				}
			}
			if tb.relation && relLoc[ix.Rel[i]] == -1 {
				relLoc[ix.Rel[i]] = -2
				rels++
			}
		}
		for _, r := range ix.Neg[b.Chunk[es[p[0]]]] {
			if loc[r] == -1 {
				loc[r] = -2
				rows++
			}
		}
	}
	for _, p := range pieces { // back to unassigned
		for _, i := range es[p[0]:p[1]] {
			loc[ix.Src[i]], loc[ix.Dst[i]] = -1, -1
			if tb.relation {
				relLoc[ix.Rel[i]] = -1
			}
		}
		for _, r := range ix.Neg[b.Chunk[es[p[0]]]] {
			loc[r] = -1
		}
	}
	if cap(v.rowIDs) < rows {
		v.rowIDs = make([]int64, 0, rows)
	}
	if cap(v.relIDs) < rels {
		v.relIDs = make([]int64, 0, rels)
	}
	e := len(es)
	v.srcL, v.dstL, v.negL = growI(v.srcL, e), growI(v.dstL, e), growI(v.negL, len(pieces)*m)
	if tb.relation {
		v.relL = growI(v.relL, e)
	}
	for j, p := range pieces {
		for q := p[0]; q < p[1]; q++ {
			i := es[q]
			v.srcL[q], v.dstL[q] = local(ix.Src[i]), local(ix.Dst[i])
			if tb.relation {
				r := ix.Rel[i]
				if relLoc[r] < 0 {
					relLoc[r] = int32(len(v.relIDs))
					v.relIDs = append(v.relIDs, int64(r))
				}
				v.relL[q] = relLoc[r]
			}
		}
		for k, r := range ix.Neg[b.Chunk[es[p[0]]]] {
			v.negL[j*m+k] = local(r)
		}
	}
	// Gather (host to device).
	v.P, v.G = growF(v.P, rows*d), growF(v.G, rows*d)
	for j, r := range v.rowIDs {
		emb, _ := tb.row(ix.Keys[r])
		copy(v.P[j*d:(j+1)*d], emb)
	}
	if tb.relation {
		v.relP, v.relG = growF(v.relP, rels*w), growF(v.relG, rels*w)
		for j, r := range v.relIDs {
			o := int(ix.RelKeys[r]) * w
			copy(v.relP[j*w:(j+1)*w], tb.rel.emb[o:o+w])
		}
	}
	n := pieces[0][1] - pieces[0][0]
	v.S, v.D, v.gS, v.gD = growF(v.S, n*d), growF(v.D, n*d), growF(v.gS, n*d), growF(v.gD, n*d)
	v.N, v.gN = growF(v.N, m*d), growF(v.gN, m*d)
	if tb.relation {
		v.R, v.gR = growF(v.R, n*w), growF(v.gR, n*w)
	}
	var loss float64
	for j, p := range pieces {
		n := p[1] - p[0]
		S, D, gS, gD := v.S[:n*d], v.D[:n*d], v.gS[:n*d], v.gD[:n*d]
		var R, gR []float32
		for q := 0; q < n; q++ {
			s, t := int(v.srcL[p[0]+q]), int(v.dstL[p[0]+q])
			copy(S[q*d:(q+1)*d], v.P[s*d:(s+1)*d])
			copy(D[q*d:(q+1)*d], v.P[t*d:(t+1)*d])
		}
		if tb.relation {
			R, gR = v.R[:n*w], v.gR[:n*w]
			for q := 0; q < n; q++ {
				r := int(v.relL[p[0]+q])
				copy(R[q*w:(q+1)*w], v.relP[r*w:(r+1)*w])
			}
			clear(gR)
		}
		negL := v.negL[j*m : (j+1)*m]
		for k, r := range negL {
			copy(v.N[k*d:(k+1)*d], v.P[int(r)*d:int(r+1)*d])
		}
		clear(gS)
		clear(gD)
		clear(v.gN)
		loss += float64(model.ChunkGrad(h.Model, h.Objective, d, S, R, D, v.N, n, m, gS, gR, gD, v.gN, v.sc))
		for q := 0; q < n; q++ {
			s, t := int(v.srcL[p[0]+q]), int(v.dstL[p[0]+q])
			axpyOne(gS[q*d:(q+1)*d], v.G[s*d:(s+1)*d])
			axpyOne(gD[q*d:(q+1)*d], v.G[t*d:(t+1)*d])
			if tb.relation {
				r := int(v.relL[p[0]+q])
				axpyOne(gR[q*w:(q+1)*w], v.relG[r*w:(r+1)*w])
			}
		}
		for k, r := range negL {
			axpyOne(v.gN[k*d:(k+1)*d], v.G[int(r)*d:int(r+1)*d])
		}
	}
	return loss
}

// allocatedBytes is the heap bytes allocated so far by the whole program.
// Small objects are counted when a per-P cache hands its span back, so it
// collects first: the collection flushes every cache, and the count is
// exact at this point.
func allocatedBytes() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// MicroMeasurement is one batch trained split into micro-batches on
// synthetic parameters: per micro-batch, the estimator's peak and the
// bytes the engine allocated for its device buffers (Go's heap
// allocation counter, runtime/metrics /gc/heap/allocs:bytes), and the
// batch's wall time.
type MicroMeasurement struct {
	K         int
	Shapes    []workload.BatchShape
	Estimated []int64
	Allocated []int64
	Seconds   float64
	Loss      float64
}

// MeasureMicroBatches trains batch b once, as configured by h.Micro, on
// seeded random parameters for its rows (keys are any int64) and for
// relations 0..rels-1, and measures every micro-batch. Run it with no
// other goroutine allocating (the counter is the whole program's) and no
// other kernel running: it runs the portable kernels (model.Generic),
// whose buffers are the ones the estimator counts — the score matrices'
// explicit transposes Qᵀ, Nᵀ and Gᵀ, as a device implementation keeps
// them. The SIMD kernels read N and Q in place and need only small
// packing panels, so at SIMD levels the engine allocates 9–15% less than
// estimated (measured: d=64, 200 negatives, chunks of 500): the estimate
// errs on the safe side there.
func MeasureMicroBatches(h realrun.Hyper, b micro.Batch, rels int, seed int64) (MicroMeasurement, error) {
	prev := model.SetLevel(model.Generic)
	defer model.SetLevel(prev)
	if err := h.Model.CheckDim(h.Dim); err != nil {
		return MicroMeasurement{}, err
	}
	if err := h.Micro.Check(h); err != nil {
		return MicroMeasurement{}, err
	}
	d := h.Dim
	ix := micro.NewIndex(b, false)
	slot := make(map[int64]int, len(ix.Keys))
	for i, k := range ix.Keys {
		slot[k] = i
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6d656173)) // "meas"
	emb, state := make([]float32, len(ix.Keys)*d), make([]float32, len(ix.Keys)*d)
	for i := range emb {
		emb[i], state[i] = 0.1*(2*rng.Float32()-1), 0.05+0.1*rng.Float32()
	}
	rel := &relations{}
	if h.Model.UsesRelations() {
		w := h.Model.RelWidth(d)
		rel.emb, rel.state = make([]float32, rels*w), make([]float32, rels*w)
		for i := range rel.emb {
			rel.emb[i], rel.state[i] = 1+0.1*(2*rng.Float32()-1), 0.05+0.1*rng.Float32()
		}
		for _, r := range b.Rel {
			if int(r) < 0 || int(r) >= rels {
				return MicroMeasurement{}, fmt.Errorf("relation %d outside [0, %d)", r, rels)
			}
		}
	}
	tb := rowTables{rel: rel, relation: h.Model.UsesRelations(), row: func(key int64) ([]float32, []float32) {
		s := slot[key]
		return emb[s*d : (s+1)*d], state[s*d : (s+1)*d]
	}}
	var m MicroMeasurement
	start := time.Now()
	loss, k, err := trainSplit(h, b, tb, func(s workload.BatchShape, got uint64) {
		m.Shapes = append(m.Shapes, s)
		m.Estimated = append(m.Estimated, workload.EstimateBatch(s).Total)
		m.Allocated = append(m.Allocated, int64(got))
	})
	m.Seconds = time.Since(start).Seconds()
	m.K, m.Loss = k, loss
	return m, err
}

// Package cpu is tierflow's CPU training engine: the batches of a bucket on
// all cores, Hogwild updates of the two resident partitions, Adagrad after
// every chunk — or, with micro-batching, one batch-synchronous step split
// into micro-batches that fit a memory budget. It registers itself with
// realrun as the engine "cpu".
package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// relations are the relation embeddings, kept in memory and updated
// under a lock after every chunk (synchronously, as Marius does).
type relations struct {
	mu    sync.Mutex
	emb   []float32
	state []float32
}

// Engine trains on all cores: the batches of a bucket are spread over
// Workers goroutines that update the two resident partitions without
// locks (Hogwild: two workers may write the same row at once; the
// updates are sparse and the race is benign for SGD, as in PBG and
// Marius). Every chunk of a batch shares Negatives nodes drawn from the
// bucket's two partitions, a DegreeFrac share by degree, the rest
// uniformly; both sides are corrupted. After each chunk, a row the chunk
// touched more than once gets one Adagrad step per occurrence, or one
// with the summed gradient (Hyper.Duplicates: stepEach, stepSum).
type Engine struct {
	h        realrun.Hyper
	rows     int64
	rel      *relations
	neg      *sample.NegativeSampler
	scratch  chan *workerScratch
	microErr firstError // micro-batching's, reported by TrainBucket
	typed    *typedInfo // nil: an untyped store (typed.go)
}

type workerScratch struct {
	sc             *model.Scratch
	S, R, D, N     []float32
	gS, gR, gD, gN []float32
	srcRow, dstRow []int32
	relIdx         []int32
	negRow         []int32   // local rows
	negSide        []bool    // true: row in the destination partition
	src            *rand.PCG // the chunk's negatives (reseeded per chunk)
	rng            *rand.Rand
	bucket         uint64        // the bucket's seed (sample.SeedChunk)
	sum            *sumScratch   // the sum rule's (nil until it is used)
	typed          *typedScratch // typed chunks' (nil until one is trained)
}

// New prepares the CPU engine for a store: relation embeddings
// initialised from seed, degree samplers per partition. It panics where
// Open fails (a typed store whose node types cannot be read, or
// micro-batching on a typed store).
func New(h realrun.Hyper, st *store.Store, degrees []int32, seed int64) *Engine {
	c, err := Open(h, st, degrees, seed)
	if err != nil {
		panic(err)
	}
	return c
}

// Open is New returning its error: for a typed store (entity types) it
// reads the node types and builds the typed negative samplers
// (sample.NewTypedNegativeSampler); micro-batching does not support typed
// stores yet.
func Open(h realrun.Hyper, st *store.Store, degrees []int32, seed int64) (*Engine, error) {
	c := &Engine{h: h, rows: st.M.Rows, rel: &relations{}}
	c.rel.emb, c.rel.state = sample.InitRelations(h.Model, st.M.Relations, h.Dim, seed)
	if st.M.Typed() {
		if h.Micro.On() {
			return nil, fmt.Errorf("cpu engine: micro-batching does not support entity types yet (work directory %s is typed)", st.Dir)
		}
		types, err := st.NodeTypes()
		if err != nil {
			return nil, err
		}
		if c.neg, err = sample.NewTypedNegativeSampler(&st.M, types, degrees, h.DegreeFrac); err != nil {
			return nil, err
		}
		c.typed = newTypedInfo(&st.M)
	} else {
		c.neg = sample.NewNegativeSampler(st, degrees, h.DegreeFrac)
	}
	c.scratch = make(chan *workerScratch, h.Workers)
	for w := 0; w < h.Workers; w++ {
		c.scratch <- newWorkerScratch(h, seed+int64(w)+1)
	}
	return c, nil
}

func newWorkerScratch(h realrun.Hyper, seed int64) *workerScratch {
	chunk := h.Chunk()
	d := h.Dim
	src := rand.NewPCG(uint64(seed), sample.WorkerStream)
	ws := &workerScratch{sc: model.NewScratch(), src: src, rng: rand.New(src)}
	w := h.Model.RelWidth(d) // a relation row's floats (0: none)
	ws.S, ws.R, ws.D = make([]float32, chunk*d), make([]float32, chunk*w), make([]float32, chunk*d)
	ws.gS, ws.gR, ws.gD = make([]float32, chunk*d), make([]float32, chunk*w), make([]float32, chunk*d)
	ws.N, ws.gN = make([]float32, h.Negatives*d), make([]float32, h.Negatives*d)
	ws.srcRow, ws.dstRow, ws.relIdx = make([]int32, chunk), make([]int32, chunk), make([]int32, chunk)
	ws.negRow, ws.negSide = make([]int32, h.Negatives), make([]bool, h.Negatives)
	return ws
}

// Relations returns the relation embeddings (nil for Dot).
func (c *Engine) Relations() []float32 { return c.rel.emb }

// Name identifies the engine in reports.
func (c *Engine) Name() string { return "cpu" }

// TrainBucket implements Compute.
func (c *Engine) TrainBucket(edges []store.Edge, si int, src *store.Buffer, di int, dst *store.Buffer, rng *rand.Rand) (float64, error) {
	// One draw of the bucket's generator seeds every chunk's negatives
	// (sample.SeedChunk: the chunk's place in the bucket names its
	// stream), so that training depends only on (seed, epoch, bucket),
	// whatever the number of workers; then the edges are shuffled with
	// it, in the order every engine deals them (sample.Shuffler).
	seed := rng.Uint64()
	sample.Shuffle(edges, rng)
	// A typed store's edges are grouped by class, and each batch holds one
	// class (typed.go).
	ends := []int{len(edges)}
	var rf []float32
	if c.typed != nil {
		var err error
		if rf, err = c.residentFloats(); err != nil {
			return 0, err
		}
		ends = c.typed.groupByClass(edges)
	}
	type batch struct {
		lo    int
		edges []store.Edge
		class int
	}
	batches := make(chan batch, c.h.Workers)
	var wg sync.WaitGroup
	var lossMu sync.Mutex
	var loss float64
	for w := 0; w < c.h.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := <-c.scratch
			defer func() { c.scratch <- ws }()
			ws.bucket = seed
			var l float64
			for b := range batches {
				if c.typed != nil {
					l += c.trainTypedBatch(ws, b.lo, b.edges, b.class, si, src, di, dst, rf)
					continue
				}
				l += c.trainBatch(ws, b.lo, b.edges, si, src, di, dst)
			}
			lossMu.Lock()
			loss += l
			lossMu.Unlock()
		}()
	}
	unit := workload.WorkUnit(len(edges), c.h.Batch, c.h.Chunk(), c.h.Workers)
	start := 0
	for class, end := range ends {
		for lo := start; lo < end; lo += unit {
			batches <- batch{lo, edges[lo:min(lo+unit, end)], class}
		}
		start = end
	}
	close(batches)
	wg.Wait()
	return loss, c.microErr.take()
}

// trainBatch trains the batch whose first edge is edge at of its bucket,
// chunk by chunk, each chunk's negatives drawn from its own stream
// (sample.SeedChunk with the worker's bucket seed).
func (c *Engine) trainBatch(ws *workerScratch, at int, batch []store.Edge, si int, src *store.Buffer, di int, dst *store.Buffer) float64 {
	if c.h.Micro.On() {
		return c.trainMicro(ws, at, batch, si, src, di, dst)
	}
	chunk := c.h.Chunk()
	var loss float64
	for lo := 0; lo < len(batch); lo += chunk {
		sample.SeedChunk(ws.src, ws.bucket, at+lo)
		loss += c.trainChunk(ws, batch[lo:min(lo+chunk, len(batch))], si, src, di, dst)
	}
	return loss
}

// prefetchRow prefetches row r of a partition buffer f (embeddings in the
// first rowsD floats, Adagrad state after them).
func prefetchRow(f []float32, r, d, rowsD int) {
	model.Prefetch(f[r*d : (r+1)*d])
	model.Prefetch(f[rowsD+r*d : rowsD+(r+1)*d])
}

func (c *Engine) trainChunk(ws *workerScratch, ch []store.Edge, si int, src *store.Buffer, di int, dst *store.Buffer) float64 {
	d := c.h.Dim
	n, m := len(ch), c.h.Negatives
	sf, df := src.Floats(), dst.Floats()
	rowsD := int(c.rows) * d
	srcBase, dstBase := int64(si)*c.rows, int64(di)*c.rows
	uses := c.h.Model.UsesRelations()
	w := c.h.Model.RelWidth(d) // each edge's relation row
	// Rows are read at random from partitions far larger than the caches:
	// first pick every row (edges, then negatives: the generator's sequence
	// is unchanged) and prefetch it with the Adagrad state row it will
	// update, then gather, so that the cache misses overlap.
	for i, e := range ch {
		sr, dr := int32(int64(e.Src)-srcBase), int32(int64(e.Dst)-dstBase)
		ws.srcRow[i], ws.dstRow[i], ws.relIdx[i] = sr, dr, e.Rel
		prefetchRow(sf, int(sr), d, rowsD)
		prefetchRow(df, int(dr), d, rowsD)
	}
	// Negatives: half from each side's partition (the bucket's two
	// partitions are the resident ones it trains on), a DegreeFrac share
	// drawn by degree.
	c.neg.Draw(ws.rng, si, di, ws.negRow[:m], ws.negSide[:m])
	for k := 0; k < m; k++ {
		f := sf
		if ws.negSide[k] {
			f = df
		}
		prefetchRow(f, int(ws.negRow[k]), d, rowsD)
	}
	for i := range ch {
		sr, dr := int(ws.srcRow[i]), int(ws.dstRow[i])
		copy(ws.S[i*d:(i+1)*d], sf[sr*d:(sr+1)*d])
		copy(ws.D[i*d:(i+1)*d], df[dr*d:(dr+1)*d])
		if uses {
			r := int(ws.relIdx[i])
			copy(ws.R[i*w:(i+1)*w], c.rel.emb[r*w:(r+1)*w])
		}
	}
	for k := 0; k < m; k++ {
		f := sf
		if ws.negSide[k] {
			f = df
		}
		row := int(ws.negRow[k])
		copy(ws.N[k*d:(k+1)*d], f[row*d:(row+1)*d])
	}
	clear(ws.gS[:n*d])
	clear(ws.gD[:n*d])
	clear(ws.gN[:m*d])
	var R, gR []float32
	if uses {
		R, gR = ws.R[:n*w], ws.gR[:n*w]
		clear(gR)
	}
	loss := model.ChunkGrad(c.h.Model, c.h.Objective, d, ws.S[:n*d], R, ws.D[:n*d], ws.N[:m*d], n, m, ws.gS[:n*d], gR, ws.gD[:n*d], ws.gN[:m*d], ws.sc)
	if c.h.Rule() == realrun.DuplicatesSum {
		c.stepSum(ws, n, m, sf, df, gR)
	} else {
		c.stepEach(ws, n, m, sf, df, gR)
	}
	if math.IsNaN(float64(loss)) {
		return math.NaN()
	}
	return float64(loss)
}

// stepEach is the chunk step under realrun.DuplicatesEach: one Adagrad
// step per occurrence with that occurrence's gradient, in the chunk's
// order — edge by edge, the source before the destination, then the
// negatives, then the relations edge by edge.
func (c *Engine) stepEach(ws *workerScratch, n, m int, sf, df, gR []float32) {
	d, lr := c.h.Dim, c.h.LR
	rowsD := int(c.rows) * d
	for i := 0; i < n; i++ {
		sr, dr := int(ws.srcRow[i]), int(ws.dstRow[i])
		model.Adagrad(sf[sr*d:(sr+1)*d], sf[rowsD+sr*d:rowsD+(sr+1)*d], ws.gS[i*d:(i+1)*d], lr, workload.AdagradEps)
		model.Adagrad(df[dr*d:(dr+1)*d], df[rowsD+dr*d:rowsD+(dr+1)*d], ws.gD[i*d:(i+1)*d], lr, workload.AdagradEps)
	}
	for k := 0; k < m; k++ {
		row := int(ws.negRow[k])
		f := sf
		if ws.negSide[k] {
			f = df
		}
		model.Adagrad(f[row*d:(row+1)*d], f[rowsD+row*d:rowsD+(row+1)*d], ws.gN[k*d:(k+1)*d], lr, workload.AdagradEps)
	}
	if gR != nil {
		w := c.h.Model.RelWidth(d)
		c.rel.mu.Lock()
		for i := 0; i < n; i++ {
			r := int(ws.relIdx[i])
			model.Adagrad(c.rel.emb[r*w:(r+1)*w], c.rel.state[r*w:(r+1)*w], gR[i*w:(i+1)*w], lr, workload.AdagradEps)
		}
		c.rel.mu.Unlock()
	}
}

// State implements Stateful: relation embeddings and their Adagrad state.
func (c *Engine) State() []float32 {
	return append(append([]float32(nil), c.rel.emb...), c.rel.state...)
}

// Restore implements Stateful.
func (c *Engine) Restore(state []float32) error {
	if len(state) != len(c.rel.emb)+len(c.rel.state) {
		return fmt.Errorf("checkpoint holds %d relation floats, the engine %d", len(state), len(c.rel.emb)+len(c.rel.state))
	}
	n := copy(c.rel.emb, state)
	copy(c.rel.state, state[n:])
	return nil
}

func init() {
	realrun.RegisterEngine("cpu", func(o realrun.EngineOptions) (realrun.Engine, error) {
		if _, err := realrun.ParseDuplicates(string(o.Hyper.Duplicates)); err != nil {
			return nil, err
		}
		return Open(o.Hyper, o.Store, o.Degrees, o.Seed)
	})
}

var (
	_ realrun.Engine       = (*Engine)(nil)
	_ realrun.Stateful     = (*Engine)(nil)
	_ realrun.ResidentUser = (*Engine)(nil)
)

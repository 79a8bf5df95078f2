package realrun

import (
	"math"
	"math/rand/v2"
	"sync"

	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// Compute trains the edges of one bucket on resident partitions. It is the
// seam where a GPU engine plugs in; CPU is the pure-Go implementation.
type Compute interface {
	// TrainBucket trains edges whose sources live in src (partition si)
	// and destinations in dst (partition di), and returns the summed loss.
	TrainBucket(edges []store.Edge, si int, src *store.Buffer, di int, dst *store.Buffer, rng *rand.Rand) (float64, error)
	Name() string
}

// Hyper are the training hyper-parameters.
type Hyper struct {
	// Training is the shape the simulator models: score function,
	// dimension, batch, negatives and chunk size.
	workload.Training
	DegreeFrac float64
	LR         float32
	Workers    int
	// Micro, when on, trains every batch as a whole — gradients summed
	// over the batch, one Adagrad step per row at its end — split into
	// the fewest micro-batches that fit its memory budget (microbatch.go).
	Micro MicroBatching
}

// relations are the relation embeddings, kept in memory and updated
// under a lock after every chunk (synchronously, as Marius does).
type relations struct {
	mu    sync.Mutex
	emb   []float32
	state []float32
}

// CPU trains on all cores: the batches of a bucket are spread over
// Workers goroutines that update the two resident partitions without
// locks (Hogwild: two workers may write the same row at once; the
// updates are sparse and the race is benign for SGD, as in PBG and
// Marius). Every chunk of a batch shares Negatives nodes drawn from the
// bucket's two partitions, a DegreeFrac share by degree, the rest
// uniformly; both sides are corrupted.
type CPU struct {
	h        Hyper
	rows     int64
	rel      *relations
	neg      *NegativeSampler
	scratch  chan *workerScratch
	microErr firstError // micro-batching's, reported by TrainBucket
}

type workerScratch struct {
	sc             *model.Scratch
	S, R, D, N     []float32
	gS, gR, gD, gN []float32
	srcRow, dstRow []int32
	relIdx         []int32
	negRow         []int32 // local rows
	negSide        []bool  // true: row in the destination partition
	src            *rand.PCG
	rng            *rand.Rand
}

// partSampler draws nodes of one partition uniformly or by degree (alias
// method over its rows' degrees).
type partSampler struct {
	rows  int
	prob  []float32
	alias []int32
}

func newPartSampler(deg []int32) *partSampler {
	n := len(deg)
	ps := &partSampler{rows: n, prob: make([]float32, n), alias: make([]int32, n)}
	var total float64
	for _, d := range deg {
		total += float64(d) + 1 // +1: every node can be drawn
	}
	scaled := make([]float64, n)
	var small, large []int32
	for i, d := range deg {
		scaled[i] = (float64(d) + 1) * float64(n) / total
		if scaled[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		ps.prob[s] = float32(scaled[s])
		ps.alias[s] = l
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, l := range large {
		ps.prob[l] = 1
	}
	for _, s := range small {
		ps.prob[s] = 1
	}
	return ps
}

func (ps *partSampler) uniform(rng *rand.Rand) int32 { return int32(rng.IntN(ps.rows)) }

func (ps *partSampler) byDegree(rng *rand.Rand) int32 {
	i := rng.IntN(ps.rows)
	if rng.Float32() < ps.prob[i] {
		return int32(i)
	}
	return ps.alias[i]
}

// NewCPU prepares the CPU engine for a store: relation embeddings
// initialised from seed, degree samplers per partition.
func NewCPU(h Hyper, st *store.Store, degrees []int32, seed int64) *CPU {
	c := &CPU{h: h, rows: st.M.Rows, rel: &relations{}}
	if h.Model.UsesRelations() {
		rng := rand.New(rand.NewPCG(uint64(seed), 0x72656c73)) // "rels"
		n := st.M.Relations * h.Dim
		c.rel.emb = make([]float32, n)
		c.rel.state = make([]float32, n)
		for i := range c.rel.emb {
			c.rel.emb[i] = 1 + 0.1*(2*rng.Float32()-1) // near identity, as DistMult/ComplEx start
		}
		if h.Model == workload.ComplEx {
			half := h.Dim / 2
			for r := 0; r < st.M.Relations; r++ {
				for k := half; k < h.Dim; k++ {
					c.rel.emb[r*h.Dim+k] = 0.1 * (2*rng.Float32() - 1)
				}
			}
		}
	}
	c.neg = NewNegativeSampler(st, degrees, h.DegreeFrac)
	c.scratch = make(chan *workerScratch, h.Workers)
	for w := 0; w < h.Workers; w++ {
		c.scratch <- newWorkerScratch(h, seed+int64(w)+1)
	}
	return c
}

func newWorkerScratch(h Hyper, seed int64) *workerScratch {
	chunk := h.Chunk()
	d := h.Dim
	src := rand.NewPCG(uint64(seed), 0x776b7273) // "wkrs"
	ws := &workerScratch{sc: model.NewScratch(), src: src, rng: rand.New(src)}
	ws.S, ws.R, ws.D = make([]float32, chunk*d), make([]float32, chunk*d), make([]float32, chunk*d)
	ws.gS, ws.gR, ws.gD = make([]float32, chunk*d), make([]float32, chunk*d), make([]float32, chunk*d)
	ws.N, ws.gN = make([]float32, h.Negatives*d), make([]float32, h.Negatives*d)
	ws.srcRow, ws.dstRow, ws.relIdx = make([]int32, chunk), make([]int32, chunk), make([]int32, chunk)
	ws.negRow, ws.negSide = make([]int32, h.Negatives), make([]bool, h.Negatives)
	return ws
}

// Relations returns the relation embeddings (nil for Dot).
func (c *CPU) Relations() []float32 { return c.rel.emb }

// Name identifies the engine in reports.
func (c *CPU) Name() string { return "cpu" }

// TrainBucket implements Compute.
func (c *CPU) TrainBucket(edges []store.Edge, si int, src *store.Buffer, di int, dst *store.Buffer, rng *rand.Rand) (float64, error) {
	rng.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
	// Every worker's sampler is reseeded from the bucket's generator, so
	// that with one worker training depends only on (seed, epoch, bucket).
	seeds := make(chan uint64, c.h.Workers)
	for w := 0; w < c.h.Workers; w++ {
		seeds <- rng.Uint64()
	}
	batches := make(chan []store.Edge, c.h.Workers)
	var wg sync.WaitGroup
	var lossMu sync.Mutex
	var loss float64
	for w := 0; w < c.h.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := <-c.scratch
			defer func() { c.scratch <- ws }()
			ws.src.Seed(<-seeds, 0x776b7273)
			var l float64
			for b := range batches {
				l += c.trainBatch(ws, b, si, src, di, dst)
			}
			lossMu.Lock()
			loss += l
			lossMu.Unlock()
		}()
	}
	unit := workload.WorkUnit(len(edges), c.h.Batch, c.h.Chunk(), c.h.Workers)
	for lo := 0; lo < len(edges); lo += unit {
		batches <- edges[lo:min(lo+unit, len(edges))]
	}
	close(batches)
	wg.Wait()
	return loss, c.microErr.take()
}

func (c *CPU) trainBatch(ws *workerScratch, batch []store.Edge, si int, src *store.Buffer, di int, dst *store.Buffer) float64 {
	if c.h.Micro.On() {
		return c.trainMicro(ws, batch, si, src, di, dst)
	}
	chunk := c.h.Chunk()
	var loss float64
	for lo := 0; lo < len(batch); lo += chunk {
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

func (c *CPU) trainChunk(ws *workerScratch, ch []store.Edge, si int, src *store.Buffer, di int, dst *store.Buffer) float64 {
	d := c.h.Dim
	n, m := len(ch), c.h.Negatives
	sf, df := src.Floats(), dst.Floats()
	rowsD := int(c.rows) * d
	srcBase, dstBase := int64(si)*c.rows, int64(di)*c.rows
	uses := c.h.Model.UsesRelations()
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
			copy(ws.R[i*d:(i+1)*d], c.rel.emb[r*d:(r+1)*d])
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
		R, gR = ws.R[:n*d], ws.gR[:n*d]
		clear(gR)
	}
	loss := model.ChunkGrad(c.h.Model, d, ws.S[:n*d], R, ws.D[:n*d], ws.N[:m*d], n, m, ws.gS[:n*d], gR, ws.gD[:n*d], ws.gN[:m*d], ws.sc)
	lr := c.h.LR
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
	if uses {
		c.rel.mu.Lock()
		for i := 0; i < n; i++ {
			r := int(ws.relIdx[i])
			model.Adagrad(c.rel.emb[r*d:(r+1)*d], c.rel.state[r*d:(r+1)*d], gR[i*d:(i+1)*d], lr, workload.AdagradEps)
		}
		c.rel.mu.Unlock()
	}
	if math.IsNaN(float64(loss)) {
		return math.NaN()
	}
	return float64(loss)
}

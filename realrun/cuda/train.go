package cuda

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
	"unsafe"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/workload"
)

// The update rules of kernels/train.cu (chunk_back's rule).
const (
	ruleSum  = 0 // one step per distinct row with its summed gradient
	ruleEach = 1 // one step per occurrence, in the CPU engine's order
)

// lossParts is the number of partial sums the softmax adds the loss into.
const lossParts = 32

// pieceEdges is about the edges of one index piece of the chunk step: the
// GPU starts on a batch's first piece while the producer samples the next.
const pieceEdges = 8192

// modelCode is a score function as the kernels number them.
func modelCode(m workload.Model) int {
	switch m {
	case workload.DistMult:
		return 1
	case workload.ComplEx:
		return 2
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// piece is a run of chunks of one batch whose indices travel to the GPU
// together, through index slot slot.
type piece struct {
	lo, edges    int // its first edge in the bucket, and its edges
	chunks, last int // its chunks, and the edges of the last one
	first, final bool
	batch        int // final: the batch's edges (the step's bound)
	slot         int
	hs           *hostStage // --buffer host: the batch's compact tables
}

// pieces cuts a bucket of n edges as the CPU engine does — batches of
// Batch edges, chunks of Chunk edges within each batch — into pieces of
// chunks of one batch: with --buffer host a whole batch (its rows are
// staged at once), else pieces of 1, 2, 4, … up to pieceChunks chunks, so
// that the GPU starts on a bucket's first chunk while the producer
// shuffles and samples the rest.
func (e *Engine) pieces(n int) []piece {
	var ps []piece
	nc, b := e.chunk, e.h.Batch
	limit := 1
	if e.mode == realrun.BufferHost {
		limit = e.pieceChunks
	}
	for blo := 0; blo < n; blo += b {
		bn := min(b, n-blo)
		chunks := (bn + nc - 1) / nc
		for c0 := 0; c0 < chunks; {
			c1 := min(chunks, c0+limit)
			lo, hi := blo+c0*nc, min(blo+c1*nc, blo+bn)
			ps = append(ps, piece{lo: lo, edges: hi - lo, chunks: c1 - c0, last: hi - (blo + (c1-1)*nc),
				first: c0 == 0, final: c1 == chunks, batch: bn})
			c0, limit = c1, min(2*limit, e.pieceChunks)
		}
	}
	return ps
}

// TrainBucket implements realrun.Compute. Edges are shuffled and every
// chunk's negatives drawn exactly as the CPU engine does with one worker,
// and each chunk is trained as the CPU engine trains it: by default a
// step after every chunk (the chunk step), each row that occurs more than
// once in the chunk updated by Hyper.Rule (DuplicatesEach: a step per
// occurrence in the CPU engine's order; DuplicatesSum: one with the summed
// gradient). With micro-batching on (Hyper.Micro: --micro-batches,
// --micro-batch-memory) a batch's chunks are trained together and each
// touched row gets one Adagrad step with its gradients summed over the
// batch: the batch step of Marius and GE2, faster on a GPU and slower to
// learn per epoch (the batch's memory is the engine's already, so it is
// never split).
//
// A producer goroutine samples the bucket piece by piece into a ring of
// pinned index slots while this goroutine uploads and launches the pieces
// before it, so that sampling overlaps the GPU; the compute stream drains
// once, at the bucket's end (its partitions may then be evicted).
func (e *Engine) TrainBucket(edges []store.Edge, si int, src *store.Buffer, di int, dst *store.Buffer, rng *rand.Rand) (float64, error) {
	wr := rand.New(rand.NewPCG(rng.Uint64(), sample.WorkerStream)) // as a CPU worker's sampler
	shuf := sample.NewShuffler(edges, rng)                         // the producer deals the edges
	done, err := e.bind()
	if err != nil {
		return 0, err
	}
	defer done()
	var tb tables
	if e.mode == realrun.BufferGPU {
		if tb, err = e.slotTables(si, di); err != nil {
			return 0, err
		}
	}
	if err := e.g.memset32(e.loss.p, 0, 2*lossParts, computeStream); err != nil {
		return 0, err
	}
	start := time.Since(e.t0).Seconds()
	if err := e.g.record(evBucketStart, computeStream); err != nil {
		return 0, err
	}
	if err := e.run(shuf, len(edges), si, src, di, dst, wr, tb); err != nil {
		return 0, fmt.Errorf("bucket (%d,%d): %w", si, di, err)
	}
	loss, err := e.bucketLoss()
	if err != nil {
		return 0, fmt.Errorf("bucket (%d,%d): %w", si, di, err)
	}
	e.mu.Lock()
	e.trainSpans = append(e.trainSpans, report.Interval{Start: start, End: time.Since(e.t0).Seconds()})
	e.mu.Unlock()
	return loss, nil
}

// run trains the bucket's pieces: a producer goroutine samples them into
// the ring's pinned slots (waiting for a slot's last upload before it
// writes it again), this one uploads each on the upload stream and
// launches its kernels on the compute stream once the upload is done.
func (e *Engine) run(shuf *sample.Shuffler, n, si int, src *store.Buffer, di int, dst *store.Buffer, wr *rand.Rand, tb tables) error {
	ps := e.pieces(n)
	free := make(chan int, ringSlots)
	for j := range ringSlots {
		free <- j
	}
	ready := make(chan piece, ringSlots)
	quit := make(chan struct{})
	var perr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ready)
		unbind, err := e.bind()
		if err != nil {
			perr = err
			return
		}
		defer unbind()
		side := make([]bool, e.h.Negatives)
		for _, p := range ps {
			select {
			case p.slot = <-free:
			case <-quit:
				return
			}
			if err := e.g.syncEvent(evUploaded + p.slot); err != nil {
				perr = fmt.Errorf("index slot %d: %w", p.slot, err)
				return
			}
			e.fill(p, shuf.Next(p.edges), si, di, wr, side)
			if e.host != nil {
				p.hs = e.host.dedupe(p, e.idxHost[p.slot].int32s(), e.chunk, e.h.Negatives, e.L, si == di)
			}
			select {
			case ready <- p:
			case <-quit:
				return
			}
		}
	}()
	err := e.launchAll(ready, free, tb, src, dst)
	close(quit)
	wg.Wait()
	if err == nil {
		err = perr
	}
	return err
}

// fill writes piece p's indices into its pinned slot: per chunk the local
// rows of its edges' sources and destinations and their relations, then
// the chunk's negatives, drawn as the CPU engine draws them.
func (e *Engine) fill(p piece, edges []store.Edge, si, di int, wr *rand.Rand, side []bool) {
	buf := e.idxHost[p.slot].int32s()
	nc, m, L := e.chunk, e.h.Negatives, e.L
	srcBase, dstBase := int64(si)*e.rows, int64(di)*e.rows
	for c := 0; c < p.chunks; c++ {
		ce := edges[c*nc : min((c+1)*nc, len(edges))]
		ci := buf[c*L : (c+1)*L]
		src, dst, rel := ci[:nc], ci[nc:2*nc], ci[2*nc:3*nc]
		for i, ed := range ce {
			src[i] = int32(int64(ed.Src) - srcBase)
			dst[i] = int32(int64(ed.Dst) - dstBase)
			rel[i] = ed.Rel
		}
		e.neg.Draw(wr, si, di, ci[3*nc:3*nc+m], side)
		sel := ci[3*nc+m : 3*nc+2*m]
		for k, s := range side {
			sel[k] = int32(b2i(s))
		}
	}
}

// launchAll uploads and trains the pieces the producer hands over, in
// order, and gives each index slot back once its upload is queued (the
// producer waits for the upload itself before writing the slot again).
func (e *Engine) launchAll(ready <-chan piece, free chan<- int, tb tables, src, dst *store.Buffer) error {
	for p := range ready {
		t := tb
		if p.hs != nil {
			var err error
			if t, err = e.stageRows(p.hs, src, dst); err != nil {
				return err
			}
		}
		n := 4 * int64(p.chunks*e.L)
		j := p.slot
		for _, f := range []func() error{
			func() error { return e.g.wait(uploadStream, evConsumed+j) }, // the slot's last kernels are done
			func() error { return e.g.htod(e.idx[j].p, e.idxHost[j].p, n, uploadStream) },
			func() error { return e.g.record(evUploaded+j, uploadStream) },
			func() error { return e.g.wait(computeStream, evUploaded+j) },
		} {
			if err := f(); err != nil {
				return fmt.Errorf("index upload: %w", err)
			}
		}
		e.count(n, 0)
		free <- j
		if err := e.trainPiece(p, t); err != nil {
			return err
		}
		if err := e.g.record(evConsumed+j, computeStream); err != nil {
			return err
		}
		if p.hs != nil {
			if err := e.unstageRows(p.hs, src, dst); err != nil {
				return err
			}
		}
	}
	return nil
}

// trainPiece launches piece p's training: with the chunk step a group and
// a step per chunk; with the batch step one group of all its chunks (the
// last one padded), the batch's first piece starting the step and its
// final one taking it.
func (e *Engine) trainPiece(p piece, t tables) error {
	idx := e.idx[p.slot]
	m := e.h.Negatives
	if e.h.Micro.On() {
		if err := e.group(idx.p, p.chunks, p.last, t, p.first); err != nil {
			return err
		}
		if !p.final {
			return nil
		}
		return e.step(t, p.batch, (p.batch+e.chunk-1)/e.chunk*m)
	}
	for c := 0; c < p.chunks; c++ {
		n := e.chunk
		if c == p.chunks-1 {
			n = p.last
		}
		if err := e.group(idx.at(int64(c*e.L)), 1, n, t, true); err != nil {
			return err
		}
		if err := e.step(t, n, m); err != nil {
			return err
		}
	}
	return nil
}

// group launches the training of g chunks whose indices start at idx (the
// last chunk has nlast edges, the others a full chunk): queries, positive
// scores and negatives (chunk_prep), the negative scores T = Q·Nᵀ, the
// softmax (chunk_softmax), the gradients G·N and Gᵀ·Q, and chunk_back,
// which hands every gradient to its table's accumulator (or occurrence
// list). reset starts a new step: the touched-row counts are cleared.
func (e *Engine) group(idx ptr, g, nlast int, t tables, reset bool) error {
	s := computeStream
	d, m, nc := e.d, e.h.Negatives, e.chunk
	rows := 2 * nc
	items := int64(g) * int64(nc+m)
	code := modelCode(e.h.Model)
	if err := e.launch1D(s, "chunk_prep", 32*items, code, g, nc, nlast, m, d, e.L, idx, t.embA, t.embB, e.rel.p,
		e.Q.p, e.N.p, e.pos.p, e.counts.p, b2i(reset)); err != nil {
		return err
	}
	qs, ns, ts := int64(rows*d), int64(m*d), int64(rows*m)
	if m > 0 {
		if err := e.gemm(g, false, true, rows, m, d, 1, e.Q.p, d, qs, e.N.p, d, ns, 0, e.T.p, m, ts); err != nil {
			return err
		}
	}
	if err := e.launch1D(s, "chunk_softmax", 32*int64(g*rows), g, nc, nlast, m, e.pos.p, e.T.p, e.gp.p, e.loss.p); err != nil {
		return err
	}
	if m > 0 {
		// gQ = G·N (2nc×d), gN = Gᵀ·Q (m×d), per chunk.
		if err := e.gemm(g, false, false, rows, d, m, 1, e.T.p, m, ts, e.N.p, d, ns, 0, e.gQ.p, d, qs); err != nil {
			return err
		}
		if err := e.gemm(g, true, false, m, d, rows, 1, e.T.p, m, ts, e.Q.p, d, qs, 0, e.gN.p, d, ns); err != nil {
			return err
		}
	} else if err := e.g.memset32(e.gQ.p, 0, int64(g)*qs, s); err != nil {
		return err
	}
	return e.launch1D(s, "chunk_back", 32*items, code, e.rule, g, nc, nlast, m, d, e.L, idx, t.embA, t.embB, e.rel.p,
		e.gQ.p, e.gN.p, e.gp.p, e.gR.p, e.accs.p, e.counts.p, b2i(t.same))
}

// step applies Adagrad to every row the groups since the last reset
// touched, in the source and destination tables (once when they are one)
// and, for models with relations, the relation table: one step per row
// with its summed gradient (adagrad_sum), or with rule each one per
// occurrence (adagrad_each). edges and negs bound the rows touched.
func (e *Engine) step(t tables, edges, negs int) error {
	if edges <= 0 {
		return nil
	}
	rowsA := int64(edges + negs)
	if t.same {
		rowsA += int64(edges)
	}
	maxRows := max(min(rowsA, t.rowsA), min(int64(edges+negs), t.rowsB))
	ny := 2
	if e.h.Model.UsesRelations() {
		ny = 3
		maxRows = max(maxRows, min(int64(edges), e.nrel))
	}
	lr, eps := e.h.LR, float32(workload.AdagradEps)
	if e.rule == ruleEach {
		return e.launch(computeStream, "adagrad_each", int(maxRows), ny, 1, 32, 1, t.embA, t.stateA, t.embB, t.stateB,
			e.rel.p, e.relState.p, e.accs.p, e.counts.p, int(maxRows), e.d, e.chunk, lr, eps, e.gQ.p, e.gN.p, e.gR.p)
	}
	blocks := int((maxRows*int64(e.d) + blockSize - 1) / blockSize)
	return e.launch(computeStream, "adagrad_sum", blocks, ny, 1, blockSize, 1, t.embA, t.stateA, t.embB, t.stateB,
		e.rel.p, e.relState.p, e.accs.p, e.counts.p, int(maxRows), e.d, lr, eps)
}

// slotTables are the tables of partitions si and di in their GPU slots
// (--buffer gpu), where the Install hook put them.
func (e *Engine) slotTables(si, di int) (tables, error) {
	e.mu.Lock()
	ss, okS := e.where[si]
	ds, okD := e.where[di]
	e.mu.Unlock()
	if !okS || !okD {
		return tables{}, fmt.Errorf("bucket (%d,%d): partition not on the GPU (install hook not called?)", si, di)
	}
	rd := e.rows * int64(e.d)
	return tables{embA: e.slotMem[ss].p, stateA: e.slotMem[ss].at(rd), embB: e.slotMem[ds].p, stateB: e.slotMem[ds].at(rd),
		rowsA: e.rows, rowsB: e.rows, same: si == di}, nil
}

// bucketLoss ends a bucket on the compute stream: its summed loss copied
// back, and the kernel time between the bucket's two events added to the
// engine's. Its wait for the compute stream is the one the Plan requires:
// after the bucket, its partitions may be evicted.
func (e *Engine) bucketLoss() (float64, error) {
	if err := e.g.record(evBucketEnd, computeStream); err != nil {
		return 0, err
	}
	var parts [lossParts]float64
	if err := e.g.dtoh(unsafe.Pointer(&parts[0]), e.loss.p, 8*lossParts, computeStream); err != nil {
		return 0, err
	}
	if err := e.g.sync(computeStream); err != nil {
		return 0, err
	}
	secs, err := e.g.elapsed(evBucketStart, evBucketEnd)
	if err != nil {
		return 0, err
	}
	var loss float64
	for _, v := range parts {
		loss += v
	}
	e.mu.Lock()
	e.kernelSeconds += secs
	e.d2h += 8 * lossParts
	e.mu.Unlock()
	return loss, nil
}

func (e *Engine) count(h2d, d2h int64) {
	e.mu.Lock()
	e.h2d += h2d
	e.d2h += d2h
	e.mu.Unlock()
}

// gemm is the engine's batched product on the compute stream, row-major
// as the kernels lay out their matrices: for z < batch,
// C_z = alpha·op(A_z)·op(B_z) + beta·C_z with op(A) M×K and op(B) K×N, ta
// and tb saying A and B are stored transposed (K×M, N×K). cuBLAS is
// column-major, and a row-major X with leading dimension ld is the
// column-major Xᵀ with the same ld, so the product goes to cuBLAS as
// Cᵀ = op(B)ᵀ·op(A)ᵀ: operands swapped, M and N swapped. Without cuBLAS
// it is the sgemm_batched kernel, 16×16 tiles.
func (e *Engine) gemm(batch int, ta, tb bool, M, N, K int, alpha float32, A ptr, lda int, sA int64,
	B ptr, ldb int, sB int64, beta float32, C ptr, ldc int, sC int64) error {
	if e.blas != nil {
		if err := e.blas.sgemm(tb, ta, N, M, K, alpha, B, ldb, sB, A, lda, sA, beta, C, ldc, sC, batch); err != nil {
			return fmt.Errorf("gemm %dx%dx%d (batch %d): %w", M, N, K, batch, err)
		}
		return nil
	}
	return e.launch(computeStream, "sgemm_batched", (N+15)/16, (M+15)/16, batch, 16, 16,
		b2i(ta), b2i(tb), M, N, K, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC)
}

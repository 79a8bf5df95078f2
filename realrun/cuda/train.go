package cuda

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
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

// pieceInts is an index piece's header in int32s (PIECE_INTS of
// kernels/train.cu: the Piece of tables its chunks train).
const pieceInts = 10

// The kernels' numbers of the operators and comparators (OP_* and CMP_*
// of kernels/train.cu).
var (
	opCodes = map[workload.Operator]int{workload.OpNone: 0, workload.OpDiagonal: 1, workload.OpComplexDiagonal: 2,
		workload.OpTranslation: 3, workload.OpLinear: 4, workload.OpAffine: 5, workload.OpRotate: 6}
	cmpCodes = map[workload.Comparator]int{workload.CmpDot: 0, workload.CmpCos: 1, workload.CmpL2: 2,
		workload.CmpSquaredL2: 3, workload.CmpL1: 4, workload.CmpModulusL1: 5}
	lossCodes = map[workload.Loss]int{workload.Softmax: 0, workload.Ranking: 1, workload.Logistic: 2}
	regCodes  = map[workload.Regularizer]int{workload.RegNone: 0, workload.RegL2: 1, workload.RegN3: 2}
)

// modelCode is a score function as the kernels number them: its operator
// (bits 0–2), comparator (bits 3–5) and whether it is a PBG pair (bit 6).
// Dot, DistMult and ComplEx are 0, 1 and 2.
func modelCode(m workload.Model) int {
	return opCodes[m.Operator()] | cmpCodes[m.Comparator()]<<3 | b2i(!m.Named())<<6
}

// pairwise reports whether the model's comparator scores pairwise
// (pair_scores and pair_grads instead of the products).
func pairwise(m workload.Model) bool {
	c := m.Comparator()
	return c == workload.CmpL1 || c == workload.CmpModulusL1
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
	for i := range workload.BatchCount(int64(n), b) {
		blo, bn := i*b, workload.BatchSize(int64(n), b, i)
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
// chunk's negatives drawn exactly as the CPU engine draws them, and each
// chunk is trained as the CPU engine trains it: by default a step after
// every chunk (the chunk step), each row that occurs more than once in the
// chunk updated by Hyper.Rule (DuplicatesEach: a step per occurrence in
// the CPU engine's order; DuplicatesSum: one with the summed gradient).
// With micro-batching on (Hyper.Micro: --micro-batches,
// --micro-batch-memory) a batch's chunks are trained together and each
// touched row gets one Adagrad step with its gradients summed over the
// batch: the batch step of Marius and GE2, faster on a GPU and slower to
// learn per epoch (the batch's memory is the engine's already, so it is
// never split).
//
// A shuffler goroutine deals the bucket's edges piece by piece, a producer
// samples each piece's chunks (on several goroutines: every chunk has its
// own stream, sample.SeedChunk) into a ring of pinned index slots, and
// this goroutine uploads and launches the pieces before them, so that the
// host's work overlaps the GPU's; the compute stream drains once, at the
// bucket's end (its partitions may then be evicted). The chunk step's
// launches are recorded once per (index slot, chunk) as a CUDA graph and
// replayed.
func (e *Engine) TrainBucket(edges []store.Edge, si int, src *store.Buffer, di int, dst *store.Buffer, rng *rand.Rand) (float64, error) {
	seed := rng.Uint64()                   // every chunk's negatives (sample.SeedChunk), as the CPU engine
	shuf := sample.NewShuffler(edges, rng) // the shuffler deals the edges
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
	if err := e.run(shuf, len(edges), seed, si, src, di, dst, tb); err != nil {
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

// run trains the bucket's pieces: a shuffler goroutine deals their edges,
// a producer goroutine samples them into the ring's pinned slots (waiting
// for a slot's last upload before it writes it again), and this one
// uploads each on the upload stream and launches its kernels on the
// compute stream once the upload is done.
func (e *Engine) run(shuf *sample.Shuffler, n int, seed uint64, si int, src *store.Buffer, di int, dst *store.Buffer, tb tables) error {
	ps := e.pieces(n)
	free := make(chan int, ringSlots)
	for j := range ringSlots {
		free <- j
	}
	dealt := make(chan []store.Edge, 2)
	ready := make(chan piece, ringSlots)
	quit := make(chan struct{})
	var perr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(dealt)
		for _, p := range ps {
			select {
			case dealt <- shuf.Next(p.edges):
			case <-quit:
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		defer close(ready)
		unbind, err := e.bind()
		if err != nil {
			perr = err
			return
		}
		defer unbind()
		for _, p := range ps {
			var edges []store.Edge
			select {
			case p.slot = <-free:
			case <-quit:
				return
			}
			select {
			case edges = <-dealt:
			case <-quit:
				return
			}
			if err := e.g.syncEvent(evUploaded + p.slot); err != nil {
				perr = fmt.Errorf("index slot %d: %w", p.slot, err)
				return
			}
			e.fill(p, edges, seed, si, di)
			t := tb
			if e.host != nil {
				p.hs = e.host.dedupe(p, e.idxHost[p.slot].int32s()[pieceInts:], e.chunk, e.h.Negatives, e.L, si == di)
				t = e.hostTables(p.hs)
			}
			t.header(e.idxHost[p.slot].int32s())
			select {
			case ready <- p:
			case <-quit:
				return
			}
		}
	}()
	err := e.launchAll(ready, free, src, dst)
	close(quit)
	wg.Wait()
	if err == nil {
		err = perr
	}
	return err
}

// header writes t as an index piece's header (Piece in kernels/train.cu:
// four pointers, then same).
func (t tables) header(buf []int32) {
	w := unsafe.Slice((*uint64)(unsafe.Pointer(&buf[0])), pieceInts/2)
	w[0], w[1], w[2], w[3] = uint64(t.embA), uint64(t.stateA), uint64(t.embB), uint64(t.stateB)
	w[4] = uint64(b2i(t.same))
}

// filler is one goroutine's share of the producer's sampling.
type filler struct {
	src  *rand.PCG
	rng  *rand.Rand
	side []bool
}

// fill writes piece p's chunks into its pinned slot, each chunk on one of
// the fillers (in parallel when the piece has several): its edge count,
// the local rows of its edges' sources and destinations and their
// relations, then its negatives, drawn from the chunk's own stream
// exactly as the CPU engine draws them.
func (e *Engine) fill(p piece, edges []store.Edge, seed uint64, si, di int) {
	buf := e.idxHost[p.slot].int32s()[pieceInts:]
	nc, m, L := e.chunk, e.h.Negatives, e.L
	srcBase, dstBase := int64(si)*e.rows, int64(di)*e.rows
	chunk := func(f *filler, c int) {
		ce := edges[c*nc : min((c+1)*nc, len(edges))]
		ci := buf[c*L : (c+1)*L]
		ci[0] = int32(len(ce))
		src, dst, rel := ci[1:1+nc], ci[1+nc:1+2*nc], ci[1+2*nc:1+3*nc]
		for i, ed := range ce {
			src[i] = int32(int64(ed.Src) - srcBase)
			dst[i] = int32(int64(ed.Dst) - dstBase)
			rel[i] = ed.Rel
		}
		sample.SeedChunk(f.src, seed, p.lo+c*nc)
		e.neg.Draw(f.rng, si, di, ci[1+3*nc:1+3*nc+m], f.side)
		sel := ci[1+3*nc+m : 1+3*nc+2*m]
		for k, s := range f.side {
			sel[k] = int32(b2i(s))
		}
	}
	w := min(len(e.fillers), p.chunks)
	if w <= 1 {
		for c := 0; c < p.chunks; c++ {
			chunk(e.fillers[0], c)
		}
		return
	}
	var wg sync.WaitGroup
	for k := 0; k < w; k++ {
		wg.Add(1)
		go func(f *filler, k int) {
			defer wg.Done()
			for c := k; c < p.chunks; c += w {
				chunk(f, c)
			}
		}(e.fillers[k], k)
	}
	wg.Wait()
}

// launchAll uploads and trains the pieces the producer hands over, in
// order, and gives each index slot back once its upload is queued (the
// producer waits for the upload itself before writing the slot again).
func (e *Engine) launchAll(ready <-chan piece, free chan<- int, src, dst *store.Buffer) error {
	for p := range ready {
		if p.hs != nil {
			if err := e.stageRows(p.hs, src, dst); err != nil {
				return err
			}
		}
		n := 4 * int64(pieceInts+p.chunks*e.L)
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
		if err := e.trainPiece(p); err != nil {
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
// a step per chunk (replayed as a graph); with the batch step one group of
// all its chunks, the batch's first piece starting the step and its final
// one taking it.
func (e *Engine) trainPiece(p piece) error {
	idx := e.idx[p.slot].p
	if e.h.Micro.On() {
		if err := e.group(idx, 0, p.chunks, p.first); err != nil {
			return err
		}
		if !p.final {
			return nil
		}
		chunks := (p.batch + e.chunk - 1) / e.chunk
		return e.step(idx, min(2*int64(p.batch)+int64(chunks*e.h.Negatives), e.capacity()))
	}
	for c := 0; c < p.chunks; c++ {
		if err := e.chunkStep(p.slot, c); err != nil {
			return err
		}
	}
	return nil
}

// capacity is the rows of a table the engine trains: a partition's, or
// with --buffer host a compact table's.
func (e *Engine) capacity() int64 {
	if e.mode == realrun.BufferHost {
		return e.capRows
	}
	return e.rows
}

// chunkStep trains chunk c of the piece in index slot slot and steps: the
// graph recorded for (slot, c) the first time, replayed after (its
// parameters — the slot, the work buffers, the tables in the piece's
// header, the counts in its blocks — are the same for every bucket), or
// the launches themselves where graphs are off.
func (e *Engine) chunkStep(slot, c int) error {
	piece := e.idx[slot].p
	bound := min(int64(2*e.chunk+e.h.Negatives), e.capacity())
	direct := func() error {
		if err := e.group(piece, c, 1, true); err != nil {
			return err
		}
		return e.step(piece, bound)
	}
	if e.graphOff != "" {
		return direct()
	}
	key := [2]int{slot, c}
	if gr, ok := e.graphs[key]; ok {
		return e.g.launchGraph(gr)
	}
	if err := e.g.capture(); err != nil {
		e.noGraphs(err)
		return direct()
	}
	rerr := direct() // recorded, not run
	gr, err := e.g.endCapture()
	if rerr != nil || err != nil {
		if err == nil {
			e.g.freeGraph(gr)
		}
		e.noGraphs(errors.Join(rerr, err))
		return direct()
	}
	e.graphs[key] = gr
	return e.g.launchGraph(gr)
}

// noGraphs turns graph replay off for the engine's life, saying why in
// its GEMM note.
func (e *Engine) noGraphs(err error) {
	e.graphOff = err.Error()
	e.gemmNote = strings.Replace(e.gemmNote, graphsOn, "", 1) + "; chunk step launched directly (CUDA graphs failed: " + e.graphOff + ")"
	e.info.GEMM = e.gemmNote
}

// graphsOn ends the GEMM note of an engine that replays the chunk step.
const graphsOn = "; chunk step replayed as CUDA graphs"

// group launches the training of g chunks of the piece at piece, from its
// chunk c0: queries, positive scores and negatives (chunk_prep), the
// negative scores T = Q·Nᵀ, the softmax (chunk_softmax), the gradients G·N
// and Gᵀ·Q, and chunk_back, which hands every gradient to its table's
// accumulator (or occurrence list). Every chunk takes a full chunk's
// products (its padding edges have zero rows). reset starts a new step:
// the touched-row counts are cleared.
func (e *Engine) group(piece ptr, c0, g int, reset bool) error {
	s := computeStream
	d, m, nc := e.d, e.h.Negatives, e.chunk
	rows := 2 * nc
	items := int64(g) * int64(nc+m)
	code, cmp := modelCode(e.h.Model), cmpCodes[e.h.Model.Comparator()]
	o := e.h.Objective
	if err := e.launch1D(s, "chunk_prep", 32*items, code, g, nc, m, d, e.L, piece, c0, e.rel.p,
		e.Q.p, e.N.p, e.pos.p, e.qn.p, e.nn.p, e.bn.p, e.counts.p, b2i(reset)); err != nil {
		return err
	}
	qs, ns, ts := int64(rows*d), int64(m*d), int64(rows*m)
	pw := pairwise(e.h.Model)
	if m > 0 {
		var err error
		if pw {
			err = e.launch(s, "pair_scores", (m+15)/16, (rows+15)/16, g, 16, 16, cmp, rows, m, d, e.Q.p, e.N.p, e.T.p)
		} else {
			err = e.gemm(g, false, true, rows, m, d, 1, e.Q.p, d, qs, e.N.p, d, ns, 0, e.T.p, m, ts)
		}
		if err != nil {
			return err
		}
	}
	if err := e.launch1D(s, "chunk_softmax", 32*int64(g*rows), g, nc, m, e.L, piece, c0, e.pos.p, e.T.p, e.gp.p, e.loss.p,
		lossCodes[o.LossKind()], cmp, float32(o.Margin), float32(o.Adversarial), e.qn.p, e.nn.p, e.aq.p, e.bn.p); err != nil {
		return err
	}
	if m > 0 && pw {
		K := int64(d)
		if e.h.Model.Comparator() == workload.CmpModulusL1 {
			K = int64(d / 2)
		}
		if err := e.launch1D(s, "pair_grads", int64(g)*int64(rows+m)*K, cmp, g, rows, m, d, e.Q.p, e.N.p, e.T.p, e.gQ.p, e.gN.p); err != nil {
			return err
		}
	} else if m > 0 {
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
	return e.launch1D(s, "chunk_back", 32*items, code, e.rule, g, nc, m, d, e.L, piece, c0, e.rel.p,
		e.gQ.p, e.gN.p, e.gp.p, e.gR.p, e.accs.p, e.counts.p, e.Q.p, e.N.p, e.aq.p, e.bn.p,
		regCodes[o.Reg()], float32(o.RegCoef), e.loss.p)
}

// step applies Adagrad to every row the groups since the last reset
// touched, in the piece's source and destination tables (once when they
// are one) and, for models with relations, the relation table: one step
// per row with its summed gradient (adagrad_sum), or with rule each one
// per occurrence (adagrad_each, then each_clear empties the rows' lists).
// maxRows bounds the rows one table lists.
func (e *Engine) step(piece ptr, maxRows int64) error {
	ny := 2
	if e.h.Model.UsesRelations() {
		ny = 3
	}
	lr, eps := e.h.LR, float32(workload.AdagradEps)
	if e.rule == ruleEach {
		// A block per span of a listed row's elements: the widest
		// table's rows × spans. A span is eachSpan elements, or fewer
		// (a whole number of warps) when no row is that wide.
		widest := int64(e.d)
		if ny == 3 {
			widest = max(widest, e.relW)
		}
		span := min(eachSpan, (widest+31)/32*32)
		spans := func(w int64) int64 { return (w + span - 1) / span }
		blocks := max(maxRows*spans(int64(e.d)), min(maxRows, e.nrel)*spans(e.relW))
		if err := e.launch(computeStream, "adagrad_each", int(blocks), ny, 1, int(span), 1, piece, e.rel.p, e.relState.p,
			e.accs.p, e.counts.p, int(maxRows), e.d, e.chunk, lr, eps, e.gQ.p, e.gN.p, e.gR.p, int(e.relW)); err != nil {
			return err
		}
		return e.launch(computeStream, "each_clear", int((maxRows+blockSize-1)/blockSize), ny, 1, blockSize, 1,
			e.accs.p, e.counts.p, int(maxRows))
	}
	elems := max(maxRows*int64(e.d), min(maxRows, e.nrel)*e.relW) // the widest table's listed elements
	blocks := int((elems + blockSize - 1) / blockSize)
	return e.launch(computeStream, "adagrad_sum", blocks, ny, 1, blockSize, 1, piece, e.rel.p, e.relState.p,
		e.accs.p, e.counts.p, int(maxRows), e.d, lr, eps, int(e.relW))
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

package cuda

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
	"unsafe"

	"github.com/tierflow/tierflow/report"

	"github.com/tierflow/tierflow/workload"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/telemetry"
)

// table is an embedding table with its Adagrad state and the gradient
// accumulator, touched-row flags and list that scatter_add fills.
type table struct {
	emb, state   ptr
	acc          ptr
	flag, list   ptr
	count        ptr
	rows, maxHit int64 // rows in the table; most rows one batch can touch
	hits         int   // rows an edge touches here: 2 when source and destination share the table
}

// accum is the accumulator side of a table, sized for rows rows.
type accum struct {
	acc, flag, list, count dev
	rows                   int64
}

func (e *Engine) newAccum(rows int64) (accum, error) {
	var a accum
	var err error
	a.rows = rows
	for _, x := range []struct {
		p *dev
		n int64
	}{{&a.acc, 4 * rows * int64(e.d)}, {&a.flag, 4 * rows}, {&a.list, 4 * rows}, {&a.count, 4}} {
		if *x.p, err = e.alloc(x.n); err != nil {
			return a, err
		}
		if err = e.g.memset32(x.p.p, 0, x.n/4, computeStream); err != nil {
			return a, err
		}
	}
	return a, e.g.sync(computeStream)
}

func (a accum) table(emb, state ptr, maxHit int64) table {
	return table{emb: emb, state: state, acc: a.acc.p, flag: a.flag.p, list: a.list.p, count: a.count.p, rows: a.rows, maxHit: min(maxHit, a.rows), hits: 1}
}

// capHits is t with the rows that edges edges and negs negatives can touch
// between two steps (the size of adagrad_rows's launch): one row per edge
// and per negative, twice the edges when the bucket's two partitions are
// one table (hits says so).
func (t table) capHits(edges, negs int) table {
	t.maxHit = min(t.maxHit, int64(t.hits*edges+negs))
	return t
}

// Engine trains buckets on one GPU (or on the emulator of tests). It
// implements realrun.Engine, realrun.Stateful, realrun.SlotResident
// (--buffer gpu) and realrun.EpochHooks.
type Engine struct {
	h      realrun.Hyper
	mode   string
	d      int
	rows   int64 // rows per partition
	nrel   int64
	pbytes int64
	neg    *sample.NegativeSampler
	g      gpu
	allocs []dev // everything alloc returned, freed by Close

	rel, relState dev
	relAcc        accum

	// --buffer gpu: the c partition slots and where each partition is.
	slotMem []dev
	mu      sync.Mutex
	where   map[int]int
	regd    map[unsafe.Pointer][]byte // host buffers registered as pinned

	// Accumulators of the source and destination tables (host mode: of
	// the compact per-batch tables, whose rows live in compact).
	accA, accB accum
	compact    [2]dev // host mode: [emb | state] of the rows a batch touches
	capRows    int64  // rows per compact table

	// Per-batch work buffers.
	S, R, D, N, gS, gR, gD, gN, Q, gQ, T, pos, gp dev
	loss                                          dev // one float64
	// idx and idxHost are two index buffers (srcRow | dstRow | rel |
	// negRow | negSel), on the GPU and pinned on the host: batch k
	// samples into buffer k%2 while the GPU trains batch k−1.
	idx     [2]dev
	idxHost [2]pinned
	stage   pinned

	// blas does the products (cuBLAS when found); nil: the engine's own
	// sgemm_batched kernel. gemmNote says which, and why.
	blas     blas
	gemmNote string

	chunk, maxChunks int

	// Measurement.
	h2d, d2h      int64
	slotIn        int64 // partition bytes installed into GPU slots
	slotOut       int64 // partition bytes evicted from GPU slots
	kernelSeconds float64
	// The epoch's clock (StartEpoch), the host-clock spans of its
	// whole-partition copies and of its buckets' training, and the
	// event-timed seconds of --buffer host's per-batch row copies.
	t0                    time.Time
	copySpans, trainSpans []report.Interval
	stageSeconds          float64
	nvml                  telemetry.Source // nil: no telemetry
	sampler               *telemetry.Sampler
	info                  telemetry.Info
}

// dev is device memory of n bytes.
type dev struct {
	p ptr
	n int64
}

// at is the address of the float32 or int32 element i.
func (d dev) at(i int64) ptr { return d.p + ptr(4*i) }

// pinned is page-locked host memory.
type pinned struct {
	p unsafe.Pointer
	n int64
}

func (h pinned) int32s() []int32   { return unsafe.Slice((*int32)(h.p), h.n/4) }
func (h pinned) floats() []float32 { return unsafe.Slice((*float32)(h.p), h.n/4) }

func (e *Engine) alloc(n int64) (dev, error) {
	n = max(n, 4)
	p, err := e.g.alloc(n)
	if err != nil {
		return dev{}, fmt.Errorf("GPU memory, %d bytes: %w", n, err)
	}
	d := dev{p: p, n: n}
	e.allocs = append(e.allocs, d)
	return d, nil
}

func (e *Engine) allocPinned(n int64) (pinned, error) {
	p, err := e.g.hostAlloc(n)
	if err != nil {
		return pinned{}, fmt.Errorf("pinned host memory, %d bytes: %w", n, err)
	}
	return pinned{p: p, n: n}, nil
}

// newEngine allocates the engine for the store's shape on g.
func newEngine(o realrun.EngineOptions, g gpu) (*Engine, error) {
	h, st := o.Hyper, o.Store
	if err := h.Model.CheckDim(h.Dim); err != nil {
		return nil, err
	}
	e := &Engine{h: h, mode: o.Buffer, d: h.Dim, rows: st.M.Rows, pbytes: st.M.PartitionBytes, g: g,
		where: map[int]int{}, regd: map[unsafe.Pointer][]byte{}}
	if e.mode == "" {
		e.mode = realrun.BufferGPU
	}
	e.neg = sample.NewNegativeSampler(st, o.Degrees, h.DegreeFrac)
	e.chunk = h.Chunk()
	e.maxChunks = (h.Batch + e.chunk - 1) / e.chunk
	done, err := e.bind()
	if err != nil {
		g.close()
		return nil, err
	}
	err = e.allocAll(st, o)
	if err == nil {
		e.openBLAS(h.TF32)
	}
	done()
	if err != nil {
		e.Close()
		return nil, err
	}
	e.info = g.info()
	e.info.GEMM = e.gemmNote
	if g.real() {
		if src, err := telemetry.OpenNVML(o.Device); err == nil {
			e.useNVML(src)
		}
	}
	return e, nil
}

// useNVML samples the GPU through src and takes its Info (keeping the
// engine's GEMM note: NVML knows the GPU, not what does the products).
func (e *Engine) useNVML(src telemetry.Source) {
	e.nvml = src
	if in, err := src.Info(); err == nil {
		in.GEMM = e.gemmNote
		e.info = in
	}
}

func (e *Engine) allocAll(st *store.Store, o realrun.EngineOptions) error {
	var err error
	d := int64(e.d)
	b := int64(e.h.Batch)
	m := int64(e.h.Negatives)
	negs := int64(e.maxChunks) * m
	e.nrel = int64(st.M.Relations)
	if e.h.Model.UsesRelations() {
		if e.rel, err = e.alloc(4 * e.nrel * d); err != nil {
			return err
		}
		if e.relState, err = e.alloc(4 * e.nrel * d); err != nil {
			return err
		}
		// Relations start as every engine starts them (same seed, same rule).
		emb, state := sample.InitRelations(e.h.Model, st.M.Relations, e.h.Dim, o.Seed)
		if err := e.restore(append(emb, state...)); err != nil {
			return err
		}
		if e.relAcc, err = e.newAccum(e.nrel); err != nil {
			return err
		}
	}
	rows := e.rows
	if e.mode == realrun.BufferHost {
		e.capRows = b + negs
		rows = e.capRows
		for i := range e.compact {
			if e.compact[i], err = e.alloc(2 * 4 * rows * d); err != nil {
				return err
			}
		}
		if e.stage, err = e.allocPinned(2 * 2 * 4 * rows * d); err != nil {
			return err
		}
	} else {
		for i := 0; i < o.C; i++ {
			s, err := e.alloc(e.pbytes)
			if err != nil {
				return fmt.Errorf("partition slot %d of %d: %w", i+1, o.C, err)
			}
			e.slotMem = append(e.slotMem, s)
		}
	}
	if e.accA, err = e.newAccum(rows); err != nil {
		return err
	}
	if e.accB, err = e.newAccum(rows); err != nil {
		return err
	}
	for _, x := range []struct {
		p *dev
		n int64
	}{{&e.S, b * d}, {&e.R, b * d}, {&e.D, b * d}, {&e.gS, b * d}, {&e.gR, b * d}, {&e.gD, b * d},
		{&e.Q, b * d}, {&e.gQ, b * d}, {&e.N, negs * d}, {&e.gN, negs * d}, {&e.T, b * m},
		{&e.pos, b}, {&e.gp, b}, {&e.loss, 2}, {&e.idx[0], 3*b + 2*negs}, {&e.idx[1], 3*b + 2*negs}} {
		if *x.p, err = e.alloc(4 * x.n); err != nil {
			return err
		}
	}
	for j := range e.idxHost {
		if e.idxHost[j], err = e.allocPinned(4 * (3*b + 2*negs)); err != nil {
			return err
		}
	}
	return nil
}

// openBLAS takes cuBLAS for the products when the GPU has it, else keeps
// the engine's own kernel; gemmNote says which was chosen and why.
func (e *Engine) openBLAS(tf32 bool) {
	b, err := e.g.openBLAS(tf32)
	if err != nil {
		e.gemmNote = "built-in sgemm_batched kernel (" + err.Error() + ")"
		if tf32 {
			e.gemmNote += "; --tf32 has no effect without cuBLAS"
		}
		return
	}
	e.blas, e.gemmNote = b, b.describe()
}

// GEMM says what does the engine's matrix products: cuBLAS (its version,
// file and math mode) or the built-in kernel and why.
func (e *Engine) GEMM() string { return e.gemmNote }

// Close frees the GPU memory and releases the GPU.
func (e *Engine) Close() error {
	if e.g == nil {
		return nil
	}
	if done, err := e.bind(); err == nil {
		for _, d := range e.allocs {
			e.g.free(d.p)
		}
		if e.blas != nil {
			e.blas.close()
			e.blas = nil
		}
		for _, h := range []*pinned{&e.stage, &e.idxHost[0], &e.idxHost[1]} {
			if h.p != nil {
				e.g.hostFree(h.p)
			}
		}
		e.unregisterAll()
		done()
	}
	e.allocs = nil
	if e.nvml != nil {
		e.nvml.Close()
	}
	e.g.close()
	e.g = nil
	return nil
}

// bind makes the engine's context current on this goroutine's thread; call
// the returned function when done.
func (e *Engine) bind() (func(), error) { return e.g.bind() }

// Name identifies the engine in reports.
func (e *Engine) Name() string { return "cuda-" + e.mode }

// Relations implements realrun.Engine: the relation embeddings, copied
// from the GPU.
func (e *Engine) Relations() []float32 {
	st := e.State()
	if st == nil {
		return nil
	}
	return st[:len(st)/2]
}

// State implements realrun.Stateful: relation embeddings and Adagrad state.
func (e *Engine) State() []float32 {
	if !e.h.Model.UsesRelations() {
		return nil
	}
	done, err := e.bind()
	if err != nil {
		return nil
	}
	defer done()
	n := e.nrel * int64(e.d)
	out := make([]float32, 2*n)
	if e.g.dtoh(unsafe.Pointer(&out[0]), e.rel.p, 4*n, computeStream) != nil ||
		e.g.dtoh(unsafe.Pointer(&out[n]), e.relState.p, 4*n, computeStream) != nil ||
		e.g.sync(computeStream) != nil {
		return nil
	}
	return out
}

// Restore implements realrun.Stateful.
func (e *Engine) Restore(state []float32) error {
	done, err := e.bind()
	if err != nil {
		return err
	}
	defer done()
	return e.restore(state)
}

func (e *Engine) restore(state []float32) error {
	n := e.nrel * int64(e.d)
	if !e.h.Model.UsesRelations() {
		if len(state) != 0 {
			return fmt.Errorf("checkpoint holds %d relation floats, the engine 0", len(state))
		}
		return nil
	}
	if int64(len(state)) != 2*n {
		return fmt.Errorf("checkpoint holds %d relation floats, the engine %d", len(state), 2*n)
	}
	if err := e.g.htod(e.rel.p, unsafe.Pointer(&state[0]), 4*n, computeStream); err != nil {
		return err
	}
	if err := e.g.htod(e.relState.p, unsafe.Pointer(&state[n]), 4*n, computeStream); err != nil {
		return err
	}
	return e.g.sync(computeStream)
}

// pin registers a host partition buffer as page-locked memory once, so
// that its copies run at full PCIe speed (disk → pinned host → GPU).
func (e *Engine) pin(buf *store.Buffer) {
	b := buf.Bytes()
	key := unsafe.Pointer(unsafe.SliceData(b))
	if _, ok := e.regd[key]; ok {
		return
	}
	err := e.g.register(b)
	if err != nil {
		// A buffer freed while registered (a failed epoch) leaves its
		// address registered: drop the old registration and retry.
		e.g.unregister(b)
		err = e.g.register(b)
	}
	if err == nil {
		e.regd[key] = b
	} // else: the copy runs from pageable memory (slower, still correct)
}

func (e *Engine) unregisterAll() {
	for k, b := range e.regd {
		e.g.unregister(b)
		delete(e.regd, k)
	}
}

// Install implements realrun.SlotResident: partition part, just read into
// buf, moves to GPU slot slot.
func (e *Engine) Install(slot, part int, buf *store.Buffer) error {
	return e.slotCopy(slot, part, buf, true)
}

// Evict implements realrun.SlotResident: partition part's trained rows
// and state come back from GPU slot slot into buf for the writer.
func (e *Engine) Evict(slot, part int, buf *store.Buffer) error {
	return e.slotCopy(slot, part, buf, false)
}

// slotCopy moves a whole partition between a host buffer and a GPU slot
// on the copy stream, so that it overlaps training.
func (e *Engine) slotCopy(slot, part int, buf *store.Buffer, install bool) error {
	if e.mode != realrun.BufferGPU {
		return nil
	}
	what := fmt.Sprintf("evict partition %d from GPU slot %d", part, slot)
	if install {
		what = fmt.Sprintf("install partition %d in GPU slot %d", part, slot)
	}
	done, err := e.bind()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer done()
	e.mu.Lock()
	if s, ok := e.where[part]; !install && (!ok || s != slot) {
		e.mu.Unlock()
		return fmt.Errorf("%s: the slot holds another partition", what)
	}
	e.pin(buf)
	e.mu.Unlock()
	b := buf.Bytes()
	n := int64(len(b))
	start := time.Since(e.t0).Seconds()
	if install {
		err = e.g.htod(e.slotMem[slot].p, unsafe.Pointer(&b[0]), n, copyStream)
	} else {
		err = e.g.dtoh(unsafe.Pointer(&b[0]), e.slotMem[slot].p, n, copyStream)
	}
	if err == nil {
		err = e.g.sync(copyStream)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.copySpans = append(e.copySpans, report.Interval{Start: start, End: time.Since(e.t0).Seconds()})
	if !install {
		e.d2h += n
		e.slotOut += n
		return nil
	}
	e.h2d += n
	e.slotIn += n
	for p, s := range e.where {
		if s == slot {
			delete(e.where, p)
		}
	}
	e.where[part] = slot
	return nil
}

// StartEpoch implements realrun.EpochHooks: resets the counters and
// starts sampling the GPU every 100 ms.
func (e *Engine) StartEpoch(epoch int) error {
	e.mu.Lock()
	e.h2d, e.d2h, e.slotIn, e.slotOut, e.kernelSeconds = 0, 0, 0, 0, 0
	e.t0, e.copySpans, e.trainSpans, e.stageSeconds = time.Now(), nil, nil, 0
	e.mu.Unlock()
	if e.sampler != nil { // a failed epoch never finished
		e.sampler.Stop()
	}
	e.sampler = nil
	if e.nvml != nil {
		s, err := telemetry.NewSampler(e.nvml, telemetry.DefaultInterval)
		if err != nil {
			return err
		}
		e.sampler = s
		s.Start()
	}
	return nil
}

// FinishEpoch implements realrun.EpochHooks: the telemetry goes into ep.
func (e *Engine) FinishEpoch(ep *realrun.Epoch) error {
	rep := telemetry.Report{Info: e.info}
	if e.sampler != nil {
		var err error
		if rep, err = e.sampler.Stop(); err != nil {
			ep.Warnings = append(ep.Warnings, "gpu telemetry: "+err.Error())
		}
		rep.Info = e.info // the sampler's is NVML's alone
		e.sampler = nil
	} else {
		ep.Warnings = append(ep.Warnings, "gpu telemetry: NVML unavailable; utilisation and PCIe bytes not sampled")
	}
	e.mu.Lock()
	rep.H2DBytes, rep.D2HBytes, rep.KernelSeconds = e.h2d, e.d2h, e.kernelSeconds
	// Whole-partition copies overlap training (copy stream); --buffer
	// host's row copies sit between a batch's kernels and hide nothing.
	ep.TransferSeconds = report.Busy(e.copySpans) + e.stageSeconds
	ep.HiddenTransferSeconds = report.Overlap(e.copySpans, e.trainSpans)
	// The buffer manager frees its buffers after the epoch: unpin them now
	// (with the context current on this thread, as every driver call).
	if done, err := e.bind(); err == nil {
		e.unregisterAll()
		done()
	}
	e.mu.Unlock()
	realrun.ApplyGPU(ep, rep)
	return nil
}

// Transfers are the bytes an epoch copied between host and GPU.
type Transfers struct {
	H2D, D2H        int64 // everything
	SlotIn, SlotOut int64 // whole partitions into and out of GPU slots (--buffer gpu)
}

// Transfers returns the bytes copied so far this epoch.
func (e *Engine) Transfers() Transfers {
	e.mu.Lock()
	defer e.mu.Unlock()
	return Transfers{H2D: e.h2d, D2H: e.d2h, SlotIn: e.slotIn, SlotOut: e.slotOut}
}

// TrainBucket implements realrun.Compute. Edges are shuffled and every
// chunk's negatives drawn exactly as the CPU engine does with one worker.
// By default each chunk is trained and stepped in turn, as the CPU engine
// does (one Adagrad step per touched row after every chunk; where a row
// occurs twice in a chunk the CPU engine steps it twice, this engine once
// with the sum). With micro-batching on (Hyper.Micro: --micro-batches,
// --micro-batch-memory) the chunks of a batch are trained together and each
// touched row gets one Adagrad step with its gradients summed over the
// batch: the batch step of Marius and GE2, faster on a GPU and slower to
// learn per epoch (the batch's memory is the engine's already, so it is
// never split).
func (e *Engine) TrainBucket(edges []store.Edge, si int, src *store.Buffer, di int, dst *store.Buffer, rng *rand.Rand) (float64, error) {
	rng.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
	wr := rand.New(rand.NewPCG(rng.Uint64(), sample.WorkerStream)) // as a CPU worker's sampler
	done, err := e.bind()
	if err != nil {
		return 0, err
	}
	defer done()
	var tA, tB table
	if e.mode == realrun.BufferGPU {
		if tA, tB, err = e.slotTables(si, di); err != nil {
			return 0, err
		}
	}
	if err := e.g.memset32(e.loss.p, 0, 2, computeStream); err != nil {
		return 0, err
	}
	start := time.Since(e.t0).Seconds()
	if err := e.g.record(evBucketStart, computeStream); err != nil {
		return 0, err
	}
	for k, lo := 0, 0; lo < len(edges); k, lo = k+1, lo+e.h.Batch {
		batch := edges[lo:min(lo+e.h.Batch, len(edges))]
		if err := e.trainBatch(k, batch, si, src, di, dst, wr, tA, tB); err != nil {
			return 0, fmt.Errorf("bucket (%d,%d): %w", si, di, err)
		}
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

// slotTables are the row tables of partitions si and di in their GPU
// slots (--buffer gpu), where the Install hook put them.
func (e *Engine) slotTables(si, di int) (tA, tB table, err error) {
	e.mu.Lock()
	ss, okS := e.where[si]
	ds, okD := e.where[di]
	e.mu.Unlock()
	if !okS || !okD {
		return tA, tB, fmt.Errorf("bucket (%d,%d): partition not on the GPU (install hook not called?)", si, di)
	}
	rd := e.rows * int64(e.d)
	b, negs := int64(e.h.Batch), int64(e.maxChunks*e.h.Negatives)
	tA = e.accA.table(e.slotMem[ss].p, e.slotMem[ss].at(rd), b+negs)
	tB = e.accB.table(e.slotMem[ds].p, e.slotMem[ds].at(rd), b+negs)
	if si == di { // one table: the batch's sources and destinations both land here
		tA = e.accA.table(e.slotMem[ss].p, e.slotMem[ss].at(rd), 2*b+negs)
		tA.hits = 2
		tB = tA
	}
	return tA, tB, nil
}

// bucketLoss ends a bucket on the compute stream: its summed loss copied
// back, and the kernel time between the bucket's two events added to the
// engine's. Its wait for the compute stream is the one the Plan requires:
// after the bucket, its partitions may be evicted.
func (e *Engine) bucketLoss() (float64, error) {
	if err := e.g.record(evBucketEnd, computeStream); err != nil {
		return 0, err
	}
	var loss float64
	if err := e.g.dtoh(unsafe.Pointer(&loss), e.loss.p, 8, computeStream); err != nil {
		return 0, err
	}
	if err := e.g.sync(computeStream); err != nil {
		return 0, err
	}
	secs, err := e.g.elapsed(evBucketStart, evBucketEnd)
	if err != nil {
		return 0, err
	}
	e.mu.Lock()
	e.kernelSeconds += secs
	e.d2h += 8
	e.mu.Unlock()
	return loss, nil
}

// batchIndex lays out one batch's index arrays in index buffer j (pinned
// on the host, then on the GPU at idx): srcRow, dstRow, rel (n each),
// negRow, negSel (chunks·m each).
type batchIndex struct {
	idx                          dev
	n, negs                      int
	srcRow, dstRow, rel, negRow  []int32
	negSel                       []int32
	offSrc, offDst, offRel, offN int64
	offSel                       int64
}

func (e *Engine) indexFor(j int, batch []store.Edge, si, di int, wr *rand.Rand) batchIndex {
	m := e.h.Negatives
	chunks := (len(batch) + e.chunk - 1) / e.chunk
	n, negs := len(batch), chunks*m
	all := e.idxHost[j].int32s()
	bi := batchIndex{idx: e.idx[j], n: n, negs: negs}
	bi.offSrc, bi.offDst, bi.offRel = 0, int64(n), int64(2*n)
	bi.offN, bi.offSel = int64(3*n), int64(3*n+negs)
	bi.srcRow, bi.dstRow, bi.rel = all[:n], all[n:2*n], all[2*n:3*n]
	bi.negRow, bi.negSel = all[3*n:3*n+negs], all[3*n+negs:3*n+2*negs]
	srcBase, dstBase := int64(si)*e.rows, int64(di)*e.rows
	for i, ed := range batch {
		bi.srcRow[i] = int32(int64(ed.Src) - srcBase)
		bi.dstRow[i] = int32(int64(ed.Dst) - dstBase)
		bi.rel[i] = ed.Rel
	}
	side := make([]bool, m)
	for c := 0; c < chunks; c++ {
		rows := bi.negRow[c*m : (c+1)*m]
		e.neg.Draw(wr, si, di, rows, side)
		for k, s := range side {
			bi.negSel[c*m+k] = 0
			if s {
				bi.negSel[c*m+k] = 1
			}
		}
	}
	return bi
}

// trainBatch trains batch k of a bucket. With --buffer gpu nothing waits
// for the GPU: the host samples batch k into index buffer k%2 once the
// kernels of batch k−2, which read it, are done (an event), uploads it on
// the upload stream and makes the compute stream wait for that upload (an
// event), so sampling and uploads overlap the kernels of batch k−1. With
// --buffer host the batch's rows come from and go back to host memory,
// so each batch ends with the compute stream drained.
func (e *Engine) trainBatch(k int, batch []store.Edge, si int, src *store.Buffer, di int, dst *store.Buffer, wr *rand.Rand, tA, tB table) error {
	j := k % 2
	if err := e.g.syncEvent(evConsumed + j); err != nil {
		return err
	}
	bi := e.indexFor(j, batch, si, di, wr)
	var hs *hostStage
	if e.mode == realrun.BufferHost {
		var err error
		if hs, tA, tB, err = e.stageRows(&bi, si, src, di, dst); err != nil {
			return err
		}
	}
	nIdx := int64(3*bi.n + 2*bi.negs)
	if err := e.g.htod(bi.idx.p, e.idxHost[j].p, 4*nIdx, uploadStream); err != nil {
		return err
	}
	if err := e.g.record(evUploaded+j, uploadStream); err != nil {
		return err
	}
	if err := e.g.wait(computeStream, evUploaded+j); err != nil {
		return err
	}
	e.count(4*nIdx, 0)
	if e.h.Micro.On() {
		// The batch step (Marius, GE2): full chunks as one group, then
		// the short tail chunk, and one Adagrad step per touched row
		// with its gradients summed over the batch.
		full := bi.n / e.chunk
		if full > 0 {
			if err := e.trainGroup(&bi, 0, full, e.chunk, tA, tB); err != nil {
				return err
			}
		}
		if tail := bi.n - full*e.chunk; tail > 0 {
			if err := e.trainGroup(&bi, full, 1, tail, tA, tB); err != nil {
				return err
			}
		}
		if err := e.step(tA, tB, bi.n); err != nil {
			return err
		}
	} else {
		// The chunk step (the CPU engine's default, PBG's): each chunk
		// trained against the rows the chunks before it updated, then
		// one Adagrad step per touched row.
		for c, lo := 0, 0; lo < bi.n; c, lo = c+1, lo+e.chunk {
			n := min(e.chunk, bi.n-lo)
			if err := e.trainGroup(&bi, c, 1, n, tA, tB); err != nil {
				return err
			}
			if err := e.step(tA.capHits(n, e.h.Negatives), tB.capHits(n, e.h.Negatives), n); err != nil {
				return err
			}
		}
	}
	if err := e.g.record(evConsumed+j, computeStream); err != nil {
		return err
	}
	if hs != nil {
		return e.unstageRows(hs, src, dst, tA, tB)
	}
	return nil
}

// step applies Adagrad to every row the groups since the last step
// touched: in the source and destination tables (once when they are the
// same partition) and, for models with relations, in the relation table
// (at most edges rows).
func (e *Engine) step(tA, tB table, edges int) error {
	if err := e.adagrad(tA); err != nil {
		return err
	}
	if tB.acc != tA.acc {
		if err := e.adagrad(tB); err != nil {
			return err
		}
	}
	if e.h.Model.UsesRelations() {
		return e.adagrad(e.relAcc.table(e.rel.p, e.relState.p, int64(edges)))
	}
	return nil
}

func (e *Engine) count(h2d, d2h int64) {
	e.mu.Lock()
	e.h2d += h2d
	e.d2h += d2h
	e.mu.Unlock()
}

// trainGroup trains g chunks of n edges starting at chunk c0 of the batch.
func (e *Engine) trainGroup(bi *batchIndex, c0, g, n int, tA, tB table) error {
	s := computeStream
	d, m := e.d, e.h.Negatives
	E, M := int64(g*n), int64(g*m)
	eOff, nOff := int64(c0*e.chunk), int64(c0*m)
	srcRow, dstRow, rel := bi.idx.at(bi.offSrc+eOff), bi.idx.at(bi.offDst+eOff), bi.idx.at(bi.offRel+eOff)
	negRow, negSel := bi.idx.at(bi.offN+nOff), bi.idx.at(bi.offSel+nOff)
	uses := e.h.Model.UsesRelations()
	ed, md := E*int64(d), M*int64(d)
	var null ptr
	steps := []func() error{
		func() error { return e.launch1D(s, "gather_rows", ed, tA.emb, null, srcRow, null, e.S.p, int(E), d) },
		func() error { return e.launch1D(s, "gather_rows", ed, tB.emb, null, dstRow, null, e.D.p, int(E), d) },
		func() error {
			return e.launch1D(s, "gather_rows", md, tA.emb, tB.emb, negRow, negSel, e.N.p, int(M), d)
		},
		func() error { return e.g.memset32(e.gS.p, 0, ed, s) },
		func() error { return e.g.memset32(e.gD.p, 0, ed, s) },
		func() error { return e.g.memset32(e.gN.p, 0, md, s) },
	}
	if uses {
		steps = append(steps,
			func() error { return e.launch1D(s, "gather_rows", ed, e.rel.p, null, rel, null, e.R.p, int(E), d) },
			func() error { return e.g.memset32(e.gR.p, 0, ed, s) })
	}
	for _, f := range steps {
		if err := f(); err != nil {
			return err
		}
	}
	// Destination side (queries from s, r; positives D), then source side
	// (queries from r, d; positives S), as model.ChunkGrad.
	for _, sd := range []struct {
		a, ga, x, gx ptr
		mode         int
	}{{e.S.p, e.gS.p, e.D.p, e.gD.p, 1}, {e.D.p, e.gD.p, e.S.p, e.gS.p, 2}} {
		if e.h.Model == workload.Dot {
			if err := e.side(g, n, sd.a, sd.x, sd.ga, sd.gx); err != nil {
				return err
			}
			continue
		}
		mode := 0 // DistMult
		if e.h.Model == workload.ComplEx {
			mode = sd.mode
		}
		threads := ed
		if mode != 0 {
			threads = E * int64(d/2)
		}
		if err := e.launch1D(s, "make_query", threads, mode, int(E), d, sd.a, e.R.p, e.Q.p); err != nil {
			return err
		}
		if err := e.g.memset32(e.gQ.p, 0, ed, s); err != nil {
			return err
		}
		if err := e.side(g, n, e.Q.p, sd.x, e.gQ.p, sd.gx); err != nil {
			return err
		}
		if err := e.launch1D(s, "query_back", threads, mode, int(E), d, sd.a, e.R.p, e.gQ.p, sd.ga, e.gR.p); err != nil {
			return err
		}
	}
	// Scatter every occurrence's gradient into its table's accumulator.
	if err := e.scatter(e.gS.p, srcRow, null, E, tA, tA); err != nil {
		return err
	}
	if err := e.scatter(e.gD.p, dstRow, null, E, tB, tB); err != nil {
		return err
	}
	if err := e.scatter(e.gN.p, negRow, negSel, M, tA, tB); err != nil {
		return err
	}
	if uses {
		rt := e.relAcc.table(e.rel.p, e.relState.p, E)
		if err := e.scatter(e.gR.p, rel, null, E, rt, rt); err != nil {
			return err
		}
	}
	return nil
}

// side is model's side(): positives <Q_i, X_i>, negative scores Q·Nᵀ per
// chunk, softmax loss, and gradients into gQ, gX and gN.
func (e *Engine) side(g, n int, q, x, gq, gx ptr) error {
	s := computeStream
	d, m := e.d, e.h.Negatives
	E := int64(g * n)
	nd, md, nm := int64(n*d), int64(m*d), int64(n*m)
	if err := e.launch1D(s, "row_dot", E, int(E), d, q, x, e.pos.p); err != nil {
		return err
	}
	// T = Q·Nᵀ (n×m per chunk).
	if err := e.gemm(g, false, true, n, m, d, 1, q, d, nd, e.N.p, d, md, 0, e.T.p, m, nm); err != nil {
		return err
	}
	if err := e.launch1D(s, "softmax_loss", 32*E, int(E), m, e.pos.p, e.T.p, e.gp.p, e.loss.p); err != nil {
		return err
	}
	if err := e.launch1D(s, "pos_grad", E*int64(d), int(E), d, e.gp.p, q, x, gq, gx); err != nil {
		return err
	}
	if m == 0 {
		return nil
	}
	// gQ += G·N (n×d); gN += Gᵀ·Q (m×d).
	if err := e.gemm(g, false, false, n, d, m, 1, e.T.p, m, nm, e.N.p, d, md, 1, gq, d, nd); err != nil {
		return err
	}
	return e.gemm(g, true, false, m, d, n, 1, e.T.p, m, nm, q, d, nd, 1, e.gN.p, d, md)
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
	flag := func(t bool) int {
		if t {
			return 1
		}
		return 0
	}
	return e.launch(computeStream, "sgemm_batched", (N+15)/16, (M+15)/16, batch, 16, 16,
		flag(ta), flag(tb), M, N, K, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC)
}

func (e *Engine) scatter(grad, rows, sel ptr, count int64, a, b table) error {
	return e.launch1D(computeStream, "scatter_add", count*int64(e.d), grad, rows, sel, int(count), e.d,
		a.acc, a.flag, a.list, a.count, b.acc, b.flag, b.list, b.count)
}

func (e *Engine) adagrad(t table) error {
	if err := e.launch1D(computeStream, "adagrad_rows", t.maxHit*int64(e.d), t.emb, t.state, t.acc, t.flag, t.list, t.count,
		int(t.maxHit), e.d, e.h.LR, float32(workload.AdagradEps)); err != nil {
		return err
	}
	return e.g.memset32(t.count, 0, 1, computeStream)
}

// hostStage is one batch's compact tables (--buffer host): the distinct
// rows of the source (and destination) partition the batch touches.
type hostStage struct {
	rows  [2][]int32 // partition rows in compact order, per table
	same  bool
	bytes int64
}

// stageRows gathers the rows a batch touches from the host partitions
// into compact tables, ships them (embeddings and Adagrad state) to the
// GPU and rewrites the batch's indices to compact rows.
func (e *Engine) stageRows(bi *batchIndex, si int, src *store.Buffer, di int, dst *store.Buffer) (*hostStage, table, table, error) {
	hs := &hostStage{same: si == di}
	local := [2]map[int32]int32{{}, {}}
	use := func(t int, r int32) int32 {
		if hs.same {
			t = 0
		}
		if l, ok := local[t][r]; ok {
			return l
		}
		l := int32(len(hs.rows[t]))
		local[t][r] = l
		hs.rows[t] = append(hs.rows[t], r)
		return l
	}
	for i := range bi.srcRow {
		bi.srcRow[i] = use(0, bi.srcRow[i])
		bi.dstRow[i] = use(1, bi.dstRow[i])
	}
	for i, r := range bi.negRow {
		bi.negRow[i] = use(int(bi.negSel[i]), r)
	}
	d := int64(e.d)
	var tabs [2]table
	parts := [2]*store.Buffer{src, dst}
	accs := [2]accum{e.accA, e.accB}
	if err := e.g.record(evStageStart, computeStream); err != nil {
		return nil, tabs[0], tabs[1], err
	}
	for t := 0; t < 2; t++ {
		if t == 1 && hs.same {
			tabs[0].hits = 2
			tabs[1] = tabs[0]
			break
		}
		n := int64(len(hs.rows[t]))
		emb := e.moveRows(hs, t, parts[t], true)
		dm := e.compact[t]
		if err := e.g.htod(dm.p, unsafe.Pointer(&emb[0]), 4*2*n*d, computeStream); err != nil {
			return nil, tabs[0], tabs[1], err
		}
		hs.bytes += 4 * 2 * n * d
		tabs[t] = accs[t].table(dm.p, dm.at(n*d), n)
	}
	if hs.same {
		for i := range bi.negSel {
			bi.negSel[i] = 0
		}
	}
	if err := e.g.record(evStageEnd, computeStream); err != nil {
		return nil, tabs[0], tabs[1], err
	}
	e.count(hs.bytes, 0)
	return hs, tabs[0], tabs[1], nil
}

// unstageRows copies the trained compact rows and state back into the
// host partitions.
func (e *Engine) unstageRows(hs *hostStage, src, dst *store.Buffer, tA, tB table) error {
	d := int64(e.d)
	stage := e.stage.floats()
	if err := e.g.record(evUnstageStart, computeStream); err != nil {
		return err
	}
	for t := 0; t < 2; t++ {
		if t == 1 && hs.same {
			break
		}
		n := int64(len(hs.rows[t]))
		emb := stage[int64(t)*2*e.capRows*d:]
		if err := e.g.dtoh(unsafe.Pointer(&emb[0]), e.compact[t].p, 4*2*n*d, computeStream); err != nil {
			return err
		}
	}
	if err := e.g.record(evUnstageEnd, computeStream); err != nil {
		return err
	}
	if err := e.g.sync(computeStream); err != nil {
		return err
	}
	in, err := e.g.elapsed(evStageStart, evStageEnd)
	if err != nil {
		return err
	}
	out, err := e.g.elapsed(evUnstageStart, evUnstageEnd)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.stageSeconds += in + out
	e.mu.Unlock()
	e.count(0, hs.bytes)
	parts := [2]*store.Buffer{src, dst}
	for t := 0; t < 2; t++ {
		if t == 1 && hs.same {
			break
		}
		e.moveRows(hs, t, parts[t], false)
	}
	return nil
}

// moveRows copies table t's rows (embeddings, then Adagrad state) from the
// partition into the pinned stage (toStage) or back, and returns the
// table's stage.
func (e *Engine) moveRows(hs *hostStage, t int, part *store.Buffer, toStage bool) []float32 {
	d := int64(e.d)
	rd := e.rows * d
	f := part.Floats()
	n := int64(len(hs.rows[t]))
	emb := e.stage.floats()[int64(t)*2*e.capRows*d:]
	state := emb[n*d:]
	for j, r := range hs.rows[t] {
		se, ss := emb[int64(j)*d:int64(j+1)*d], state[int64(j)*d:int64(j+1)*d]
		pe, ps := f[int64(r)*d:int64(r+1)*d], f[rd+int64(r)*d:rd+int64(r+1)*d]
		if toStage {
			copy(se, pe)
			copy(ss, ps)
		} else {
			copy(pe, se)
			copy(ps, ss)
		}
	}
	return emb
}

var (
	_ realrun.Engine       = (*Engine)(nil)
	_ realrun.Stateful     = (*Engine)(nil)
	_ realrun.SlotResident = (*Engine)(nil)
	_ realrun.EpochHooks   = (*Engine)(nil)
)

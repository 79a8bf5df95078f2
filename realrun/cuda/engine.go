package cuda

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/tierflow/tierflow/report"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/telemetry"
)

// accum is one table's side of a step (the Acc of kernels/train.cu): the
// gradient accumulator (rule sum), the touched-row flags and list, and
// for rule each the head of every row's list of occurrences and each
// occurrence slot's successor.
type accum struct {
	acc, flag, list, head, next dev
	rows                        int64
}

// newAccum allocates the accumulator side of a table of rows rows of
// width floats whose steps see at most slots occurrences (rule each).
func (e *Engine) newAccum(rows, width, slots int64) (accum, error) {
	a := accum{rows: rows}
	for _, x := range []struct {
		p    *dev
		n    int64
		fill uint32
	}{{&a.acc, rows * width, 0}, {&a.flag, rows, 0}, {&a.list, rows, 0}, {&a.head, rows, 0xffffffff}, {&a.next, slots, 0}} {
		var err error
		if *x.p, err = e.alloc(4 * x.n); err != nil {
			return a, err
		}
		if err = e.g.memset32(x.p.p, x.fill, x.n, computeStream); err != nil {
			return a, err
		}
	}
	return a, e.g.sync(computeStream)
}

// words is a's Acc as the kernels read it (five pointers).
func (a accum) words() []uint64 {
	return []uint64{uint64(a.acc.p), uint64(a.flag.p), uint64(a.list.p), uint64(a.head.p), uint64(a.next.p)}
}

// tables are the embedding tables a bucket trains: sources (A) and
// destinations (B), each rows×d embeddings followed by their Adagrad
// state; same when the bucket's two partitions are one table.
type tables struct {
	embA, stateA, embB, stateB ptr
	rowsA, rowsB               int64
	same                       bool
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
	relW   int64 // floats a relation row (Model.RelWidth)
	pbytes int64
	neg    *sample.NegativeSampler
	g      gpu
	allocs []dev // everything alloc returned, freed by Close

	rel, relState dev

	// --buffer gpu: the c partition slots and where each partition is.
	slotMem []dev
	mu      sync.Mutex
	where   map[int]int
	regd    map[unsafe.Pointer][]byte // host buffers registered as pinned

	// rule is the update of the chunk step: ruleSum or ruleEach (the
	// batch step always sums).
	rule int
	// The step's accumulators of the source, destination and relation
	// tables (host mode: of the compact per-batch tables, whose rows live
	// in compact), their Acc descriptors on the GPU, and the rows each
	// step listed (three ints).
	acc     [3]accum
	accs    dev
	counts  dev
	compact [2]dev // host mode: [emb | state] of the rows a batch touches
	capRows int64  // rows per compact table
	host    *hostSide

	// A group's work buffers (up to maxGroup chunks): stacked queries Q
	// and their gradients gQ (2·chunk rows a chunk), negatives N and gN,
	// scores T, positive scores and their gradients, the relation
	// gradients of rule each (relW a row), the normed comparators' row
	// norms of Q and N (qn, nn) and coefficients of their rows in the
	// gradients (aq, bn), and the loss in 32 partial sums.
	Q, gQ, N, gN, T, pos, gp, gR dev
	qn, nn, aq, bn               dev
	loss                         dev
	// idx and idxHost are the ring of index slots, on the GPU and pinned
	// on the host: the producer samples piece k into slot k%ringSlots
	// while the GPU trains the pieces before it.
	idx     [ringSlots]dev
	idxHost [ringSlots]pinned
	stage   pinned

	// blas does the products (cuBLAS when found); nil: the engine's own
	// sgemm_batched kernel. gemmNote says which, and why.
	blas     blas
	gemmNote string

	// chunk is the edges of a chunk, maxChunks a batch's chunks, L the
	// int32s of one chunk's index block, maxGroup the chunks trained as
	// one group, pieceChunks the chunks of one index piece.
	chunk, maxChunks, L, maxGroup, pieceChunks int
	// fillers sample a piece's chunks in parallel.
	fillers []*filler
	// graphs are the chunk step's launches recorded per (index slot,
	// chunk of the piece); graphOff says why they are not used ("": they
	// are).
	graphs   map[[2]int]graph
	graphOff string

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

// ptrs are pointers to each element of xs.
func ptrs[T any](xs []T) []*T {
	out := make([]*T, len(xs))
	for i := range xs {
		out[i] = &xs[i]
	}
	return out
}

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
	if st.M.Typed() {
		return nil, fmt.Errorf("cuda engine: work directory %s has entity types, which the cuda engine does not support yet (the cpu engine does)", st.Dir)
	}
	e := &Engine{h: h, mode: o.Buffer, d: h.Dim, rows: st.M.Rows, pbytes: st.M.PartitionBytes, g: g,
		where: map[int]int{}, regd: map[unsafe.Pointer][]byte{}}
	if e.mode == "" {
		e.mode = realrun.BufferGPU
	}
	e.neg = sample.NewNegativeSampler(st, o.Degrees, h.DegreeFrac)
	e.chunk = h.Chunk()
	e.maxChunks = (h.Batch + e.chunk - 1) / e.chunk
	e.L = 1 + 3*e.chunk + 2*h.Negatives
	e.rule = ruleSum
	if !h.Micro.On() && h.Rule() == realrun.DuplicatesEach {
		e.rule = ruleEach
	}
	// Index pieces of up to pieceChunks chunks (about pieceEdges edges;
	// --buffer host stages a batch's rows at once: a whole batch), each
	// trained as one group by the batch step, chunk by chunk by the chunk
	// step.
	e.pieceChunks = min(e.maxChunks, max(1, (pieceEdges+e.chunk-1)/e.chunk))
	if e.mode == realrun.BufferHost {
		e.pieceChunks = e.maxChunks
	}
	e.maxGroup = 1
	if h.Micro.On() {
		e.maxGroup = e.pieceChunks
	}
	for k := 0; k < max(1, min(runtime.GOMAXPROCS(0)-1, 8)); k++ {
		src := rand.NewPCG(0, 0)
		e.fillers = append(e.fillers, &filler{src: src, rng: rand.New(src), side: make([]bool, h.Negatives)})
	}
	e.graphs = map[[2]int]graph{}
	if v := os.Getenv("TIERFLOW_CUDA_GRAPHS"); v == "0" {
		e.graphOff = "TIERFLOW_CUDA_GRAPHS=0"
	}
	done, err := e.bind()
	if err != nil {
		g.close()
		return nil, err
	}
	err = e.allocAll(st, o)
	if err == nil {
		e.openBLAS(h.TF32)
		err = e.warmUp()
	}
	done()
	if err != nil {
		e.Close()
		return nil, err
	}
	if !h.Micro.On() {
		if e.graphOff == "" {
			e.gemmNote += graphsOn
		} else {
			e.gemmNote += "; chunk step launched directly (" + e.graphOff + ")"
		}
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
	nc := int64(e.chunk)
	negs := int64(e.maxChunks) * m
	slots := 2*nc + m // occurrence slots of one chunk in a table (rule each)
	e.nrel = int64(st.M.Relations)
	e.relW = int64(e.h.Model.RelWidth(e.d))
	if e.h.Model.UsesRelations() {
		if e.rel, err = e.alloc(4 * e.nrel * e.relW); err != nil {
			return err
		}
		if e.relState, err = e.alloc(4 * e.nrel * e.relW); err != nil {
			return err
		}
		// Relations start as every engine starts them (same seed, same rule).
		emb, state := sample.InitRelations(e.h.Model, st.M.Relations, e.h.Dim, o.Seed)
		if int64(len(emb)) != e.nrel*e.relW {
			return fmt.Errorf("relation rows: initialised %d floats, want %d relations of %d (%s, d=%d)",
				len(emb), e.nrel, e.relW, e.h.Model, e.d)
		}
		if err := e.restore(append(emb, state...)); err != nil {
			return err
		}
		if e.acc[2], err = e.newAccum(e.nrel, e.relW, nc); err != nil {
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
		e.host = newHostSide(e.rows, e.h.Workers)
	} else {
		for i := 0; i < o.C; i++ {
			s, err := e.alloc(e.pbytes)
			if err != nil {
				return fmt.Errorf("partition slot %d of %d: %w", i+1, o.C, err)
			}
			e.slotMem = append(e.slotMem, s)
		}
	}
	for t := 0; t < 2; t++ {
		if e.acc[t], err = e.newAccum(rows, d, slots); err != nil {
			return err
		}
	}
	words := append(append(e.acc[0].words(), e.acc[1].words()...), e.acc[2].words()...)
	if e.accs, err = e.alloc(8 * int64(len(words))); err != nil {
		return err
	}
	if err := e.g.htod(e.accs.p, unsafe.Pointer(&words[0]), 8*int64(len(words)), computeStream); err != nil {
		return err
	}
	if err := e.g.sync(computeStream); err != nil {
		return err
	}
	G := int64(e.maxGroup)
	gR := nc * e.relW // rule each's per-occurrence relation gradients (rule sum adds into the accumulator)
	if e.rule != ruleEach {
		gR = 0
	}
	for _, x := range []struct {
		p *dev
		n int64
	}{{&e.Q, G * 2 * nc * d}, {&e.gQ, G * 2 * nc * d}, {&e.N, G * m * d}, {&e.gN, G * m * d},
		{&e.T, G * 2 * nc * m}, {&e.pos, G * 2 * nc}, {&e.gp, G * 2 * nc}, {&e.gR, gR},
		{&e.qn, G * 2 * nc}, {&e.aq, G * 2 * nc}, {&e.nn, G * m}, {&e.bn, G * m},
		{&e.loss, 2 * lossParts}, {&e.counts, 4}} {
		if *x.p, err = e.alloc(4 * x.n); err != nil {
			return err
		}
	}
	if err := e.g.memset32(e.counts.p, 0, 4, computeStream); err != nil {
		return err
	}
	slot := pieceInts + int64(e.pieceChunks)*int64(e.L)
	for j := range e.idx {
		if e.idx[j], err = e.alloc(4 * slot); err != nil {
			return err
		}
		if e.idxHost[j], err = e.allocPinned(4 * slot); err != nil {
			return err
		}
	}
	return e.g.sync(computeStream)
}

// warmUp runs a group of padding chunks (no edges; their negatives all
// row 0 of a scratch table, stepped with zero gradients) and its step
// through every kernel and product shape the engine launches, and waits:
// what the GPU loads on first use (cuBLAS's kernels, which CUDA loads
// lazily) is then loaded before the first timed bucket. On an H100 the
// first epoch of each process computed 0.06–0.13 s longer than every
// later one (2026-11-27, results/gpu/h100-graphs).
func (e *Engine) warmUp() error {
	d := int64(e.d)
	scratch, err := e.alloc(4 * 2 * 2 * d) // two rows, then their state
	if err != nil {
		return err
	}
	if err := e.g.memset32(scratch.p, 0, 4*d, computeStream); err != nil {
		return err
	}
	piece := make([]int32, pieceInts+int64(e.maxGroup)*int64(e.L)) // counts 0, rows 0
	tables{embA: scratch.p, stateA: scratch.at(2 * d), embB: scratch.p, stateB: scratch.at(2 * d), rowsA: 2, rowsB: 2, same: true}.header(piece)
	if err := e.g.htod(e.idx[0].p, unsafe.Pointer(&piece[0]), 4*int64(len(piece)), computeStream); err != nil {
		return err
	}
	for _, g := range []int{1, e.maxGroup}[:min(2, e.maxGroup)] {
		if err := e.group(e.idx[0].p, 0, g, true); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		if err := e.step(e.idx[0].p, 1); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	return e.g.sync(computeStream)
}

// openBLAS takes cuBLAS for the products when the GPU has it, else keeps
// the engine's own kernel; gemmNote says which was chosen and why.
func (e *Engine) openBLAS(tf32 bool) {
	b, err := e.g.openBLAS(tf32)
	if err != nil {
		e.gemmNote = "built-in sgemm_batched kernel (" + err.Error() + ")"
		if tf32 {
			e.gemmNote += "; {TF32} has no effect without cuBLAS"
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
		for k, gr := range e.graphs {
			e.g.freeGraph(gr)
			delete(e.graphs, k)
		}
		if e.blas != nil {
			e.blas.close()
			e.blas = nil
		}
		for _, h := range append([]*pinned{&e.stage}, ptrs(e.idxHost[:])...) {
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
	n := e.nrel * e.relW
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
	n := e.nrel * e.relW
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

var (
	_ realrun.Engine       = (*Engine)(nil)
	_ realrun.Stateful     = (*Engine)(nil)
	_ realrun.SlotResident = (*Engine)(nil)
	_ realrun.EpochHooks   = (*Engine)(nil)
)

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
	"github.com/tierflow/tierflow/realrun/telemetry"
)

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

var (
	_ realrun.Engine       = (*Engine)(nil)
	_ realrun.Stateful     = (*Engine)(nil)
	_ realrun.SlotResident = (*Engine)(nil)
	_ realrun.EpochHooks   = (*Engine)(nil)
)

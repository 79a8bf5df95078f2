package workload

import (
	"errors"
	"math"
)

// BytesPerFloat is the size of one float32 parameter.
const BytesPerFloat = 4

// BatchShape is what one batch — or one micro-batch of it — puts on the
// device that trains it. A chunk is a run of edges sharing one set of
// Negatives negative rows (PBG §4.3); a chunk split between micro-batches
// counts once in each (a piece).
type BatchShape struct {
	Model Model `json:"model"`
	Dim   int   `json:"dim"`
	// Edges in the (micro-)batch; Chunks the chunk pieces among them and
	// ChunkEdges the edges of the largest piece.
	Edges      int `json:"edges"`
	Chunks     int `json:"chunks"`
	ChunkEdges int `json:"chunk_edges"`
	Negatives  int `json:"negatives"`
	// Rows are the distinct node rows gathered (sources, destinations and
	// negatives); Relations the distinct relation rows (0 for Dot).
	Rows      int64 `json:"rows"`
	Relations int64 `json:"relations"`
	// Concurrent is how many chunks' working sets are live at once: 1 for
	// tierflow's CPU engine (a worker runs its chunks one after another),
	// every chunk of the micro-batch for a GPU engine that launches them
	// together.
	Concurrent int `json:"concurrent"`
}

// BatchMemory is a batch's peak device memory, term by term, in bytes.
type BatchMemory struct {
	// Rows: the gathered node rows and their gradients.
	Rows int64 `json:"rows_bytes"`
	// Relations: the gathered relation rows and their gradients.
	Relations int64 `json:"relations_bytes"`
	// Index: the local row indices of every edge and negative, and the
	// global ids of the gathered rows (for the write-back).
	Index int64 `json:"index_bytes"`
	// Chunk: the working set of one chunk (its expanded rows, gradients,
	// score matrices and kernel workspace) times Concurrent.
	Chunk int64 `json:"chunk_bytes"`
	Total int64 `json:"total_bytes"`
}

// EstimateBatch returns the peak device memory of one batch of shape s.
// It is the one formula the simulator and the engines use (floats are 4
// bytes, indices 4, global row ids 8):
//
//	rows      = U·d·4·2                 parameters + gradient accumulators
//	relations = R·w·4·2                 (models with relation parameters)
//	index     = (2 + ρ)·E·4 + C·m·4 + U·8 + R·8
//	chunk     = W·4·( (4 + 2κ)·n·d + 2·n·w + 2·m·d + 2·n·m + n·d + m·d + 2·n )
//	total     = rows + relations + index + chunk
//
// with U rows, R relation rows, E edges, C chunk pieces, n edges in the
// largest piece, m negatives, W = Concurrent, w = Model.RelWidth(d) the
// floats of one relation row (d for DistMult and ComplEx, d/2 for RotatE,
// two operators' worth for a PBG pair, 0 without relations), ρ = 1 when
// the model has relations (its per-edge relation rows and their
// gradients, 2·n·w in the chunk) and κ = 1
// when it is not Dot (the query rows s∘r or s·r and their gradient). The
// chunk term is, per chunk, the gathered S, D (and R) rows with their
// gradients, N and its gradient, the two n×m score matrices (scores, then
// softmax weights, and their transpose), the transposes Qᵀ (d×n) and Nᵀ
// (d×m), and the positive scores with their gradients — the buffers of
// model.ChunkGrad and of the engine's chunk scratch.
//
// Adagrad state is not on the device: gradients are accumulated over the
// micro-batches and one Adagrad step per row is taken after the last, where
// the state lives (host memory), exactly as the unsplit batch does.
func EstimateBatch(s BatchShape) BatchMemory {
	d, n, m := int64(s.Dim), int64(s.ChunkEdges), int64(s.Negatives)
	var rho, kappa, w int64
	if s.Model.UsesRelations() {
		rho, w = 1, int64(s.Model.RelWidth(s.Dim))
	}
	if s.Model != Dot {
		kappa = 1
	}
	rel := s.Relations
	if rho == 0 {
		rel = 0
	}
	var b BatchMemory
	b.Rows = s.Rows * d * BytesPerFloat * 2
	b.Relations = rel * w * BytesPerFloat * 2
	b.Index = (2+rho)*int64(s.Edges)*4 + int64(s.Chunks)*m*4 + s.Rows*8 + rel*8
	if s.Edges > 0 {
		perChunk := (4+2*kappa)*n*d + 2*n*w + 2*m*d + 2*n*m + n*d + m*d + 2*n
		b.Chunk = int64(max(s.Concurrent, 1)) * perChunk * BytesPerFloat
	}
	b.Total = b.Rows + b.Relations + b.Index + b.Chunk
	return b
}

// ExpectedDistinct is the expected number of distinct items among draws
// independent uniform draws from a population of size pop:
// pop·(1 − (1 − 1/pop)^draws). It is the row count the simulator assumes
// for a batch; a real batch of a power-law graph repeats rows more often.
func ExpectedDistinct(pop, draws float64) float64 {
	if pop <= 0 || draws <= 0 {
		return 0
	}
	if pop <= 1 {
		return 1
	}
	return pop * -math.Expm1(draws*math.Log1p(-1/pop))
}

// UniformShape is the expected shape of a (micro-)batch of edges edges in
// pieces chunk pieces of at most chunkEdges edges, each piece sharing
// negatives negative rows, whose rows are drawn uniformly from nodes rows
// and whose relations from relations rows: the shape the simulator
// estimates without a real graph. concurrent ≤ 0 means every piece at
// once (a GPU engine).
func UniformShape(model Model, dim, edges, pieces, chunkEdges, negatives int, nodes, relations int64, concurrent int) BatchShape {
	s := BatchShape{Model: model, Dim: dim, Edges: edges, Chunks: pieces, ChunkEdges: min(chunkEdges, edges), Negatives: negatives, Concurrent: concurrent}
	if concurrent <= 0 {
		s.Concurrent = pieces
	}
	draws := float64(2*edges) + float64(pieces)*float64(negatives)
	s.Rows = int64(math.Ceil(ExpectedDistinct(float64(nodes), draws)))
	if model.UsesRelations() {
		s.Relations = int64(math.Ceil(ExpectedDistinct(float64(relations), float64(edges))))
	}
	return s
}

// RangePieces is the chunk pieces of edges [lo, hi) of a batch trained in
// chunks of chunk edges.
func RangePieces(lo, hi, chunk int) int {
	if hi <= lo {
		return 0
	}
	return (hi-1)/chunk - lo/chunk + 1
}

// MaxMicroBatches bounds the micro-batches a batch may be split into.
const MaxMicroBatches = 1 << 16

// ErrNoFit is returned by FewestMicroBatches when not even its limit of
// micro-batches fits.
var ErrNoFit = errors.New("no number of micro-batches fits")

// FewestMicroBatches returns the fewest k in [1, limit] (limit at most
// MaxMicroBatches) for which fits(k) holds. It is the one search the
// simulator and the CPU engine use: k = 1 (the whole batch) first; then
// from start — a lower bound the caller knows, at least 2 — k doubles
// until a split fits and bisects back between the last k that did not
// fit and the first that did, O(log limit) calls. The answer is the
// fewest when more micro-batches never need more memory; where a split's
// peak can grow with k (by a chunk piece), it is at most one doubling
// larger than the fewest. It returns ErrNoFit when limit does not fit,
// and the first error fits returns.
func FewestMicroBatches(start, limit int, fits func(k int) (bool, error)) (int, error) {
	limit = max(1, min(limit, MaxMicroBatches))
	if ok, err := fits(1); err != nil || ok {
		return 1, err
	}
	if limit == 1 {
		return 0, ErrNoFit
	}
	lo, hi := 1, min(max(start, 2), limit) // lo does not fit
	for {
		ok, err := fits(hi)
		if err != nil {
			return 0, err
		}
		if ok {
			break
		}
		if hi == limit {
			return 0, ErrNoFit
		}
		lo, hi = hi, min(2*hi, limit)
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, err := fits(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// MicroLowerBound is a lower bound on the micro-batches a batch needs to
// fit budget when one chunk's working set is live at a time (Concurrent
// = 1, the CPU engine), from the whole batch's estimate: everything but
// that working set shrinks at best as 1/k. It is at least 2: the whole
// batch is assumed not to fit.
func MicroLowerBound(whole BatchMemory, budget int64) int {
	if spare := budget - whole.Chunk; spare > 0 {
		return max(2, int((whole.Total-whole.Chunk+spare-1)/spare))
	}
	return 2
}

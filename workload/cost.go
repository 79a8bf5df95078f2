package workload

// The cost rule: the arithmetic and the traffic of training one chunk of a
// model, the one place the simulator (sim: the CPU engine's model and the
// paper systems' GPU stage) and the calibration (its FLOP rate against the
// FMA peak) count them. Every term is of both corrupted sides, forward and
// backward; a multiply-add is 2 FLOPs, a multiply or an add 1, and a
// square root, exponential, logarithm, sine or cosine TranscendentalFLOPs.
// The positive pair's own score (one candidate beside m negatives) is not
// counted, as the rule has never counted it.

// TranscendentalFLOPs is what the cost rule counts for one square root,
// exponential, logarithm, sine or cosine: about the work of the short
// polynomial a vectorised kernel evaluates for it (a convention of the
// rule; these are a few per score or per coordinate, small beside a
// product over d).
const TranscendentalFLOPs = 10

// ModelCost is the work of a model at dimension d per unit: per pair of a
// query and a candidate, per score, per row, per query and per edge. One
// side, forward and backward, unless said otherwise.
type ModelCost struct {
	// PairFLOPs are the GEMM path's FLOPs for one query and one candidate:
	// 2d for the product Q·Nᵀ and 4d for the backward G·N and Gᵀ·Q — 6d
	// for the comparators computed from the product (dot, cos, l2,
	// squared_l2), 0 for the pairwise ones.
	PairFLOPs float64
	// PairOps are the pairwise kernel's element operations for one query
	// and one candidate (l1, modulus_l1; 0 for the GEMM comparators).
	// They are not GEMM FLOPs: no blocking reuses an operand from
	// registers, and |·|, sign and √ are not fused multiply-adds, so they
	// are priced at their own rate (devices.TrainCost.Pairwise).
	//   l1: per coordinate, forward a subtraction, |·| and the sum (3);
	//   backward the difference again, its sign and ±g into both
	//   gradients (6): 9d.
	//   modulus_l1: per complex coordinate (d/2 of them), forward 2
	//   subtractions, 2 squares, an add, √ and the sum (6 + T); backward
	//   the differences and √ again, g÷modulus, 2 products and 4
	//   accumulations (9 + T): (d/2)·(15 + 2T).
	PairOps float64
	// ScoreFLOPs are the elementwise work on each score beyond its
	// product: the comparator's (l2: ‖q‖² + ‖x‖² − 2p, the clamp and √,
	// and its derivative, 6 + T; squared_l2: 6; dot and cos: 0, cos
	// normalises its rows first) and the loss's beyond the softmax's,
	// which every rule before this one folded into its products
	// (logistic: the log of the softplus, T; self-adversarial weights:
	// an exponential a negative, T; ranking: none).
	ScoreFLOPs float64
	// RowFLOPs are a comparator's work on each query row and each
	// candidate row: cos normalises both (‖x‖ forward 2d, √ and the scale
	// d; backward (g − x̂(x̂·g))÷‖x‖, 5d): 8d + T; l2 and squared_l2 add
	// the squared norms (2d) and their gradient's q·Σg term (2d): 4d.
	RowFLOPs float64
	// QueryFLOPs are the operator's work on one query (G or H), forward
	// and backward, the relation's gradient included:
	//   none 0; translation (x + r; g into x and r) 3d; diagonal (r∘x;
	//   r∘g and x∘g accumulated) 5d; complex_diagonal (a complex product
	//   per pair, 6; both gradients, 8 + 8) 11d; rotate (cos and sin of
	//   each phase, 2T; the rotation 6, its x and θ gradients 8 + 7)
	//   (d/2)·(21 + 2T); linear (A·x, d² multiply-adds; Aᵀ·g and g·xᵀ,
	//   2d² more) 6d²; affine linear's and the bias (+ b, g into b) 6d² + 2d.
	QueryFLOPs float64
	// EdgeFLOPs are the regulariser's work on each positive edge (its
	// source, destination and relation rows, w = 2d + RelWidth(d)
	// parameters): l2 (the square and the sum; 2λθ into the gradient) 4w,
	// n3 (|θ|³ and 3λθ|θ|) 6w, none 0.
	EdgeFLOPs float64
	// RelBytes are the bytes of the relation row an edge gathers and
	// updates: RelWidth(d)·4 (d² floats for linear, two operators for a
	// PBG pair).
	RelBytes float64
}

// Cost is m's work at dimension d (with the softmax loss and no
// regularisation: Training.Cost adds its objective's). An invalid model
// costs as dot.
func (m Model) Cost(d int) ModelCost {
	x := float64(d)
	const t = TranscendentalFLOPs
	c := ModelCost{RelBytes: float64(m.RelWidth(d) * BytesPerFloat)}
	switch m.Comparator() {
	case CmpL1:
		c.PairOps = 9 * x
	case CmpModulusL1:
		c.PairOps = x / 2 * (15 + 2*t)
	case CmpCos:
		c.PairFLOPs, c.RowFLOPs = 6*x, 8*x+t
	case CmpL2:
		c.PairFLOPs, c.RowFLOPs, c.ScoreFLOPs = 6*x, 4*x, 6+t
	case CmpSquaredL2:
		c.PairFLOPs, c.RowFLOPs, c.ScoreFLOPs = 6*x, 4*x, 6
	default: // dot
		c.PairFLOPs = 6 * x
	}
	switch m.Operator() {
	case OpTranslation:
		c.QueryFLOPs = 3 * x
	case OpDiagonal:
		c.QueryFLOPs = 5 * x
	case OpComplexDiagonal:
		c.QueryFLOPs = 11 * x
	case OpRotate:
		c.QueryFLOPs = x / 2 * (21 + 2*t)
	case OpLinear:
		c.QueryFLOPs = 6 * x * x
	case OpAffine:
		c.QueryFLOPs = 6*x*x + 2*x
	}
	return c
}

// Cost is t's model's work at t.Dim with t's objective: the loss's and
// the regulariser's terms added (ModelCost.ScoreFLOPs, EdgeFLOPs).
func (t Training) Cost() ModelCost {
	c := t.Model.Cost(t.Dim)
	o := t.Objective
	if o.LossKind() == Logistic {
		c.ScoreFLOPs += TranscendentalFLOPs
	}
	if o.Adversarial > 0 {
		c.ScoreFLOPs += TranscendentalFLOPs
	}
	w := float64(2*t.Dim + t.Model.RelWidth(t.Dim))
	switch o.Reg() {
	case RegL2:
		c.EdgeFLOPs = 4 * w
	case RegN3:
		c.EdgeFLOPs = 6 * w
	}
	return c
}

// ChunkCost are the terms of training one chunk of n edges sharing m
// negatives at dimension d, as the calibrated devices.TrainCost prices
// them (seconds = Edges ÷ edges + Bytes ÷ row_bandwidth + FLOPs ÷ flops +
// Pairwise ÷ pairwise):
type ChunkCost struct {
	// Edges is n: the per-edge work (sampling, bookkeeping, the loss).
	Edges float64
	// Bytes are the rows gathered and updated: 2n source and destination
	// rows and m negative rows of d float32s, and n relation rows of
	// RelWidth(d) float32s: ((2n + m)·d + n·RelWidth(d))·4.
	Bytes float64
	// FLOPs are the GEMM path and the elementwise work:
	// 2·(n·m·PairFLOPs + (n + m)·RowFLOPs + n·m·ScoreFLOPs + n·QueryFLOPs)
	// + n·EdgeFLOPs — 12·n·m·d for dot with the softmax loss.
	FLOPs float64
	// Pairwise are the pairwise comparators' element operations,
	// 2·n·m·PairOps (0 for the GEMM comparators).
	Pairwise float64
}

// Terms are the chunk's terms in the order a TrainCost's rates divide
// them: edges, bytes, FLOPs, pairwise operations.
func (c ChunkCost) Terms() [4]float64 { return [4]float64{c.Edges, c.Bytes, c.FLOPs, c.Pairwise} }

// ChunkCost is the cost of a chunk of n edges at t's shape (m =
// t.Negatives negatives, d = t.Dim) under t's model and objective.
func (t Training) ChunkCost(n int) ChunkCost {
	return t.Cost().chunk(float64(n), float64(t.Negatives), float64(t.Dim))
}

// chunk is the cost of a chunk of n edges over m negatives at dimension
// d.
func (c ModelCost) chunk(n, m, d float64) ChunkCost {
	return ChunkCost{
		Edges:    n,
		Bytes:    (2*n+m)*d*BytesPerFloat + n*c.RelBytes,
		FLOPs:    2*(n*m*c.PairFLOPs+(n+m)*c.RowFLOPs+n*m*c.ScoreFLOPs+n*c.QueryFLOPs) + n*c.EdgeFLOPs,
		Pairwise: 2 * n * m * c.PairOps,
	}
}

// BatchCost is the sum of ChunkCost over the chunks of a batch of b
// edges (full chunks of t.Chunk() edges and one remainder).
func (t Training) BatchCost(b int) ChunkCost {
	c := t.Cost()
	m, d := float64(t.Negatives), float64(t.Dim)
	full, rest := b/t.Chunk(), b%t.Chunk()
	one := c.chunk(float64(t.Chunk()), m, d)
	out := ChunkCost{Edges: float64(full) * one.Edges, Bytes: float64(full) * one.Bytes, FLOPs: float64(full) * one.FLOPs, Pairwise: float64(full) * one.Pairwise}
	if rest > 0 {
		r := c.chunk(float64(rest), m, d)
		out.Edges, out.Bytes, out.FLOPs, out.Pairwise = out.Edges+r.Edges, out.Bytes+r.Bytes, out.FLOPs+r.FLOPs, out.Pairwise+r.Pairwise
	}
	return out
}

// BatchFLOPs is the arithmetic of a batch of b edges on a device of one
// FLOP rate (a GPU): the chunks' FLOPs and their pairwise operations, each
// counted as one FLOP (BatchCost). For dot with the softmax loss it is
// 12·b·m·d: every edge scored against the chunk's m negatives on both
// sides, forward (2·m·d) and backward (4·m·d).
func (t Training) BatchFLOPs(b int) float64 {
	c := t.BatchCost(b)
	return c.FLOPs + c.Pairwise
}

// PerEdgeFLOPs is the cost rule's FLOPs and pairwise operations per edge
// of a chunk of t.Chunk() edges (what the calibration reads its engine's
// FLOP rate against).
func (t Training) PerEdgeFLOPs() float64 {
	c := t.ChunkCost(t.Chunk())
	return (c.FLOPs + c.Pairwise) / c.Edges
}

// ResidentRelationBytes is the memory a model's relation parameters take
// when they stay resident (they are not partitioned): RelWidth(d) float32s
// a relation with as many again of Adagrad state.
func (m Model) ResidentRelationBytes(d, relations int) int64 {
	return int64(m.RelWidth(d)) * int64(max(relations, 0)) * BytesPerFloat * 2
}

// Package sample holds the random choices every training engine makes the
// same way: the order a bucket's edges are trained in, the negatives a
// chunk shares (uniform or by degree, from the bucket's two partitions),
// the initial relation embeddings, and the stream constants their
// generators are seeded with, so that the CPU and GPU engines train the
// same edges in the same order against the same negatives.
package sample

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// Shuffler puts a bucket's edges in a uniformly random order a prefix at a
// time (the forward Fisher–Yates shuffle): after Next has returned k edges
// in all, the first k are final, and the whole order is the same however
// the calls cut it. An engine can thus train the first edges while the
// rest are still being shuffled; Shuffle is the same order at once.
type Shuffler struct {
	edges []store.Edge
	rng   *rand.Rand
	done  int
}

// NewShuffler shuffles edges in place with rng as Next asks.
func NewShuffler(edges []store.Edge, rng *rand.Rand) *Shuffler {
	return &Shuffler{edges: edges, rng: rng}
}

// Next puts the next n edges (fewer at the end) in their final places and
// returns them.
func (s *Shuffler) Next(n int) []store.Edge {
	e := s.edges
	hi := min(s.done+max(n, 0), len(e))
	for i := s.done; i < hi; i++ {
		j := i + s.rng.IntN(len(e)-i)
		e[i], e[j] = e[j], e[i]
	}
	out := e[s.done:hi]
	s.done = hi
	return out
}

// Shuffle puts edges in the order a Shuffler with rng deals them.
func Shuffle(edges []store.Edge, rng *rand.Rand) { NewShuffler(edges, rng).Next(len(edges)) }

// NegativeSampler draws the negatives a chunk shares, as every engine
// does: Negatives nodes, alternately from the bucket's source and
// destination partition (odd positions from the destination), each with
// probability DegreeFrac by degree and otherwise uniformly.
//
// For a typed store (entity types, NewTypedNegativeSampler) a chunk's
// negatives are of the types of its class (a, b) (its edges' lhs and rhs
// types), as in PyTorch-BigGraph: DrawTyped.
type NegativeSampler struct {
	frac float64
	samp []*PartSampler // per partition (untyped)

	// Typed stores only.
	typed    bool
	resident []bool           // per type: unpartitioned (its rows in the resident table)
	part     [][]*PartSampler // [type][partition]: the type's rows in the partition (nil where it has none)
	res      []*PartSampler   // [type]: a resident type's rows in the resident table
}

// NewNegativeSampler builds per-partition degree samplers for a store.
func NewNegativeSampler(st *store.Store, degrees []int32, degreeFrac float64) *NegativeSampler {
	ns := &NegativeSampler{frac: degreeFrac}
	for i := 0; i < st.M.P; i++ {
		lo := int64(i) * st.M.Rows
		hi := min(lo+st.M.Rows, st.M.Nodes)
		if lo > hi {
			lo = hi
		}
		deg := make([]int32, st.M.Rows)
		copy(deg, degrees[lo:hi])
		ns.samp = append(ns.samp, NewPartSampler(deg))
	}
	return ns
}

// NewTypedNegativeSampler builds the samplers of a typed store (m.Typed()):
// for every partitioned type one per partition over the type's rows there,
// for every resident type one over its rows of the resident table, each
// by the rows' degrees (degrees and nodeTypes indexed by relabelled node
// id, as store.Store.Degrees and NodeTypes return them).
func NewTypedNegativeSampler(m *store.Manifest, nodeTypes []uint16, degrees []int32, degreeFrac float64) (*NegativeSampler, error) {
	if !m.Typed() {
		return nil, fmt.Errorf("sample: typed negatives for a store without entity types")
	}
	if int64(len(nodeTypes)) != m.Nodes || int64(len(degrees)) != m.Nodes {
		return nil, fmt.Errorf("sample: %d node types and %d degrees for %d nodes", len(nodeTypes), len(degrees), m.Nodes)
	}
	nt := len(m.Types)
	ns := &NegativeSampler{frac: degreeFrac, typed: true, resident: make([]bool, nt),
		part: make([][]*PartSampler, nt), res: make([]*PartSampler, nt)}
	for t, et := range m.Types {
		ns.resident[t] = !et.Partitioned
		if et.Partitioned {
			ns.part[t] = make([]*PartSampler, m.P)
		}
	}
	pn := m.PartitionedNodes()
	rows := make([][]int32, nt) // one partition's (or the resident table's) rows of each type
	deg := make([][]int32, nt)
	flush := func(into func(t int, ps *PartSampler)) {
		for t := range rows {
			if len(rows[t]) > 0 {
				into(t, NewPartSamplerRows(rows[t], deg[t]))
			}
			rows[t], deg[t] = nil, nil
		}
	}
	for i := 0; i < m.P; i++ {
		lo := min(int64(i)*m.Rows, pn)
		hi := min(lo+m.Rows, pn)
		for n := lo; n < hi; n++ {
			t := nodeTypes[n]
			if int(t) >= nt || !m.Types[t].Partitioned {
				return nil, fmt.Errorf("sample: node %d in partition %d has type %d, not a partitioned type", n, i, t)
			}
			rows[t] = append(rows[t], int32(n-lo))
			deg[t] = append(deg[t], degrees[n])
		}
		flush(func(t int, ps *PartSampler) { ns.part[t][i] = ps })
	}
	for n := pn; n < m.Nodes; n++ {
		t := nodeTypes[n]
		if int(t) >= nt || m.Types[t].Partitioned {
			return nil, fmt.Errorf("sample: resident node %d has type %d, not an unpartitioned type", n, t)
		}
		rows[t] = append(rows[t], int32(n-pn))
		deg[t] = append(deg[t], degrees[n])
	}
	flush(func(t int, ps *PartSampler) { ns.res[t] = ps })
	return ns, nil
}

// Typed reports whether the sampler draws typed negatives (DrawTyped).
func (ns *NegativeSampler) Typed() bool { return ns.typed }

// Draw fills rows (local rows) and side (true: the destination partition
// di) for one chunk; len(rows) = len(side) is the number of negatives.
func (ns *NegativeSampler) Draw(rng *rand.Rand, si, di int, rows []int32, side []bool) {
	for k := range rows {
		sd := k%2 == 1
		ps := ns.samp[si]
		if sd {
			ps = ns.samp[di]
		}
		rows[k] = ns.one(rng, ps)
		side[k] = sd
	}
}

func (ns *NegativeSampler) one(rng *rand.Rand, ps *PartSampler) int32 {
	if rng.Float64() < ns.frac {
		return ps.ByDegree(rng)
	}
	return ps.Uniform(rng)
}

// Table is where a typed negative's row lives.
type Table uint8

const (
	SrcPart  Table = iota // the bucket's source partition si
	DstPart               // the bucket's destination partition di
	Resident              // the resident table
)

// Shared reports whether a chunk of class (a, b) shares one set of
// negatives between its two sides: a == b and the type is partitioned
// (both sides then come from the bucket's partitions). Otherwise each
// side has its own set (model.ChunkGradSides).
func (ns *NegativeSampler) Shared(a, b int) bool { return a == b && !ns.resident[a] }

// DrawTyped draws the negatives of a chunk of class (a, b) (its edges'
// lhs and rhs types) on bucket (si, di): len(dstRows) each.
//
// Shared(a, b): one set, into dstRows and dstTab, as Draw draws it
// (alternately from si and di, odd positions from di) but restricted to
// type a; srcRows and srcTab are left alone. Otherwise the destination
// side's set (type b, from partition di or the resident table) into
// dstRows, dstTab, then the source side's (type a, from si or the
// resident table) into srcRows, srcTab. Each draw is by degree with
// probability DegreeFrac, otherwise uniform, over that type's rows there.
// Rows are local to their table. A chunk's partitions always hold rows of
// the types its edges join (its own endpoints), so no set is empty.
func (ns *NegativeSampler) DrawTyped(rng *rand.Rand, si, di, a, b int, dstRows []int32, dstTab []Table, srcRows []int32, srcTab []Table) {
	if ns.Shared(a, b) {
		for k := range dstRows {
			p, tab := si, SrcPart
			if k%2 == 1 {
				p, tab = di, DstPart
			}
			dstRows[k] = ns.one(rng, ns.partSampler(a, p))
			dstTab[k] = tab
		}
		return
	}
	ns.drawSide(rng, b, di, DstPart, dstRows, dstTab)
	ns.drawSide(rng, a, si, SrcPart, srcRows[:len(dstRows)], srcTab[:len(dstRows)])
}

// drawSide draws one side's set of type t from partition p (as table
// tab) or, for a resident type, from the resident table.
func (ns *NegativeSampler) drawSide(rng *rand.Rand, t, p int, tab Table, rows []int32, tabs []Table) {
	ps := ns.res[t]
	if !ns.resident[t] {
		ps = ns.partSampler(t, p)
	} else {
		tab = Resident
	}
	for k := range rows {
		rows[k] = ns.one(rng, ps)
		tabs[k] = tab
	}
}

// partSampler is type t's sampler in partition p; a partition without
// rows of the type (no chunk of the type trains there) panics.
func (ns *NegativeSampler) partSampler(t, p int) *PartSampler {
	ps := ns.part[t][p]
	if ps == nil {
		panic(fmt.Sprintf("sample: partition %d has no rows of entity type %d", p, t))
	}
	return ps
}

// PartSampler draws the nodes of one partition (or of a whole graph)
// uniformly or by degree (alias
// method over its rows' degrees); NewPartSamplerRows draws from a list of
// rows (a type's rows in a partition).
type PartSampler struct {
	rows  int
	prob  []float32
	alias []int32
	list  []int32 // nil: rows 0..rows-1
}

// NewPartSamplerRows draws from the rows of list, each by its degree
// deg[i] (len(deg) = len(list) > 0): its draws are list[j] where a
// NewPartSampler(deg) draws j.
func NewPartSamplerRows(list []int32, deg []int32) *PartSampler {
	ps := NewPartSampler(deg)
	ps.list = list
	return ps
}

// NewPartSampler draws rows 0..len(deg)-1, each by its degree deg[i].
func NewPartSampler(deg []int32) *PartSampler {
	n := len(deg)
	ps := &PartSampler{rows: n, prob: make([]float32, n), alias: make([]int32, n)}
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

// Uniform draws a row uniformly.
func (ps *PartSampler) Uniform(rng *rand.Rand) int32 { return ps.row(int32(rng.IntN(ps.rows))) }

// ByDegree draws a row with probability proportional to its degree + 1.
func (ps *PartSampler) ByDegree(rng *rand.Rand) int32 {
	i := rng.IntN(ps.rows)
	if rng.Float32() < ps.prob[i] {
		return ps.row(int32(i))
	}
	return ps.row(ps.alias[i])
}

func (ps *PartSampler) row(j int32) int32 {
	if ps.list != nil {
		return ps.list[j]
	}
	return j
}

// SeedChunk points src at the negatives of the chunk whose first edge is
// edge lo of its shuffled bucket: the bucket's seed (one draw of the
// bucket's generator, before the shuffle) and lo name the generator, so
// that a bucket's chunks can be sampled in any order, on any number of
// goroutines, and every engine draws the same nodes for the same chunk.
func SeedChunk(src *rand.PCG, bucketSeed uint64, lo int) {
	src.Seed(bucketSeed, mix64(ChunkStream^uint64(lo)))
}

// mix64 is SplitMix64's finaliser: nearby chunks get unrelated streams.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// The stream constants the engines seed their generators with (the second
// argument of rand.NewPCG, so that generators seeded alike still differ
// by purpose).
const (
	// ChunkStream seeds a chunk's negatives (SeedChunk).
	ChunkStream = 0x63686e6b // "chnk"
	// WorkerStream seeds a CPU worker's generator before its first chunk
	// (from seed+w+1); every chunk then reseeds it (SeedChunk).
	WorkerStream = 0x776b7273 // "wkrs"
	// RelationStream seeds the initial relation embeddings.
	RelationStream = 0x72656c73 // "rels"
)

// InitRelations returns the initial relation embeddings of rels relations
// at dimension d for score function m (rels rows of m.RelWidth(d) floats),
// and their Adagrad state (zeros):
//   - DistMult: 1 ± 0.1; ComplEx: 1 ± 0.1 for the real halves, ±0.1 for the
//     imaginary halves (near the identity, as DistMult and ComplEx start);
//   - TransE: zeros (PBG's translation);
//   - RotatE: phases uniform in [−π, π) (Sun et al. 2019);
//   - a PBG pair: both operators as PBG initialises them (initOperator).
//
// Dot and the pairs with the none operator have none (nil).
func InitRelations(m workload.Model, rels, d int, seed int64) (emb, state []float32) {
	if !m.UsesRelations() {
		return nil, nil
	}
	w := m.RelWidth(d)
	n := rels * w
	emb, state = make([]float32, n), make([]float32, n)
	rng := rand.New(rand.NewPCG(uint64(seed), RelationStream))
	switch {
	case m == workload.DistMult || m == workload.ComplEx:
		for i := range emb {
			emb[i] = 1 + 0.1*(2*rng.Float32()-1)
		}
		if m == workload.ComplEx {
			half := d / 2
			for r := 0; r < rels; r++ {
				for k := half; k < d; k++ {
					emb[r*d+k] = 0.1 * (2*rng.Float32() - 1)
				}
			}
		}
	case m == workload.TransEL1 || m == workload.TransEL2:
		// zeros
	case m == workload.RotatE:
		for i := range emb {
			emb[i] = float32(math.Pi * (2*rng.Float64() - 1))
			if emb[i] >= math.Pi { // float32 rounding up to π: the same phase
				emb[i] = -math.Pi
			}
		}
	default: // a PBG pair: [g | h], each as PBG starts it
		ow := workload.OperatorWidth(m.Operator(), d)
		for r := 0; r < rels; r++ {
			initOperator(m.Operator(), d, emb[r*w:r*w+ow])
			initOperator(m.Operator(), d, emb[r*w+ow:(r+1)*w])
		}
	}
	return emb, state
}

// initOperator writes PBG's initial parameters of one operator o at
// dimension d into p (workload.OperatorWidth(o, d) floats, zeroed):
// diagonal ones; translation zeros; linear the identity; affine the
// identity then a zero bias; complex_diagonal real parts one, imaginary
// parts zero (torchbiggraph/operators.py).
func initOperator(o workload.Operator, d int, p []float32) {
	switch o {
	case workload.OpDiagonal:
		for i := range p {
			p[i] = 1
		}
	case workload.OpLinear, workload.OpAffine:
		for j := 0; j < d; j++ {
			p[j*d+j] = 1
		}
	case workload.OpComplexDiagonal:
		for k := 0; k < d/2; k++ {
			p[k] = 1
		}
	}
}

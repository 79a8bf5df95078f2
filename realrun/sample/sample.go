// Package sample holds the random choices every training engine makes the
// same way: the order a bucket's edges are trained in, the negatives a
// chunk shares (uniform or by degree, from the bucket's two partitions),
// the initial relation embeddings, and the stream constants their
// generators are seeded with, so that the CPU and GPU engines train the
// same edges in the same order against the same negatives.
package sample

import (
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
type NegativeSampler struct {
	frac float64
	samp []*PartSampler // per partition
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

// Draw fills rows (local rows) and side (true: the destination partition
// di) for one chunk; len(rows) = len(side) is the number of negatives.
func (ns *NegativeSampler) Draw(rng *rand.Rand, si, di int, rows []int32, side []bool) {
	for k := range rows {
		sd := k%2 == 1
		ps := ns.samp[si]
		if sd {
			ps = ns.samp[di]
		}
		if rng.Float64() < ns.frac {
			rows[k] = ps.ByDegree(rng)
		} else {
			rows[k] = ps.Uniform(rng)
		}
		side[k] = sd
	}
}

// PartSampler draws the nodes of one partition (or of a whole graph)
// uniformly or by degree (alias
// method over its rows' degrees).
type PartSampler struct {
	rows  int
	prob  []float32
	alias []int32
}

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

func (ps *PartSampler) Uniform(rng *rand.Rand) int32 { return int32(rng.IntN(ps.rows)) }

func (ps *PartSampler) ByDegree(rng *rand.Rand) int32 {
	i := rng.IntN(ps.rows)
	if rng.Float32() < ps.prob[i] {
		return int32(i)
	}
	return ps.alias[i]
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

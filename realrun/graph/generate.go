package graph

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
)

// Parameters of the planted structure of Generate.
const (
	// DegreeExponent is the power-law exponent α of the degree tail:
	// P(degree = k) ∝ k^-α. The node weights θ are Pareto with tail index
	// α-1 = 1.1 (P(θ > x) = x^-1.1 for x ≥ 1), so θ has a finite mean and an
	// infinite variance, like the degrees of Twitter and LiveJournal.
	DegreeExponent = 2.1
	// CommunityAffinity is μ, the probability that an edge's destination is
	// drawn from its target community rather than from the whole graph.
	CommunityAffinity = 0.8
	// RelationStride is the stride of the relation maps: relation r sends
	// community c to (c + RelationStride·r + 1) mod K.
	RelationStride = 7
	// MaxNodes is the largest node count Generate accepts (ids are stored as
	// int32 while generating).
	MaxNodes = math.MaxInt32
)

// Communities returns K, the number of planted communities of a generated
// graph with n nodes: clamp(round(√n / 4), 4, 1000).
func Communities(n int64) int {
	return int(min(1000, max(4, math.Round(math.Sqrt(float64(n))/4))))
}

// TargetCommunity returns the community that an edge with relation rel from a
// node of community c aims at, in a graph with k communities and the given
// number of relations. With one relation it is c itself (homophily). With
// several, each relation is a map between communities, c ↦ (c + 7·rel + 1)
// mod k; for a fixed relation this is a shift, hence a bijection, so the
// relation is identifiable from (community(src), community(dst)). Any fixed
// bijection would do; distinct relations may share a shift when there are more
// relations than communities.
func TargetCommunity(c int32, rel int64, relations int, k int) int32 {
	if relations <= 1 {
		return c
	}
	return int32((int64(c) + RelationStride*rel + 1) % int64(k))
}

// Generate streams the preset's p.Edges edges to emit, in a seeded random
// order, using memory O(p.Nodes) and never O(p.Edges). Edge ids are dense:
// src, dst in [0, p.Nodes), rel in [0, p.Relations). It returns emit's first
// error unchanged, or an error for an invalid preset (fewer than
// MinScaledNodes or more than MaxNodes nodes, negative edges, fewer than one
// relation).
//
// The graph is a degree-corrected stochastic block model, so that link
// prediction is learnable:
//
//   - K = Communities(p.Nodes) communities. Node v belongs to community
//     v mod K after a seeded shuffle of the nodes, so communities have equal
//     sizes (±1) and scattered ids.
//   - Each node has a weight θ_v drawn from a Pareto distribution with tail
//     index DegreeExponent-1 = 1.1, truncated at √|V| (θ ∈ [1, √|V|)). The
//     truncation plays the role of the structural cutoff of scale-free graphs:
//     it keeps a hub's expected degree far below |V|, so duplicate edges stay
//     rare, while the maximum degree is still tens of times the mean.
//   - An edge draws src ∝ θ. Its relation is uniform over [0, R) (uniform
//     rather than Zipf: every relation gets about E/R edges to learn from).
//     Its target community is TargetCommunity(community(src), rel, R, K): src's
//     own for R = 1, a relation-specific shift for R > 1. With probability
//     μ = CommunityAffinity the dst is drawn ∝ θ among the target community's
//     nodes, otherwise ∝ θ among all nodes. So a fraction of about μ + (1-μ)/K
//     of the edges land in their target community.
//   - Self loops are redrawn (the whole dst choice is repeated). Duplicate
//     edges are allowed and are not removed: removing them would need O(E)
//     memory.
//
// Sampling uses Vose alias tables, O(1) per draw: one over the K communities
// (weighted by their θ mass) and one per community over its members (total
// size |V|). Drawing a community by mass and then a member by θ is exactly a
// draw ∝ θ over all nodes, so no separate global table is needed. Steady
// memory is 12 bytes per node, peak about 24.
//
// All randomness comes from one PCG stream seeded by seed: the same preset and
// seed give the same edges in the same order on every platform.
func Generate(p Preset, seed int64, emit func(src, rel, dst int64) error) error {
	if emit == nil {
		return errors.New("graph: Generate: nil emit function")
	}
	m, err := newModel(p, seed)
	if err != nil {
		return err
	}
	return m.run(p.Edges, emit)
}

// validate reports whether Generate can build p.
func (p Preset) validate() error {
	switch {
	case p.Nodes < MinScaledNodes || p.Nodes > MaxNodes:
		return fmt.Errorf("graph: preset %q: %d nodes, want between %d and %d", p.Name, p.Nodes, MinScaledNodes, int64(MaxNodes))
	case p.Edges < 0:
		return fmt.Errorf("graph: preset %q: negative edge count %d", p.Name, p.Edges)
	case p.Relations < 1:
		return fmt.Errorf("graph: preset %q: %d relations, want at least 1", p.Name, p.Relations)
	}
	return nil
}

// aliasEntry is one slot of a Vose alias table: a uniform slot is drawn, then
// node is taken with probability thresh/2^32 and alias otherwise. Keeping the
// node ids in the slot makes a draw one memory access.
type aliasEntry struct {
	thresh uint32
	node   int32
	alias  int32
}

// draw picks a slot and the coin from one 64-bit random number: the high word
// of r·n is the slot (bias n/2^64), the top of the low word is the coin.
func draw(t []aliasEntry, r uint64) int32 {
	hi, lo := bits.Mul64(r, uint64(len(t)))
	e := &t[hi]
	if uint32(lo>>32) < e.thresh {
		return e.node
	}
	return e.alias
}

// buildAlias fills t (len(t) == len(nodes) == len(w)) with Vose's alias table
// for drawing nodes[i] with probability proportional to w[i] > 0. prob and
// work are scratch of at least len(w).
func buildAlias(t []aliasEntry, nodes []int32, w []float64, prob []float64, work []int32) {
	n := len(w)
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	// work holds the "small" stack growing up from 0 and the "large"
	// stack growing down from n.
	ns, nl := 0, n
	for i, x := range w {
		prob[i] = x * float64(n) / sum
		if prob[i] < 1 {
			work[ns] = int32(i)
			ns++
		} else {
			nl--
			work[nl] = int32(i)
		}
	}
	for ns > 0 && nl < n {
		ns--
		l := work[ns]
		g := work[nl]
		nl++
		t[l] = aliasEntry{thresh: threshold(prob[l]), node: nodes[l], alias: nodes[g]}
		prob[g] = (prob[g] + prob[l]) - 1
		if prob[g] < 1 {
			work[ns] = g
			ns++
		} else {
			nl--
			work[nl] = g
		}
	}
	// What is left has probability 1 up to rounding.
	for _, i := range work[:ns] {
		t[i] = aliasEntry{thresh: math.MaxUint32, node: nodes[i], alias: nodes[i]}
	}
	for _, i := range work[nl:n] {
		t[i] = aliasEntry{thresh: math.MaxUint32, node: nodes[i], alias: nodes[i]}
	}
}

func threshold(p float64) uint32 {
	x := p * (1 << 32)
	if !(x < math.MaxUint32) { // also catches NaN
		return math.MaxUint32
	}
	if x < 0 {
		return 0
	}
	return uint32(x)
}

// model is a built generator: the alias tables and the random stream.
type model struct {
	pcg       *rand.PCG // the stream; called directly in the hot loop
	k         int
	relations int
	comms     []aliasEntry // over communities, weighted by θ mass
	members   []aliasEntry // per-community tables, back to back
	offset    []int64      // community c's table is members[offset[c]:offset[c+1]]
}

func newPCG(seed int64) *rand.PCG {
	return rand.NewPCG(uint64(seed), 0x67726170685f6765) // "graph_ge"
}

// assignCommunities returns the community of each node (v mod k after a
// shuffle) drawn from rng.
func assignCommunities(rng *rand.Rand, n int64, k int) []int32 {
	comm := make([]int32, n)
	for v := range comm {
		comm[v] = int32(v % k)
	}
	rng.Shuffle(len(comm), func(i, j int) { comm[i], comm[j] = comm[j], comm[i] })
	return comm
}

// drawWeights returns θ_v for every node: truncated Pareto on [1, h) with
// tail index DegreeExponent-1, by inversion.
func drawWeights(rng *rand.Rand, n int64) []float32 {
	a := DegreeExponent - 1
	h := math.Sqrt(float64(n))
	span := 1 - math.Pow(h, -a)
	theta := make([]float32, n)
	for v := range theta {
		theta[v] = float32(math.Pow(1-rng.Float64()*span, -1/a))
	}
	return theta
}

// newModel draws the communities and the weights and builds the tables. The
// draws happen in a fixed order (shuffle, then weights), so the tests can
// rebuild the communities of a seed.
func newModel(p Preset, seed int64) (*model, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	pcg := newPCG(seed)
	rng := rand.New(pcg)
	n, k := p.Nodes, Communities(p.Nodes)
	comm := assignCommunities(rng, n, k)
	theta := drawWeights(rng, n)

	// Group nodes by community (counting sort, ids ascending within one).
	offset := make([]int64, k+1)
	for _, c := range comm {
		offset[c+1]++
	}
	for c := range k {
		offset[c+1] += offset[c]
	}
	members := make([]int32, n)
	next := append([]int64(nil), offset[:k]...)
	for v, c := range comm {
		members[next[c]] = int32(v)
		next[c]++
	}
	comm = nil // not needed any more: a draw knows its community

	largest := int64(0)
	for c := range k {
		largest = max(largest, offset[c+1]-offset[c])
	}
	w := make([]float64, largest)
	prob := make([]float64, max(largest, int64(k)))
	work := make([]int32, max(largest, int64(k)))
	m := &model{
		pcg:       pcg,
		k:         k,
		relations: p.Relations,
		members:   make([]aliasEntry, n),
		offset:    offset,
	}
	mass := make([]float64, k)
	for c := range k {
		nodes := members[offset[c]:offset[c+1]]
		wc := w[:len(nodes)]
		for i, v := range nodes {
			wc[i] = float64(theta[v])
			mass[c] += wc[i]
		}
		buildAlias(m.members[offset[c]:offset[c+1]], nodes, wc, prob, work)
	}
	ids := make([]int32, k)
	for c := range ids {
		ids[c] = int32(c)
	}
	m.comms = make([]aliasEntry, k)
	buildAlias(m.comms, ids, mass, prob, work)
	return m, nil
}

func (m *model) in(c int32) int32 {
	return draw(m.members[m.offset[c]:m.offset[c+1]], m.pcg.Uint64())
}

func (m *model) run(edges int64, emit func(src, rel, dst int64) error) error {
	mu := CommunityAffinity
	affinity := uint64(mu * 0x1p64)
	rng := m.pcg
	for range edges {
		c := draw(m.comms, rng.Uint64())
		src := m.in(c)
		rel := int64(0)
		if m.relations > 1 {
			// Uniform on [0, R): high word of r·R, bias R/2^64.
			hi, _ := bits.Mul64(rng.Uint64(), uint64(m.relations))
			rel = int64(hi)
		}
		target := TargetCommunity(c, rel, m.relations, m.k)
		var dst int32
		for {
			if rng.Uint64() < affinity {
				dst = m.in(target)
			} else {
				dst = m.in(draw(m.comms, rng.Uint64()))
			}
			if dst != src {
				break
			}
		}
		if err := emit(int64(src), rel, int64(dst)); err != nil {
			return err
		}
	}
	return nil
}

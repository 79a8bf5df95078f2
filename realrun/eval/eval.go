package eval

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// The evaluation protocols (Options.Protocol).
const (
	// Auto ranks Filtered up to Options.FilteredMaxNodes nodes and
	// Sampled above.
	Auto = "auto"
	// Filtered ranks the true node against every node, the other known
	// partners of the query left out.
	Filtered = "filtered"
	// Sampled ranks the true node against Options.Uniform uniform and
	// Options.ByDegree degree-weighted sampled nodes.
	Sampled = "sampled"
)

// ParseProtocol reads a protocol name, in any case: auto, filtered or
// sampled. It is the one place a protocol name is read.
func ParseProtocol(s string) (string, error) {
	switch p := strings.ToLower(s); p {
	case Auto, Filtered, Sampled:
		return p, nil
	}
	return "", fmt.Errorf("%q: want auto, filtered or sampled", s)
}

// ErrStopped is returned by Evaluate when Options.Stop closes before the
// evaluation finishes.
var ErrStopped = errors.New("evaluation stopped before it finished")

// Options choose how to evaluate.
type Options struct {
	// Protocol is Filtered, Sampled, or Auto ("" too): graphs with at
	// most FilteredMaxNodes nodes are ranked filtered against all nodes,
	// larger ones against sampled negatives (Marius §5.1: 1,000 uniform +
	// 1,000 by degree). ParseProtocol reads it.
	Protocol          string
	FilteredMaxNodes  int64
	Uniform, ByDegree int
	// MaxEdges caps the edges evaluated (a seeded sample).
	MaxEdges int
	Workers  int
	Seed     int64
	// Split is the split ranked: store.Valid or store.Test (the zero
	// value, store.Train, means store.Test).
	Split store.Split
	// Memory is the evaluation's memory budget in bytes (0:
	// DefaultMemory()): the partition buffers, the gathered rows, the
	// query vectors, the score blocks and the known partners of the
	// evaluated edges must fit in it. Errors name it by the field of a
	// run that sets it, {EvalMemory}.
	Memory int64
	// Progress, if not nil, is called as evaluation advances: phase is
	// "reading rows", "filtering" or "ranking", done of total its steps
	// (partitions, or buckets when filtering).
	Progress func(phase string, done, total int)
	// Stop, once closed, ends the evaluation at once (within one
	// partition, bucket or block of queries): Evaluate returns ErrStopped
	// and no result. Evaluation only reads, so nothing is left behind.
	Stop <-chan struct{}
}

// Choice is the protocol an evaluation ranks with and how it was chosen.
type Choice struct {
	// Protocol is Filtered or Sampled.
	Protocol string
	// Auto says the node count chose it (Options.Protocol Auto): Nodes
	// against FilteredMaxNodes.
	Auto                    bool
	Nodes, FilteredMaxNodes int64
	// Edges are the edges ranked (Options.MaxEdges of the split at most).
	Edges int
	// FilteredMemory, when Auto chose Sampled, is the smallest memory
	// budget filtered ranking of the same edges would accept, in bytes:
	// its working set and one partition buffer (filtered ranking plans
	// for two when they fit; and a typed store's resident table), the known partners of the ranked edges left
	// out (they are only known once every bucket is read). Budget is the
	// budget the evaluation has (Options.Memory, or DefaultMemory).
	FilteredMemory, Budget int64
}

// Choose says which protocol Evaluate ranks split opt.Split of st with,
// and, when Auto chose Sampled, what filtered ranking would need.
func Choose(st *store.Store, opt Options) (Choice, error) {
	p := opt.Protocol
	if p == "" {
		p = Auto
	}
	p, err := ParseProtocol(p)
	if err != nil {
		return Choice{}, fmt.Errorf("evaluation protocol %w", err)
	}
	n := st.M.Test
	if opt.Split == store.Valid {
		n = st.M.Valid
	}
	if opt.MaxEdges > 0 {
		n = min(n, int64(opt.MaxEdges))
	}
	c := Choice{Protocol: p, Nodes: st.M.Nodes, FilteredMaxNodes: opt.FilteredMaxNodes, Edges: int(n), Budget: opt.Memory}
	if c.Budget <= 0 {
		c.Budget = DefaultMemory()
	}
	if p == Auto {
		c.Auto, c.Protocol = true, Filtered
		if st.M.Nodes > opt.FilteredMaxNodes {
			c.Protocol = Sampled
			c.FilteredMemory = filteredWorking(st, 2*n, max(opt.Workers, 1)) + st.M.PartitionBytes + st.M.ResidentBytes()
		}
	}
	return c, nil
}

// DefaultEval is the evaluation of the papers.
var DefaultEval = Options{FilteredMaxNodes: 100_000, Uniform: 1000, ByDegree: 1000, MaxEdges: 10_000, Workers: 2, Split: store.Test}

// SplitName is "valid" or "test".
func SplitName(sp store.Split) string {
	if sp == store.Valid {
		return "valid"
	}
	return "test"
}

// ParseSplit reads "valid" or "test".
func ParseSplit(s string) (store.Split, error) {
	switch s {
	case "valid":
		return store.Valid, nil
	case "test":
		return store.Test, nil
	}
	return 0, fmt.Errorf("split %q: want test or valid", s)
}

// DefaultMemory is the evaluation memory budget when none is given: a
// quarter of the machine's memory, at least 2 GiB.
func DefaultMemory() int64 {
	const floor = 2 << 30
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return floor
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return max(floor, kb*1024/4)
			}
		}
	}
	return floor
}

// Evaluate ranks the edges of the split opt.Split with the embeddings of
// the store's current checkpoint, out of core: only the rows the edges
// (and the sampled candidates) need are gathered, and filtered ranking
// streams the partitions through at most two partition buffers, all
// within opt.Memory.
func Evaluate(st *store.Store, kind workload.Model, rel []float32, degrees []int32, opt Options) (realrun.Quality, error) {
	sp := opt.Split
	if sp == store.Train {
		sp = store.Test
	}
	opt.Split = sp
	choice, err := Choose(st, opt)
	if err != nil {
		return realrun.Quality{}, err
	}
	if realrun.Stopped(opt.Stop) {
		return realrun.Quality{}, ErrStopped
	}
	edges, err := st.ReadSplit(sp)
	if err != nil {
		return realrun.Quality{}, err
	}
	if len(edges) == 0 {
		return realrun.Quality{}, fmt.Errorf("no %s edges to evaluate", SplitName(sp))
	}
	if w := kind.RelWidth(st.M.Dim); kind.UsesRelations() && len(rel) < st.M.Relations*w {
		return realrun.Quality{}, fmt.Errorf("evaluation: %d relation floats for %d relations of %d floats (%s, d=%d)", len(rel), st.M.Relations, w, kind, st.M.Dim)
	}
	rng := rand.New(rand.NewPCG(uint64(opt.Seed), 0x6576616c)) // "eval"
	if opt.MaxEdges > 0 && len(edges) > opt.MaxEdges {
		rng.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
		edges = edges[:opt.MaxEdges]
	}
	q := realrun.Quality{Edges: len(edges), Split: SplitName(sp), Auto: choice.Auto, FilteredMemory: choice.FilteredMemory}
	r := &ranker{st: st, kind: kind, rel: rel, d: st.M.Dim, workers: max(opt.Workers, 1), memory: choice.Budget, progress: opt.Progress, stop: opt.Stop}
	if r.types, err = loadTypes(st); err != nil {
		return realrun.Quality{}, err
	}
	if r.progress == nil {
		r.progress = func(string, int, int) {}
	}
	var ranks []float64
	var places []int
	if choice.Protocol == Filtered {
		q.Mode = Filtered
		ranks, places, err = r.filtered(edges)
	} else {
		q.Mode, q.Uniform, q.ByDegree = Sampled, opt.Uniform, opt.ByDegree
		ranks, places, err = r.sampled(edges, degrees, opt.Uniform, opt.ByDegree, rng)
	}
	if err != nil {
		return realrun.Quality{}, err
	}
	for i, rk := range ranks {
		q.Baseline += RandomMRR(places[i])
		q.MRR += 1 / rk
		if rk <= 1 {
			q.HitsAt1++
		}
		if rk <= 3 {
			q.HitsAt3++
		}
		if rk <= 10 {
			q.HitsAt10++
		}
	}
	q.MemoryBudget, q.MemoryBytes = r.memory, r.used
	n := float64(len(ranks))
	q.MRR, q.HitsAt1, q.HitsAt3, q.HitsAt10, q.Baseline = q.MRR/n, q.HitsAt1/n, q.HitsAt3/n, q.HitsAt10/n, q.Baseline/n
	return q, nil
}

// RandomMRR is the expected reciprocal rank of a node ranked uniformly at
// random among k places: H_k / k, with the harmonic number H_k summed
// exactly up to 64 and from its asymptotic series beyond (error < 1e-12).
func RandomMRR(k int) float64 {
	if k <= 0 {
		return 0
	}
	var h float64
	if k <= 64 {
		for i := 1; i <= k; i++ {
			h += 1 / float64(i)
		}
	} else {
		x := float64(k)
		h = math.Log(x) + eulerGamma + 1/(2*x) - 1/(12*x*x) + 1/(120*x*x*x*x)
	}
	return h / float64(k)
}

// eulerGamma is the Euler–Mascheroni constant.
const eulerGamma = 0.57721566490153286

// relVec is relation r's parameters (kind.RelWidth(d) floats), nil for a
// model without relation parameters.
func relVec(kind workload.Model, rel []float32, d int, r int32) []float32 {
	if !kind.UsesRelations() {
		return nil
	}
	w := kind.RelWidth(d)
	return rel[int(r)*w : int(r+1)*w]
}

// rankBlock is how many queries filtered ranking scores at once: one
// matrix product of a block of query vectors with a partition's
// embeddings reads the partition once per block instead of once per
// query.
const rankBlock = 32

// ranker evaluates one split of one store within a memory budget.
type ranker struct {
	st      *store.Store
	kind    workload.Model
	rel     []float32
	d       int
	workers int
	memory  int64
	// used is the most memory the evaluation planned for at once: its
	// working set and partition buffers (reported in Quality).
	used     int64
	progress func(phase string, done, total int)
	// stop, once closed, ends the evaluation with ErrStopped.
	stop <-chan struct{}
	// types are a typed store's node types (nil: untyped): a query's
	// candidates are then the nodes of its side's type only.
	types *typing
}

// typing is what ranking needs of a typed store's entity types: the type
// of every store node, the nodes of each type, and each relation's lhs
// and rhs types.
type typing struct {
	of    []uint16
	count []int64
	rel   [][2]int
}

// loadTypes reads a typed store's node types (nil, nil for an untyped
// one).
func loadTypes(st *store.Store) (*typing, error) {
	if !st.M.Typed() {
		return nil, nil
	}
	of, err := st.NodeTypes()
	if err != nil {
		return nil, err
	}
	ty := &typing{of: of, count: make([]int64, len(st.M.Types)), rel: st.M.RelationTypes}
	for _, t := range of {
		ty.count[t]++
	}
	return ty, nil
}

// cand is the type of the candidates of side side (0: destinations, the
// relation's rhs type; 1: sources, its lhs type) of edge e.
func (ty *typing) cand(e store.Edge, side int) uint16 {
	return uint16(ty.rel[e.Rel][1-side])
}

// typeBytes is the memory the node types take while ranking (none for an
// untyped store).
func typeBytes(st *store.Store) int64 {
	if !st.M.Typed() {
		return 0
	}
	return 2 * st.M.Nodes
}

// scoreRows is the most candidate rows filtered ranking and queries score
// a block of queries against at once: a partition's, or up to 8,192 of
// the resident table's (chunks of it when it is larger than a
// partition).
func scoreRows(m store.Manifest) int64 {
	if m.Resident == 0 {
		return m.Rows
	}
	return max(m.Rows, min(m.Resident, 8192))
}

// ScoreRows is scoreRows for queries (realrun/query).
func ScoreRows(m store.Manifest) int64 { return scoreRows(m) }

// stopped reports whether the evaluation is to stop.
func (r *ranker) stopped() bool { return realrun.Stopped(r.stop) }

// mb is a byte count for messages, in MB (10^6 bytes), or kB below one.
func mb(b int64) string {
	if b < 1e6 {
		return fmt.Sprintf("%.1f kB", float64(b)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(b)/1e6)
}

// budget checks that the working set plus at least one partition buffer
// fits the memory budget and returns how many partition buffers do
// (Budget).
func (r *ranker) budget(working int64, what string) (int, error) {
	nbuf, used, err := Budget(r.st, r.memory, working, "evaluation", what, "{EvalMemory}")
	r.used = max(r.used, used)
	return nbuf, err
}

// gather reads the embedding rows of the given nodes (Gather).
func (r *ranker) gather(nodes []int32, nbuf int) (*rows, error) {
	return Gather(r.st, nodes, nbuf, r.stop, func(done, total int) { r.progress("reading rows", done, total) })
}

// stream reads the given partitions of the current checkpoint (Stream),
// ending with ErrStopped once r.stop closes.
func (r *ranker) stream(parts []int, nbuf int, phase string, fn func(p int, emb []float32) error) error {
	return Stream(r.st, parts, nbuf, r.stop, func(done, total int) { r.progress(phase, done, total) }, fn)
}

// sampled ranks every edge on both sides against the same sampled
// candidates: opt.Uniform uniform and opt.ByDegree degree-weighted nodes
// (Marius §5.1), gathering only their rows and the edges'.
//
// In a typed store each candidate type (a type some ranked side of the
// edges has) draws its own candidates from its nodes, uniformly and by
// degree, the types in index order from the same stream; a side is ranked
// against its type's.
func (r *ranker) sampled(edges []store.Edge, degrees []int32, uniform, byDegree int, rng *rand.Rand) ([]float64, []int, error) {
	d := r.d
	m := uniform + byDegree
	var ids []int32
	var off []int // typed: type t's candidates are ids[off[t]:off[t]+m]
	if r.types == nil {
		ps := sample.NewPartSampler(degrees)
		ids = make([]int32, m)
		for k := range ids {
			if k < uniform {
				ids[k] = ps.Uniform(rng)
			} else {
				ids[k] = ps.ByDegree(rng)
			}
		}
	} else {
		ids, off = r.sampleTyped(edges, degrees, uniform, byDegree, rng)
	}
	need := append(slices.Clone(ids), endpoints(edges)...)
	working := int64(len(ids)*d*4) + int64(len(need)*(d*4+24)) + int64(len(edges))*2*16 + typeBytes(r.st)
	nbuf, err := r.budget(working, fmt.Sprintf("%d candidates and %d edges", len(ids), len(edges)))
	if err != nil {
		return nil, nil, err
	}
	g, err := r.gather(need, nbuf)
	if err != nil {
		return nil, nil, err
	}
	all := make([]float32, len(ids)*d)
	for k, v := range ids {
		copy(all[k*d:(k+1)*d], g.row(v))
	}
	cands := func(e store.Edge, side int) []float32 {
		if off == nil {
			return all
		}
		o := off[r.types.cand(e, side)]
		return all[o*d : (o+m)*d]
	}
	ranks, places := make([]float64, 2*len(edges)), make([]int, 2*len(edges))
	var wg sync.WaitGroup
	var cut atomic.Bool // a worker stopped before its last edge
	r.progress("ranking", 0, 1)
	for w := 0; w < r.workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i, k := w, 0; i < len(edges); i, k = i+r.workers, k+1 {
				if k%32 == 0 && r.stopped() {
					cut.Store(true)
					return
				}
				e := edges[i]
				s, rv, dd := g.row(e.Src), relVec(r.kind, r.rel, d, e.Rel), g.row(e.Dst)
				for side := 0; side < 2; side++ {
					higher, equal := model.RankCounts(r.kind, d, s, rv, dd, model.Side(side), cands(e, side), m, nil)
					ranks[2*i+side] = 1 + float64(higher) + float64(equal)/2
					places[2*i+side] = m + 1
				}
			}
		}(w)
	}
	wg.Wait()
	if cut.Load() {
		return nil, nil, ErrStopped
	}
	r.progress("ranking", 1, 1)
	return ranks, places, nil
}

// sampleTyped draws the candidates of every type some side of the edges
// ranks against: for each such type in index order, uniform then
// byDegree of its nodes (by their degrees). off[t] is where type t's m
// candidates start in ids (-1 for a type not drawn).
func (r *ranker) sampleTyped(edges []store.Edge, degrees []int32, uniform, byDegree int, rng *rand.Rand) (ids []int32, off []int) {
	ty := r.types
	off = make([]int, len(ty.count))
	for t := range off {
		off[t] = -1
	}
	for _, e := range edges {
		for side := 0; side < 2; side++ {
			off[ty.cand(e, side)] = 0
		}
	}
	m := uniform + byDegree
	for t := range off {
		if off[t] < 0 || ty.count[t] == 0 {
			continue
		}
		members := make([]int32, 0, ty.count[t])
		deg := make([]int32, 0, ty.count[t])
		for v, vt := range ty.of {
			if int(vt) == t {
				members = append(members, int32(v))
				deg = append(deg, degrees[v])
			}
		}
		ps := sample.NewPartSampler(deg)
		off[t] = len(ids)
		for k := 0; k < m; k++ {
			if k < uniform {
				ids = append(ids, members[ps.Uniform(rng)])
			} else {
				ids = append(ids, members[ps.ByDegree(rng)])
			}
		}
	}
	return ids, off
}

// endpoints are the nodes of the edges (with repeats).
func endpoints(edges []store.Edge) []int32 {
	out := make([]int32, 0, 2*len(edges))
	for _, e := range edges {
		out = append(out, e.Src, e.Dst)
	}
	return out
}

// query is one side of one evaluated edge: its query vector scored against
// every node, the node that is the true answer, its score, and the known
// partners to skip (sorted, the true node among them).
type query struct {
	// at is the query's index among the edges' (edge at/2, side at%2),
	// typ its candidates' type (typed stores).
	at            int
	typ           uint16
	self          int32
	ts            float32
	skip          []int32
	higher, equal int64
}

// filtered ranks every edge on both sides against every node, skipping
// the other known partners (filtered ranking), one partition at a time.
// Queries are scored in blocks against each partition by model.Scores
// (one matrix product for dot, cos, l2 and squared_l2, plus the rows'
// norms; the pairwise kernel for l1 and modulus_l1). A query's true score
// is computed by the same function on a 1×1 block, whose every element is
// the same arithmetic wherever it lies in the block, so the true node and
// a candidate with equal embeddings tie exactly as in one product against
// every node.
//
// In a typed store a query's candidates are the nodes of its side's type
// (the relation's rhs type for destinations, lhs for sources): the
// queries are scored in blocks of one candidate type where they can be,
// a block is scored only against partitions (or the resident table) that
// hold nodes of its types, and the nodes of other types are not counted.
func (r *ranker) filtered(edges []store.Edge) ([]float64, []int, error) {
	st, d := r.st, r.d
	nq := 2 * len(edges)
	working := filteredWorking(st, int64(nq), r.workers)
	nbuf, err := r.budget(working, fmt.Sprintf("%d queries", nq))
	if err != nil {
		return nil, nil, err
	}
	g, err := r.gather(endpoints(edges), nbuf)
	if err != nil {
		return nil, nil, err
	}
	// order: the queries (qi: edge qi/2, side qi%2) in the order they are
	// scored, by candidate type in a typed store.
	order := make([]int, nq)
	for qi := range order {
		order[qi] = qi
	}
	ty := r.types
	if ty != nil {
		slices.SortStableFunc(order, func(a, b int) int {
			return int(ty.cand(edges[a/2], a%2)) - int(ty.cand(edges[b/2], b%2))
		})
	}
	cmp := r.kind.Comparator()
	Q := make([]float32, nq*d)
	qs := make([]query, nq)
	keys := make(map[[2]int64][]int32, nq)
	for at, qi := range order {
		e := edges[qi/2]
		row := Q[at*d : (at+1)*d]
		copy(row, model.Query(r.kind, d, g.row(e.Src), relVec(r.kind, r.rel, d, e.Rel), g.row(e.Dst), model.Side(qi%2), row))
		q := &qs[at]
		q.at, q.self = qi, e.Dst
		if qi%2 == 1 {
			q.self = e.Src
		}
		if ty != nil {
			q.typ = ty.cand(e, qi%2)
		}
		var ts [1]float32
		model.Scores(cmp, d, 1, 1, row, g.row(q.self), nil, ts[:])
		q.ts = ts[0]
		keys[queryKey(e, qi%2)] = nil
	}
	g = nil
	partners, err := r.knownPartners(keys)
	if err != nil {
		return nil, nil, err
	}
	var held int64
	for _, p := range partners {
		held += int64(len(p))*4 + 48
	}
	if _, err := r.budget(working+held, fmt.Sprintf("%d queries and their %s of known partners", nq, mb(held))); err != nil {
		return nil, nil, err
	}
	for at := range qs {
		q := &qs[at]
		ps := partners[queryKey(edges[q.at/2], q.at%2)]
		if i, ok := slices.BinarySearch(ps, q.self); !ok {
			ps = slices.Insert(slices.Clone(ps), i, q.self)
		}
		q.skip = ps
	}
	parts := make([]int, st.M.P)
	for p := range parts {
		parts[p] = p
	}
	if ty != nil {
		// Only the partitions (all or none: partitioned types share them)
		// and the resident table that hold some query's candidates.
		var part, res bool
		for _, q := range qs {
			if st.M.Types[q.typ].Partitioned {
				part = true
			} else {
				res = true
			}
		}
		if !part {
			parts = parts[:0]
		}
		if res {
			parts = append(parts, store.ResidentPart)
		}
	}
	blocks := (nq + rankBlock - 1) / rankBlock
	S := make([][]float32, r.workers)
	var normBuf []float32
	chunk := scoreRows(st.M)
	present := make([]int64, 0)
	if ty != nil {
		present = make([]int64, len(ty.count))
	}
	err = r.stream(parts, nbuf, "ranking", func(p int, emb []float32) error {
		first, _ := Span(st.M, p)
		for c := int64(0); c*chunk*int64(d) < int64(len(emb)); c++ {
			rows := emb[c*chunk*int64(d) : min((c+1)*chunk*int64(d), int64(len(emb)))]
			lo := first + c*chunk
			if ty != nil {
				clear(present)
				for _, t := range ty.of[lo : lo+int64(len(rows)/d)] {
					present[t]++
				}
			}
			if err := r.rankRows(qs, Q, S, &normBuf, int32(lo), rows, present, blocks); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	ranks, places := make([]float64, nq), make([]int, nq)
	for _, q := range qs {
		ranks[q.at] = 1 + float64(q.higher) + float64(q.equal)/2
		n := st.M.Nodes
		if ty != nil {
			n = ty.count[q.typ]
		}
		places[q.at] = int(n) - len(q.skip) + 1
	}
	return ranks, places, nil
}

// rankRows counts, for every query, the candidates among emb (the rows
// of store nodes lo, lo+1, …) scoring above and equal to its true node,
// its known partners left out, in blocks of queries shared among the
// workers (S their score blocks). present (typed stores only, else empty)
// counts the rows of each type: a query counts only the rows of its type,
// and a block none of whose queries' types is present is not scored.
func (r *ranker) rankRows(qs []query, Q []float32, S [][]float32, normBuf *[]float32, lo int32, emb []float32, present []int64, blocks int) error {
	d := r.d
	nq := len(qs)
	m := len(emb) / d
	if m == 0 {
		return nil
	}
	cmp := r.kind.Comparator()
	*normBuf = slices.Grow((*normBuf)[:0], m)[:m]
	norms := model.Norms(cmp, d, m, emb, *normBuf)
	var of []uint16
	if r.types != nil {
		of = r.types.of[lo : int(lo)+m]
	}
	var next sync.Mutex
	b := 0
	var wg sync.WaitGroup
	var cut atomic.Bool // a worker stopped before the last block
	for w := 0; w < r.workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			if len(S[w]) < rankBlock*m {
				S[w] = make([]float32, rankBlock*m)
			}
			for {
				next.Lock()
				blk := b
				b++
				next.Unlock()
				if blk >= blocks {
					return
				}
				if r.stopped() {
					cut.Store(true)
					return
				}
				qlo, qhi := blk*rankBlock, min((blk+1)*rankBlock, nq)
				if of != nil && !slices.ContainsFunc(qs[qlo:qhi], func(q query) bool { return present[q.typ] > 0 }) {
					continue
				}
				n := qhi - qlo
				sc := S[w][:n*m]
				model.Scores(cmp, d, n, m, Q[qlo*d:qhi*d], emb, norms, sc)
				for qi := qlo; qi < qhi; qi++ {
					q := &qs[qi]
					scores := sc[(qi-qlo)*m : (qi-qlo+1)*m]
					ts := q.ts
					var higher, equal int64
					switch {
					case of == nil || present[q.typ] == int64(m):
						for _, v := range scores {
							if v >= ts {
								if v > ts {
									higher++
								} else {
									equal++
								}
							}
						}
					case present[q.typ] == 0:
						continue
					default:
						// Rows of several types: only the query's count.
						for j, v := range scores {
							if v >= ts && of[j] == q.typ {
								if v > ts {
									higher++
								} else {
									equal++
								}
							}
						}
					}
					// Take the skipped nodes of these rows back out (they
					// are of the query's type: edges join their relation's
					// types).
					i, _ := slices.BinarySearch(q.skip, lo)
					for ; i < len(q.skip) && q.skip[i] < lo+int32(m); i++ {
						switch v := scores[q.skip[i]-lo]; {
						case v > ts:
							higher--
						case v == ts:
							equal--
						}
					}
					q.higher += higher
					q.equal += equal
				}
			}
		}(w)
	}
	wg.Wait()
	if cut.Load() {
		return ErrStopped
	}
	return nil
}

// filteredWorking is the memory filtered ranking of nq queries (two per
// edge) with the given workers plans for beside its partition buffers
// and the known partners: the query vectors, gathered rows and per-query
// counts, the workers' score blocks, a partition's candidate norms, and
// one bucket being filtered.
func filteredWorking(st *store.Store, nq int64, workers int) int64 {
	rows := scoreRows(st.M)
	return nq*int64(st.M.Dim)*4*2 + nq*(24+8) +
		int64(workers)*rankBlock*rows*4 + rows*4 +
		maxBucket(st)*12*2 + typeBytes(st)
}

// queryKey is the key of a query's known partners: (src, rel) for
// candidates as destinations (side 0), (-1-dst, rel) for candidates as
// sources.
func queryKey(e store.Edge, side int) [2]int64 {
	if side == 0 {
		return [2]int64{int64(e.Src), int64(e.Rel)}
	}
	return [2]int64{-1 - int64(e.Dst), int64(e.Rel)}
}

// maxBucket is the most training edges in one bucket.
func maxBucket(st *store.Store) int64 {
	var n int64
	for _, row := range st.M.Buckets {
		for _, b := range row {
			n = max(n, b)
		}
	}
	return max(n, st.M.Valid, st.M.Test)
}

// knownPartners streams every known edge (the training buckets one at a
// time, then the validation and test splits) and keeps, for each of the
// given keys only, the partners the key's queries must skip, sorted and
// without repeats: memory grows with the evaluated edges' partners, not
// with the graph.
func (r *ranker) knownPartners(keys map[[2]int64][]int32) (map[[2]int64][]int32, error) {
	st := r.st
	add := func(e store.Edge) {
		if ps, ok := keys[[2]int64{int64(e.Src), int64(e.Rel)}]; ok {
			keys[[2]int64{int64(e.Src), int64(e.Rel)}] = append(ps, e.Dst)
		}
		if ps, ok := keys[[2]int64{-1 - int64(e.Dst), int64(e.Rel)}]; ok {
			keys[[2]int64{-1 - int64(e.Dst), int64(e.Rel)}] = append(ps, e.Src)
		}
	}
	total := st.M.P*st.M.P + 2
	done := 0
	r.progress("filtering", 0, total)
	for i := 0; i < st.M.P; i++ {
		for j := 0; j < st.M.P; j++ {
			if r.stopped() {
				return nil, ErrStopped
			}
			edges, err := st.ReadBucket(i, j)
			if err != nil {
				return nil, err
			}
			for _, e := range edges {
				add(e)
			}
			done++
			if done%st.M.P == 0 {
				r.progress("filtering", done, total)
			}
		}
	}
	for _, sp := range []store.Split{store.Valid, store.Test} {
		edges, err := st.ReadSplit(sp)
		if err != nil {
			return nil, err
		}
		for _, e := range edges {
			add(e)
		}
		done++
	}
	r.progress("filtering", done, total)
	for k, ps := range keys {
		slices.Sort(ps)
		keys[k] = slices.Compact(ps)
	}
	return keys, nil
}

// None is the Quality.Mode of an epoch that was not evaluated.
const None = "none"

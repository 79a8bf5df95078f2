package query

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// Metric is how Neighbors compares two nodes' embeddings.
type Metric string

// The metrics, and Score: a relation's score function (the model's).
const (
	// Cos is the cosine similarity (higher is nearer).
	Cos Metric = "cos"
	// Dot is the dot product (higher is nearer).
	Dot Metric = "dot"
	// L2 is the Euclidean distance (lower is nearer).
	L2 Metric = "l2"
	// Score is the work directory's score function of (head, relation,
	// tail), higher is better: Neighbors with a relation, and Predict.
	Score Metric = "score"
)

// ParseMetric reads "cos", "dot" or "l2".
func ParseMetric(s string) (Metric, error) {
	switch m := Metric(s); m {
	case Cos, Dot, L2:
		return m, nil
	}
	return "", fmt.Errorf("metric %q: want cos, dot or l2", s)
}

// Index is how candidates are searched.
type Index string

// The searches.
const (
	// Exact scores every node, streaming the partitions once (out of
	// core).
	Exact Index = "exact"
	// HNSW searches an approximate nearest-neighbour index
	// (github.com/coder/hnsw) built in memory from every embedding, and
	// rescores its candidates exactly.
	HNSW Index = "hnsw"
)

// ParseIndex reads "exact" or "hnsw".
func ParseIndex(s string) (Index, error) {
	switch i := Index(s); i {
	case Exact, HNSW:
		return i, nil
	}
	return "", fmt.Errorf("index %q: want exact or hnsw", s)
}

// DefaultK is the answers per query when Options.K is 0.
const DefaultK = 10

// Options say what to read and how.
type Options struct {
	// Workdir is the trained work directory.
	Workdir string
	// Checkpoint is the checkpoint read, its partitions and relation
	// parameters, found as realrun eval finds it (job.ResolveCheckpoint):
	// job.CheckpointLast ("" too), the current one, or job.CheckpointBest,
	// the copy of the best epoch's that a run with --keep best keeps.
	Checkpoint string
	// K is the answers per query (0: DefaultK).
	K int
	// Memory is the memory budget in bytes (0: eval.DefaultMemory()): the
	// query rows, the top-k lists, the score blocks, the relabelling and
	// at least one partition buffer must fit it; the partitions are
	// streamed through it.
	Memory int64
	// MemoryName names the budget in errors (e.g. a flag, "--memory";
	// "": "the memory budget").
	MemoryName string
	// Workers score blocks of queries in parallel (0: 1).
	Workers int
	// Index is Exact ("" too) or HNSW.
	Index Index
	// Seed seeds the HNSW index's random levels.
	Seed int64
	// EfSearch is the HNSW search's candidate list (0: DefaultEfSearch).
	EfSearch int
	// Progress, if not nil, is called as the partitions are read: phase
	// is "reading rows", "searching" or "indexing".
	Progress func(phase string, done, total int)
	// Stop, once closed, ends the search before the next partition with
	// eval.ErrStopped.
	Stop <-chan struct{}
}

// Hit is one answer: a node by its input name and its score (the
// metric's value: cos, dot, l2 distance, or the model's score).
type Hit struct {
	Rank  int     `json:"rank"`
	Node  string  `json:"node"`
	Score float64 `json:"score"`
}

// Answer is the answer to one query.
type Answer struct {
	// Query is the query as written: a node for Neighbors, "head
	// relation ?" and the like for Predict.
	Query    string `json:"query"`
	Head     string `json:"head"`
	Relation string `json:"relation,omitempty"`
	Tail     string `json:"tail,omitempty"`
	// Type is, in a typed work directory, the entity type of the
	// candidates (the hits, or a triple's tails): the relation's rhs type
	// for tails, its lhs type for heads, the node's own type for nearest
	// neighbours.
	Type string `json:"type,omitempty"`
	// Hits are the best K candidates, best first (not for a triple).
	Hits []Hit `json:"hits,omitempty"`
	// Score is a triple's score; Rank the tail's raw rank among all
	// Candidates nodes as tails of (head, relation, ?): 1 + the nodes
	// that score higher + half those that tie, unfiltered (other known
	// tails of the head are counted).
	Score      *float64 `json:"score,omitempty"`
	Rank       float64  `json:"rank,omitempty"`
	Candidates int64    `json:"candidates,omitempty"`
}

// Result is the answers of one call, with what was read.
type Result struct {
	Workdir    string `json:"workdir"`
	Checkpoint string `json:"checkpoint"`
	Model      string `json:"model"`
	Dim        int    `json:"dim"`
	Nodes      int64  `json:"nodes"`
	// Metric is the metric of Neighbors without a relation, else Score.
	Metric  Metric   `json:"metric"`
	Index   Index    `json:"index"`
	K       int      `json:"k"`
	Answers []Answer `json:"answers"`
	// MemoryBytes is the most memory planned at once (rows, lists, score
	// blocks, partition buffers or the index), MemoryBudget the budget.
	MemoryBytes  int64   `json:"memory_bytes"`
	MemoryBudget int64   `json:"memory_budget"`
	Seconds      float64 `json:"seconds"`
	// IndexSeconds is the time the HNSW index took to build (in Seconds).
	IndexSeconds float64 `json:"index_seconds,omitempty"`
}

// Row is one line of the flat table of a Result: a hit of a query, or a
// triple with its rank.
type Row struct {
	Query string `json:"query"`
	// Rank is a hit's place (1 to K), or a triple's raw rank (a half for
	// ties).
	Rank  string  `json:"rank"`
	Node  string  `json:"node"`
	Score float64 `json:"score"`
}

// Rows flattens the answers: one row per hit, and for a triple one row
// with its tail, score and raw rank.
func (r *Result) Rows() []Row {
	var out []Row
	for _, a := range r.Answers {
		if a.Score != nil {
			out = append(out, Row{Query: a.Query, Rank: strconv.FormatFloat(a.Rank, 'f', -1, 64), Node: a.Tail, Score: *a.Score})
			continue
		}
		for _, h := range a.Hits {
			out = append(out, Row{Query: a.Query, Rank: strconv.Itoa(h.Rank), Node: h.Node, Score: h.Score})
		}
	}
	return out
}

// Recall is the share of the exact search's hits that the approximate one
// found too, over all answers of the same queries (recall@k).
func Recall(exact, approx *Result) float64 {
	var found, total int
	for i, a := range exact.Answers {
		if i >= len(approx.Answers) {
			break
		}
		got := map[string]bool{}
		for _, h := range approx.Answers[i].Hits {
			got[h.Node] = true
		}
		for _, h := range a.Hits {
			total++
			if got[h.Node] {
				found++
			}
		}
	}
	if total == 0 {
		return 1
	}
	return float64(found) / float64(total)
}

// Neighbors answers, for each node named, its K nearest nodes by the
// metric, itself excluded — or, with a relation, its K best tails of
// (node, relation, ?) under the work directory's score function (the
// node itself among the candidates).
func Neighbors(o Options, nodes []string, metric Metric, relation string) (*Result, error) {
	if len(nodes) == 0 {
		return nil, inputerr.Errorf("no node to search from")
	}
	qs := make([]Question, len(nodes))
	for i, n := range nodes {
		qs[i] = Question{Head: n, Relation: relation, Tail: Unknown}
	}
	if relation == "" {
		if _, err := ParseMetric(string(metric)); err != nil {
			return nil, inputerr.Errorf("%w", err)
		}
	} else {
		metric = Score
	}
	return run(o, qs, metric)
}

// Predict answers the questions of a query file (ParseQueries): the K best
// tails of "head relation ?", the K best heads of "? relation tail", and
// the score and raw rank of a triple "head relation tail", under the work
// directory's score function.
func Predict(o Options, qs []Question) (*Result, error) {
	if len(qs) == 0 {
		return nil, inputerr.Errorf("no query")
	}
	return run(o, qs, Score)
}

// run opens the work directory, resolves the names and searches.
func run(o Options, qs []Question, metric Metric) (*Result, error) {
	start := time.Now()
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.K < 1 {
		return nil, inputerr.Errorf("k %d: must be at least 1", o.K)
	}
	if o.Index == "" {
		o.Index = Exact
	}
	if _, err := ParseIndex(string(o.Index)); err != nil {
		return nil, inputerr.Errorf("%w", err)
	}
	if o.Memory < 0 {
		return nil, inputerr.Errorf("memory budget %d: must be positive", o.Memory)
	}
	if o.Memory == 0 {
		o.Memory = eval.DefaultMemory()
	}
	if o.MemoryName == "" {
		o.MemoryName = "the memory budget"
	}
	o.Workers = max(o.Workers, 1)
	if o.Progress == nil {
		o.Progress = func(string, int, int) {}
	}
	// The store opened reads the checkpoint chosen (a view of it for the
	// best), so its current directory is the one every read streams.
	t, err := job.OpenTrainedCheckpoint(o.Workdir, o.Checkpoint)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	st := t.Store
	res := &Result{Workdir: st.Dir, Checkpoint: t.Checkpoint(), Model: string(t.Model), Dim: st.M.Dim, Nodes: st.M.Nodes,
		Metric: metric, Index: o.Index, K: o.K, MemoryBudget: o.Memory}
	s := &searcher{o: o, st: st, kind: t.Model, rel: t.Relations, metric: metric, res: res}
	if err := s.resolve(qs); err != nil {
		return nil, err
	}
	if err := s.search(); err != nil {
		return nil, err
	}
	if err := s.answer(); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// searcher is one call's state: the questions resolved to store ids,
// their query vectors and their top-k lists.
type searcher struct {
	o      Options
	st     *store.Store
	kind   workload.Model
	rel    []float32
	metric Metric
	res    *Result

	qs []Question
	// known is the store id of each question's given node (the head, or
	// the tail of a Heads question), target a triple's tail (else -1),
	// exclude the node left out of the candidates (else -1), relIdx the
	// relation (-1 without).
	known, target, exclude, relIdx []int32
	perm                           []int32
	// q are the query vectors (len(qs) × d): a candidate's score is its
	// dot product with q (cos: with q normalised, divided by the
	// candidate's norm; l2: from |q|², |c|² and the product).
	q     []float32
	qn2   []float32
	lists []topK
	// ts, higher, equal: a triple's score and its tail's rank counts.
	ts            []float32
	higher, equal []int64
	// of is a typed work directory's node types by store id (nil:
	// untyped), ctype each question's candidate type: only nodes of it
	// are candidates.
	of    []uint16
	ctype []uint16
}

// resolve checks the questions against the model and maps their names to
// store ids.
func (s *searcher) resolve(qs []Question) error {
	st := s.st
	s.qs = qs
	uses := s.kind.UsesRelations()
	relNames, err := relationNames(st)
	if err != nil {
		return err
	}
	n := len(qs)
	s.known, s.target, s.exclude, s.relIdx = make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	want := map[string]int64{}
	for _, q := range qs {
		switch {
		case q.Relation == "" && uses && s.metric == Score:
			return inputerr.Errorf("%s%q: the model %s scores (head, relation, tail): write head relation tail", q.where(), q.String(), s.kind)
		case q.Relation != "" && !uses && q.File != "":
			return inputerr.Errorf("%s%q: the model %s has no relations (it scores head·tail): write head tail", q.where(), q.String(), s.kind)
		case q.Relation != "" && !uses:
			return inputerr.Errorf("relation %q: the model %s has no relations (it scores head·tail)", q.Relation, s.kind)
		}
		for _, name := range []string{q.Head, q.Tail} {
			if name != Unknown {
				want[name] = -1
			}
		}
	}
	if st.M.Typed() {
		return s.resolveTyped(relNames)
	}
	if err := lookupNodes(st, want); err != nil {
		return err
	}
	for _, q := range qs {
		for _, name := range []string{q.Head, q.Tail} {
			if name != Unknown && want[name] < 0 {
				return inputerr.Errorf("%sunknown node %q: not in %s", q.where(), name, idsPath(st))
			}
		}
	}
	s.perm, err = st.Permutation()
	if err != nil {
		return err
	}
	id := func(name string) int32 { return s.perm[want[name]] }
	for i, q := range qs {
		s.target[i], s.exclude[i], s.relIdx[i] = -1, -1, -1
		if q.Relation != "" {
			r := slices.Index(relNames, q.Relation)
			if r < 0 {
				return inputerr.Errorf("%sunknown relation %q: not in %s", q.where(), q.Relation, relationsPath(st))
			}
			s.relIdx[i] = int32(r)
		}
		switch q.Kind() {
		case Tails:
			s.known[i] = id(q.Head)
		case Heads:
			s.known[i] = id(q.Tail)
		case Triple:
			s.known[i], s.target[i] = id(q.Head), id(q.Tail)
		}
		if s.metric != Score {
			s.exclude[i] = s.known[i]
		}
	}
	return nil
}

// relVec is relation r's parameters (nil without).
func (s *searcher) relVec(r int32) []float32 {
	if r < 0 || !s.kind.UsesRelations() {
		return nil
	}
	w := s.kind.RelWidth(s.st.M.Dim)
	return s.rel[int(r)*w : int(r+1)*w]
}

// side is the side whose candidates question i ranks.
func (s *searcher) side(i int) model.Side {
	if s.qs[i].Kind() == Heads {
		return model.SrcSide
	}
	return model.DstSide
}

// vectors gathers the given nodes' rows and builds the query vectors.
func (s *searcher) vectors(nbuf int) error {
	st, d := s.st, s.st.M.Dim
	need := slices.Clone(s.known)
	for _, t := range s.target {
		if t >= 0 {
			need = append(need, t)
		}
	}
	g, err := eval.Gather(st, need, nbuf, s.o.Stop, func(done, total int) { s.o.Progress("reading rows", done, total) })
	if err != nil {
		return err
	}
	n := len(s.qs)
	s.q, s.qn2 = make([]float32, n*d), make([]float32, n)
	s.ts, s.higher, s.equal = make([]float32, n), make([]int64, n), make([]int64, n)
	for i := range s.qs {
		row := s.q[i*d : (i+1)*d]
		v := g.Row(s.known[i])
		switch s.metric {
		case Score:
			side := s.side(i)
			if side == model.SrcSide {
				copy(row, model.Query(s.kind, d, nil, s.relVec(s.relIdx[i]), v, side, row))
			} else {
				copy(row, model.Query(s.kind, d, v, s.relVec(s.relIdx[i]), nil, side, row))
			}
		default:
			copy(row, v)
		}
		var n2 float64
		for _, x := range row {
			n2 += float64(x) * float64(x)
		}
		if s.metric == Cos && n2 > 0 {
			inv := float32(1 / sqrt(n2))
			for k := range row {
				row[k] *= inv
			}
		}
		s.qn2[i] = float32(n2)
		if t := s.target[i]; t >= 0 {
			s.ts[i] = s.one(row, g.Row(t))
		}
	}
	return nil
}

// working is the memory the search holds besides partition buffers: the
// relabelling, the gathered rows and query vectors, the top-k lists, the
// per-query counts and the score blocks.
func (s *searcher) working() int64 {
	n, d, k := int64(len(s.qs)), int64(s.st.M.Dim), int64(s.o.K)
	rows := eval.ScoreRows(s.st.M)
	w := 4*s.st.M.Nodes + // relabelling
		n*d*4*3 + n*(8+24*4) + // rows (with the triples' tails) and query vectors, ids and counts
		n*k*8 + // top-k lists
		int64(s.o.Workers)*int64(min(len(s.qs), blockQueries))*rows*4 + // score blocks
		rows*4 // candidate norms of a partition
	if s.st.M.Typed() {
		w += 2 * s.st.M.Nodes // node types
	}
	return w
}

// search finds every question's candidates, exactly or through the index.
func (s *searcher) search() error {
	s.lists = make([]topK, len(s.qs))
	for i := range s.lists {
		s.lists[i] = topK{k: s.o.K}
	}
	what := fmt.Sprintf("%d queries, k=%d", len(s.qs), s.o.K)
	if len(s.qs) == 1 {
		what = fmt.Sprintf("1 query, k=%d", s.o.K)
	}
	nbuf, used, err := eval.Budget(s.st, s.o.Memory, s.working(), "query", what, s.o.MemoryName)
	if err != nil {
		return err
	}
	s.res.MemoryBytes = used
	if err := s.vectors(nbuf); err != nil {
		return err
	}
	if s.o.Index == HNSW {
		return s.searchIndex()
	}
	return s.scan(nbuf)
}

// answer names the hits and triples' nodes and fills the result.
func (s *searcher) answer() error {
	st := s.st
	// Store ids of every hit, mapped back to input ids through the
	// relabelling, then named from ids.tsv read once.
	inv := map[int32]int64{}
	for _, l := range s.lists {
		for _, c := range l.items {
			inv[c.id] = -1
		}
	}
	for in, v := range s.perm {
		if _, ok := inv[v]; ok {
			inv[v] = int64(in)
		}
	}
	ids := map[int64]string{}
	for _, in := range inv {
		ids[in] = ""
	}
	if err := nameNodes(st, ids); err != nil {
		return err
	}
	if s.of != nil {
		for id, line := range ids {
			if _, name, ok := strings.Cut(line, "\t"); ok {
				ids[id] = name // a typed ids.tsv's "type<TAB>name"
			}
		}
	}
	for i, q := range s.qs {
		a := Answer{Query: q.String(), Head: q.Head, Relation: q.Relation, Tail: q.Tail}
		if s.metric != Score {
			a.Query, a.Tail = q.Head, ""
		}
		candidates := st.M.Nodes
		if s.of != nil {
			a.Type = st.M.Types[s.ctype[i]].Name
			candidates = st.M.Types[s.ctype[i]].Nodes
		}
		if q.Kind() == Triple {
			sc := float64(s.ts[i])
			a.Score, a.Candidates = &sc, candidates
			a.Rank = 1 + float64(s.higher[i]) + float64(s.equal[i])/2
		} else {
			items := s.lists[i].sorted(func(id int32) int64 { return inv[id] })
			for r, c := range items {
				a.Hits = append(a.Hits, Hit{Rank: r + 1, Node: ids[inv[c.id]], Score: s.value(i, c.key)})
			}
		}
		s.res.Answers = append(s.res.Answers, a)
	}
	return nil
}

// value is the metric's value of a candidate from its ranking key: the
// l2 distance from -(|c|² - 2q·c), else the key itself.
func (s *searcher) value(i int, key float32) float64 {
	if s.metric == L2 {
		return sqrt(max(0, float64(s.qn2[i])-float64(key)))
	}
	return float64(key)
}

// idsPath and relationsPath are the name tables of the work directory.
func idsPath(st *store.Store) string       { return filepath.Join(st.Dir, "ids.tsv") }
func relationsPath(st *store.Store) string { return filepath.Join(st.Dir, "relations.tsv") }

func sqrt(x float64) float64 { return math.Sqrt(x) }

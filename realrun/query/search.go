package query

import (
	"cmp"
	"slices"
	"sync"

	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/model"
)

// blockQueries is how many queries are scored against a partition at
// once: one matrix product of a block of query vectors with the
// partition's embeddings, as filtered evaluation ranks.
const blockQueries = 32

// cand is a candidate: its ranking key (higher is better) and store id.
type cand struct {
	key float32
	id  int32
}

// worse orders candidates: the lower key, or on a tie the higher id.
func worse(a, b cand) bool { return a.key < b.key || a.key == b.key && a.id > b.id }

// topK keeps the k best candidates offered, as a heap whose root is the
// worst kept.
type topK struct {
	k     int
	items []cand
}

// offer keeps c if it is among the k best so far.
func (t *topK) offer(c cand) {
	if len(t.items) < t.k {
		t.items = append(t.items, c)
		for i := len(t.items) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(t.items[i], t.items[p]) {
				break
			}
			t.items[i], t.items[p] = t.items[p], t.items[i]
			i = p
		}
		return
	}
	if !worse(t.items[0], c) {
		return
	}
	t.items[0] = c
	n := len(t.items)
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && worse(t.items[l], t.items[m]) {
			m = l
		}
		if r := l + 1; r < n && worse(t.items[r], t.items[m]) {
			m = r
		}
		if m == i {
			return
		}
		t.items[i], t.items[m] = t.items[m], t.items[i]
		i = m
	}
}

// sorted returns the kept candidates best first, ties by input id (in).
func (t *topK) sorted(in func(id int32) int64) []cand {
	out := slices.Clone(t.items)
	slices.SortFunc(out, func(a, b cand) int {
		if c := cmp.Compare(b.key, a.key); c != 0 {
			return c
		}
		return cmp.Compare(in(a.id), in(b.id))
	})
	return out
}

// scan streams every partition once through nbuf buffers (and a typed
// work directory's resident table, in chunks of eval.ScoreRows rows) and
// scores every question's candidates in it, by blocks of queries.
func (s *searcher) scan(nbuf int) error {
	st, d := s.st, s.st.M.Dim
	n := len(s.qs)
	blocks := (n + blockQueries - 1) / blockQueries
	S := make([][]float32, s.o.Workers)
	var norm []float32
	chunk := eval.ScoreRows(st.M) * int64(d)
	return eval.Stream(st, eval.AllParts(st.M), nbuf, s.o.Stop, func(done, total int) { s.o.Progress("searching", done, total) }, func(p int, all []float32) error {
		first, _ := eval.Span(st.M, p)
		for c := int64(0); c*chunk < int64(len(all)); c++ {
			s.scanRows(int32(first+c*chunk/int64(d)), all[c*chunk:min((c+1)*chunk, int64(len(all)))], blocks, S, &norm)
		}
		return nil
	})
}

// scanRows scores every question against the rows emb of store nodes lo,
// lo+1, … (S the workers' score blocks).
func (s *searcher) scanRows(lo int32, emb []float32, blocks int, S [][]float32, normBuf *[]float32) {
	d := s.st.M.Dim
	n := len(s.qs)
	m := len(emb) / d
	if m == 0 {
		return
	}
	norm := s.norms(emb, m, *normBuf)
	*normBuf = norm
	var next sync.Mutex
	b := 0
	var wg sync.WaitGroup
	for w := 0; w < s.o.Workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			if len(S[w]) < min(n, blockQueries)*m {
				S[w] = make([]float32, min(n, blockQueries)*m)
			}
			for {
				next.Lock()
				blk := b
				b++
				next.Unlock()
				if blk >= blocks {
					return
				}
				qlo, qhi := blk*blockQueries, min((blk+1)*blockQueries, n)
				sc := S[w][:(qhi-qlo)*m]
				s.block(qhi-qlo, m, s.q[qlo*d:qhi*d], emb, norm, sc)
				for i := qlo; i < qhi; i++ {
					s.take(i, lo, sc[(i-qlo)*m:(i-qlo+1)*m], norm)
				}
			}
		}(w)
	}
	wg.Wait()
}

// norms are what the metric needs of each candidate row besides its
// product with a query: 1/|c| for cos (0 for a zero row), |c|² for l2,
// and for Score what the model's comparator needs (model.Norms).
func (s *searcher) norms(emb []float32, m int, buf []float32) []float32 {
	d := s.st.M.Dim
	if s.metric == Score {
		if !model.NeedsNorms(s.kind.Comparator()) {
			return buf // the comparator needs none
		}
		return model.Norms(s.kind.Comparator(), d, m, emb, slices.Grow(buf[:0], m)[:m])
	}
	if s.metric != Cos && s.metric != L2 {
		return nil
	}
	buf = slices.Grow(buf[:0], m)[:m]
	for j := range buf {
		var n2 float64
		for _, x := range emb[j*d : (j+1)*d] {
			n2 += float64(x) * float64(x)
		}
		switch {
		case s.metric == L2:
			buf[j] = float32(n2)
		case n2 > 0:
			buf[j] = float32(1 / sqrt(n2))
		default:
			buf[j] = 0
		}
	}
	return buf
}

// key is a candidate's ranking key from its product v with the query:
// higher is better (l2: -(|c|² - 2q·c), which orders as -|q - c|²).
func (s *searcher) key(v float32, j int, norm []float32) float32 {
	switch s.metric {
	case Cos:
		return v * norm[j]
	case L2:
		return 2*v - norm[j]
	}
	return v
}

// take offers question i the candidates of one partition (first store id
// lo) given their products with its query vector; a triple counts the
// nodes scoring above and equal to its tail instead.
func (s *searcher) take(i int, lo int32, scores, norm []float32) {
	if t := s.target[i]; t >= 0 {
		ts := s.ts[i]
		var higher, equal int64
		for j, v := range scores {
			if v >= ts && lo+int32(j) != t && s.candidate(i, lo+int32(j)) {
				if v > ts {
					higher++
				} else {
					equal++
				}
			}
		}
		s.higher[i] += higher
		s.equal[i] += equal
		return
	}
	l, ex := &s.lists[i], s.exclude[i]
	for j, v := range scores {
		c := cand{s.key(v, j, norm), lo + int32(j)}
		if len(l.items) == l.k && !worse(l.items[0], c) || c.id == ex || !s.candidate(i, c.id) {
			continue
		}
		l.offer(c)
	}
}

// block sets out (b×m) to the scan's values of b query rows Q against m
// candidate rows C (norm: norms of C): for Score the model's comparator of
// each pair (model.Scores), else the products q·c that key turns into the
// metric.
func (s *searcher) block(b, m int, Q, C, norm, out []float32) {
	d := s.st.M.Dim
	if s.metric == Score {
		model.Scores(s.kind.Comparator(), d, b, m, Q, C, norm, out)
		return
	}
	clear(out[:b*m])
	model.SgemmNT(b, m, d, Q, C, out)
}

// one is the scan's value of one query row q against one candidate row c
// (block of 1×1), so that a triple's true score and a hit's score are the
// exact scan's.
func (s *searcher) one(q, c []float32) float32 {
	var v [1]float32
	s.block(1, 1, q, c, nil, v[:])
	return v[0]
}

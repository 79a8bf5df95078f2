package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// Options choose how to evaluate.
type Options struct {
	// Protocol is "filtered", "sampled", or "" (auto): graphs with at most
	// FilteredMaxNodes nodes are ranked filtered against all nodes, larger
	// ones against sampled negatives (Marius §5.1: 1,000 uniform + 1,000
	// by degree).
	Protocol          string
	FilteredMaxNodes  int64
	Uniform, ByDegree int
	// MaxEdges caps the test edges evaluated (a seeded sample).
	MaxEdges int
	Workers  int
	Seed     int64
}

// DefaultEval is the evaluation of the papers.
var DefaultEval = Options{FilteredMaxNodes: 100_000, Uniform: 1000, ByDegree: 1000, MaxEdges: 10_000, Workers: 2}

// LoadEmbeddings reads every partition's embeddings (not the Adagrad
// state) into one nodes×d matrix, checking each against its recorded
// checksum. These reads are not part of any epoch.
func LoadEmbeddings(st *store.Store) ([]float32, error) {
	d := st.M.Dim
	need := st.M.Nodes * int64(d) * 4
	if need > 8<<30 {
		return nil, fmt.Errorf("evaluation needs every embedding in memory: %d GB is too much", need>>30)
	}
	out := make([]float32, st.M.Nodes*int64(d))
	buf, err := st.NewBuffer()
	if err != nil {
		return nil, err
	}
	defer buf.Free()
	sums, err := st.PartitionSums(st.CurrentDir())
	if err != nil {
		return nil, err
	}
	for i := 0; i < st.M.P; i++ {
		if _, err := store.ReadPartitionChecked(st.CurrentDir(), i, buf, sums[i]); err != nil {
			return nil, err
		}
		lo := int64(i) * st.M.Rows
		hi := min(lo+st.M.Rows, st.M.Nodes)
		if lo < hi {
			copy(out[lo*int64(d):hi*int64(d)], buf.Floats()[:(hi-lo)*int64(d)])
		}
	}
	return out, nil
}

// Evaluate ranks the test edges with the trained embeddings.
func Evaluate(st *store.Store, kind workload.Model, rel []float32, degrees []int32, opt Options) (realrun.Quality, error) {
	test, err := st.ReadSplit(store.Test)
	if err != nil {
		return realrun.Quality{}, err
	}
	if len(test) == 0 {
		return realrun.Quality{}, fmt.Errorf("no test edges to evaluate")
	}
	emb, err := LoadEmbeddings(st)
	if err != nil {
		return realrun.Quality{}, err
	}
	d := st.M.Dim
	rng := rand.New(rand.NewPCG(uint64(opt.Seed), 0x6576616c)) // "eval"
	if opt.MaxEdges > 0 && len(test) > opt.MaxEdges {
		rng.Shuffle(len(test), func(i, j int) { test[i], test[j] = test[j], test[i] })
		test = test[:opt.MaxEdges]
	}
	q := realrun.Quality{Edges: len(test)}
	nodes := int(st.M.Nodes)
	var cand []float32
	var m int
	var truth map[[2]int64]map[int32]bool // (node, rel) → true partners, for filtering
	filtered := st.M.Nodes <= opt.FilteredMaxNodes
	switch opt.Protocol {
	case "filtered":
		filtered = true
	case "sampled":
		filtered = false
	}
	if filtered {
		q.Mode = "filtered"
		cand, m = emb, nodes
		truth, err = trueEdges(st)
		if err != nil {
			return realrun.Quality{}, err
		}
	} else {
		q.Mode, q.Uniform, q.ByDegree = "sampled", opt.Uniform, opt.ByDegree
		ps := sample.NewPartSampler(degrees)
		m = opt.Uniform + opt.ByDegree
		cand = make([]float32, m*d)
		for k := 0; k < m; k++ {
			var v int32
			if k < opt.Uniform {
				v = ps.Uniform(rng)
			} else {
				v = ps.ByDegree(rng)
			}
			copy(cand[k*d:(k+1)*d], emb[int(v)*d:int(v+1)*d])
		}
	}
	ranks := make([]float64, 2*len(test))
	places := make([]int, 2*len(test)) // k of each ranking, for the baseline
	workers := max(opt.Workers, 1)
	if truth != nil {
		rankFiltered(kind, d, emb, rel, test, truth, workers, ranks, places)
	} else {
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; i < len(test); i += workers {
					e := test[i]
					s, r, dd := emb[int(e.Src)*d:int(e.Src+1)*d], relVec(kind, rel, d, e.Rel), emb[int(e.Dst)*d:int(e.Dst+1)*d]
					for side := 0; side < 2; side++ {
						higher, equal := model.RankCounts(kind, d, s, r, dd, model.Side(side), cand, m, nil)
						ranks[2*i+side] = 1 + float64(higher) + float64(equal)/2
						places[2*i+side] = m + 1
					}
				}
			}(w)
		}
		wg.Wait()
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

// trueEdges indexes every known edge (train, valid, test) for filtered
// ranking: key (src, rel) → destinations, key (-1-dst, rel) → sources.
func trueEdges(st *store.Store) (map[[2]int64]map[int32]bool, error) {
	out := map[[2]int64]map[int32]bool{}
	add := func(e store.Edge) {
		k := [2]int64{int64(e.Src), int64(e.Rel)}
		if out[k] == nil {
			out[k] = map[int32]bool{}
		}
		out[k][e.Dst] = true
		k = [2]int64{-1 - int64(e.Dst), int64(e.Rel)}
		if out[k] == nil {
			out[k] = map[int32]bool{}
		}
		out[k][e.Src] = true
	}
	for i := 0; i < st.M.P; i++ {
		for j := 0; j < st.M.P; j++ {
			edges, err := st.ReadBucket(i, j)
			if err != nil {
				return nil, err
			}
			for _, e := range edges {
				add(e)
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
	}
	return out, nil
}

// relVec is relation r's embedding, nil for Dot.
func relVec(kind workload.Model, rel []float32, d int, r int32) []float32 {
	if !kind.UsesRelations() {
		return nil
	}
	return rel[int(r)*d : int(r+1)*d]
}

// rankBlock is how many queries filtered ranking scores at once: one
// matrix product of a block of query vectors with every node's embedding
// reads the embeddings once per block instead of once per query.
const rankBlock = 32

// rankFiltered ranks every test edge on both sides against every node,
// skipping the other known partners (filtered ranking). Queries are scored
// in blocks by one matrix product; a query's true score is read from the
// same product, so the true node and a candidate with equal embeddings
// score bit-identically.
func rankFiltered(kind workload.Model, d int, emb, rel []float32, test []store.Edge, truth map[[2]int64]map[int32]bool, workers int, ranks []float64, places []int) {
	m := len(emb) / d
	queries := 2 * len(test)
	blocks := (queries + rankBlock - 1) / rankBlock
	var next sync.Mutex
	b := 0
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			Q := make([]float32, rankBlock*d)
			S := make([]float32, rankBlock*m)
			excluded := make([]bool, m)
			for {
				next.Lock()
				blk := b
				b++
				next.Unlock()
				if blk >= blocks {
					return
				}
				lo, hi := blk*rankBlock, min((blk+1)*rankBlock, queries)
				for qi := lo; qi < hi; qi++ {
					e := test[qi/2]
					s, r, dd := emb[int(e.Src)*d:int(e.Src+1)*d], relVec(kind, rel, d, e.Rel), emb[int(e.Dst)*d:int(e.Dst+1)*d]
					row := Q[(qi-lo)*d : (qi-lo+1)*d]
					copy(row, model.Query(kind, d, s, r, dd, model.Side(qi%2), row))
				}
				n := hi - lo
				clear(S[:n*m])
				model.SgemmNT(n, m, d, Q[:n*d], emb, S[:n*m])
				for qi := lo; qi < hi; qi++ {
					e := test[qi/2]
					var partners map[int32]bool
					var self int32
					if qi%2 == 0 {
						partners, self = truth[[2]int64{int64(e.Src), int64(e.Rel)}], e.Dst
					} else {
						partners, self = truth[[2]int64{-1 - int64(e.Dst), int64(e.Rel)}], e.Src
					}
					excluded[self] = true
					for j := range partners {
						excluded[j] = true
					}
					scores := S[(qi-lo)*m : (qi-lo+1)*m]
					ts := scores[self]
					higher, equal := 0, 0
					for j, v := range scores {
						if v >= ts && !excluded[j] {
							if v > ts {
								higher++
							} else {
								equal++
							}
						}
					}
					excluded[self] = false
					for j := range partners {
						excluded[j] = false
					}
					skipped := len(partners)
					if !partners[self] {
						skipped++
					}
					ranks[qi] = 1 + float64(higher) + float64(equal)/2
					places[qi] = m - skipped + 1
				}
			}
		}()
	}
	wg.Wait()
}

// None is the Quality.Mode of an epoch that was not evaluated.
const None = "none"

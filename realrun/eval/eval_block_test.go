package eval

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// TestRankFilteredMatchesRankCounts: the blocked, matrix-product ranking
// gives every query the rank the one-query kernel gives it, skipping the
// same known partners.
func TestRankFilteredMatchesRankCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const nodes, d, rels = 301, 12, 3
	emb := make([]float32, nodes*d)
	rel := make([]float32, rels*d)
	for i := range emb {
		emb[i] = float32(rng.NormFloat64())
	}
	for i := range rel {
		rel[i] = float32(rng.NormFloat64())
	}
	var test []store.Edge
	truth := map[[2]int64]map[int32]bool{}
	add := func(e store.Edge) {
		for _, k := range [][2]int64{{int64(e.Src), int64(e.Rel)}, {-1 - int64(e.Dst), int64(e.Rel)}} {
			if truth[k] == nil {
				truth[k] = map[int32]bool{}
			}
		}
		truth[[2]int64{int64(e.Src), int64(e.Rel)}][e.Dst] = true
		truth[[2]int64{-1 - int64(e.Dst), int64(e.Rel)}][e.Src] = true
	}
	for i := 0; i < 200; i++ {
		e := store.Edge{Src: int32(rng.IntN(nodes)), Rel: int32(rng.IntN(rels)), Dst: int32(rng.IntN(nodes))}
		add(e)
		if i%3 == 0 {
			test = append(test, e)
		}
	}
	for _, kind := range workload.Models {
		ranks, places := make([]float64, 2*len(test)), make([]int, 2*len(test))
		rankFiltered(kind, d, emb, rel, test, truth, 3, ranks, places)
		for i, e := range test {
			s, r, dd := emb[int(e.Src)*d:int(e.Src+1)*d], relVec(kind, rel, d, e.Rel), emb[int(e.Dst)*d:int(e.Dst+1)*d]
			for side := 0; side < 2; side++ {
				partners, self := truth[[2]int64{int64(e.Src), int64(e.Rel)}], e.Dst
				if side == 1 {
					partners, self = truth[[2]int64{-1 - int64(e.Dst), int64(e.Rel)}], e.Src
				}
				skip := func(j int) bool { return int32(j) == self || partners[int32(j)] }
				higher, equal := model.RankCounts(kind, d, s, r, dd, model.Side(side), emb, nodes, skip)
				assert.Equal(t, 1+float64(higher)+float64(equal)/2, ranks[2*i+side], "%s edge %d side %d", kind, i, side)
				assert.Equal(t, nodes-len(partners)+1, places[2*i+side])
			}
		}
	}
}

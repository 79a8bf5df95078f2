package model

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestQueryScores: the comparator of the query and the true partner
// (Scores of a 1×1 block) is the edge's score, on both sides, for every
// model: for a named model both sides score f(s, r, d); for a PBG pair
// the destination side scores C(g(s), d) and the source side C(h(d), s).
func TestQueryScores(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	eachLevel(t, func(t *testing.T) {
		for _, k := range allModels() {
			d := 8
			s, r, dst := randVec(rng, d, 1), randVec(rng, max(k.RelWidth(d), 1), 1), randVec(rng, d, 1)
			q := make([]float32, d)
			var got [1]float32
			for _, side := range []Side{DstSide, SrcSide} {
				want := refScore(k, d, f64(s), f64(r), f64(dst), side)
				truth := dst
				if side == SrcSide {
					truth = s
				}
				Scores(k.Comparator(), d, 1, 1, Query(k, d, s, r, dst, side, q), truth, nil, got[:])
				assert.InDelta(t, want, float64(got[0]), 1e-5, "%s %s", k, side)
			}
			assert.InDelta(t, refScore(k, d, f64(s), f64(r), f64(dst), DstSide), float64(Score(k, s, r, dst)), 1e-5, "%s Score", k)
		}
	})
}

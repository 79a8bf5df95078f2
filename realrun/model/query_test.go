package model

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tierflow/tierflow/workload"
)

// TestQueryScores: the query's dot product with the true partner is the
// edge's score, on both sides, for every kind.
func TestQueryScores(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range workload.Models {
		d := 8
		s, r, dst := randVec(rng, d, 1), randVec(rng, d, 1), randVec(rng, d, 1)
		want := Score(k, s, r, dst)
		q := make([]float32, d)
		assert.InDelta(t, want, dot(Query(k, d, s, r, dst, DstSide, q), dst), 1e-5, "%s dst", k)
		assert.InDelta(t, want, dot(Query(k, d, s, r, dst, SrcSide, q), s), 1e-5, "%s src", k)
	}
}

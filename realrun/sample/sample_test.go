package sample_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
)

// The CPU engine draws its negatives through NegativeSampler: the same
// seed draws the same nodes, half of them from each side.
func TestNegativeSamplerSides(t *testing.T) {
	st := fixture.Prepare(t, "fb15k", 0.05, 2, 8, "dot")
	deg, err := st.Degrees()
	require.NoError(t, err)
	ns := sample.NewNegativeSampler(st, deg, 0.5)
	draw := func() ([]int32, []bool) {
		rows, side := make([]int32, 10), make([]bool, 10)
		ns.Draw(rand.New(rand.NewPCG(7, 8)), 0, 1, rows, side)
		return rows, side
	}
	r1, s1 := draw()
	r2, s2 := draw()
	assert.Equal(t, r1, r2)
	assert.Equal(t, s1, s2)
	for k, s := range s1 {
		assert.Equal(t, k%2 == 1, s)
		assert.Less(t, r1[k], int32(st.M.Rows))
	}
}

// A Shuffler's order does not depend on how Next cuts it, is a
// permutation, and puts each edge at each place about equally often.
func TestShufflerOrder(t *testing.T) {
	edges := func(n int) []store.Edge {
		e := make([]store.Edge, n)
		for i := range e {
			e[i] = store.Edge{Src: int32(i), Rel: int32(i % 3), Dst: int32(2 * i)}
		}
		return e
	}
	all := edges(1000)
	sample.Shuffle(all, rand.New(rand.NewPCG(1, 2)))
	for _, cut := range [][]int{{1000}, {1, 1, 998}, {7, 0, 500, 600}, {333, 333, 333, 333}} {
		got := edges(1000)
		s := sample.NewShuffler(got, rand.New(rand.NewPCG(1, 2)))
		var dealt []store.Edge
		for _, n := range cut {
			dealt = append(dealt, s.Next(n)...)
		}
		assert.Equal(t, all, got, "cut %v", cut)
		assert.Equal(t, all, dealt, "cut %v: what Next returned", cut)
	}
	seen := map[int32]bool{}
	for _, e := range all {
		seen[e.Src] = true
		assert.Equal(t, 2*e.Src, e.Dst, "an edge moves whole")
	}
	assert.Len(t, seen, 1000)
	// Edge 0's place over 4000 seeds, in 4 quarters: each near 1000
	// (a binomial's sd is 27; 5 sd allowed).
	var quarter [4]int
	for seed := range uint64(4000) {
		e := edges(40)
		sample.Shuffle(e, rand.New(rand.NewPCG(seed, 9)))
		for i, x := range e {
			if x.Src == 0 {
				quarter[i/10]++
			}
		}
	}
	for q, n := range quarter {
		assert.InDelta(t, 1000, n, 137, "quarter %d", q)
	}
}

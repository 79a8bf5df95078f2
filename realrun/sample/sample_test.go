package sample_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/sample"
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

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

// TestTypedNegativesOfTheirType: every negative DrawTyped draws is a node
// of the type its side asks for, in the table it names (the bucket's
// source or destination partition, or the resident table): for the
// user → user class one shared set alternating between the two
// partitions, for user → item the items from the resident table for the
// destination side and users of the source partition for the source
// side; uniformly and by degree. Every row of each table of the type is
// drawn at some point.
func TestTypedNegativesOfTheirType(t *testing.T) {
	st := fixture.PrepareTyped(t, 100, 40, 3000, 2, 8, "dot")
	deg, err := st.Degrees()
	require.NoError(t, err)
	types, err := st.NodeTypes()
	require.NoError(t, err)
	m := st.M
	pn := m.PartitionedNodes()
	typeOf := func(tab sample.Table, row int32, si, di int) uint16 {
		switch tab {
		case sample.SrcPart:
			require.Less(t, int64(row), m.Rows)
			return types[int64(si)*m.Rows+int64(row)]
		case sample.DstPart:
			require.Less(t, int64(row), m.Rows)
			return types[int64(di)*m.Rows+int64(row)]
		}
		require.Less(t, int64(row), m.Resident)
		return types[pn+int64(row)]
	}
	for _, frac := range []float64{0, 0.5, 1} {
		ns, err := sample.NewTypedNegativeSampler(&m, types, deg, frac)
		require.NoError(t, err)
		require.True(t, ns.Typed())
		const n = 64
		dr, sr := make([]int32, n), make([]int32, n)
		dt, stab := make([]sample.Table, n), make([]sample.Table, n)
		rng := rand.New(rand.NewPCG(1, 2))
		seenItems := map[int32]bool{}
		for _, b := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
			si, di := b[0], b[1]
			// user → user: shared, alternating.
			require.True(t, ns.Shared(0, 0))
			for range 20 {
				ns.DrawTyped(rng, si, di, 0, 0, dr, dt, sr, stab)
				for k := range dr {
					want := sample.SrcPart
					if k%2 == 1 {
						want = sample.DstPart
					}
					assert.Equal(t, want, dt[k])
					assert.Equal(t, uint16(0), typeOf(dt[k], dr[k], si, di), "shared negative %d", k)
				}
			}
			// user → item: two sets.
			require.False(t, ns.Shared(0, 1))
			for range 20 {
				ns.DrawTyped(rng, si, di, 0, 1, dr, dt, sr, stab)
				for k := range dr {
					assert.Equal(t, sample.Resident, dt[k])
					assert.Equal(t, uint16(1), typeOf(dt[k], dr[k], si, di), "destination negative %d", k)
					seenItems[dr[k]] = true
					assert.Equal(t, sample.SrcPart, stab[k])
					assert.Equal(t, uint16(0), typeOf(stab[k], sr[k], si, di), "source negative %d", k)
				}
			}
		}
		assert.Len(t, seenItems, 40, "frac %v: every item drawn", frac)
	}
}

// TestTypedSamplerRefusesUntyped: typed negatives need a typed store.
func TestTypedSamplerRefusesUntyped(t *testing.T) {
	_, err := sample.NewTypedNegativeSampler(&store.Manifest{P: 1, Rows: 4, Nodes: 4}, make([]uint16, 4), make([]int32, 4), 0)
	require.Error(t, err)
}

// TestPartSamplerRows: a sampler over a list of rows draws list[j] where
// the plain sampler over the same degrees draws j, from the same
// generator.
func TestPartSamplerRows(t *testing.T) {
	deg := []int32{5, 0, 2, 9, 1}
	list := []int32{10, 3, 7, 42, 8}
	a, b := sample.NewPartSampler(deg), sample.NewPartSamplerRows(list, deg)
	r1, r2 := rand.New(rand.NewPCG(4, 5)), rand.New(rand.NewPCG(4, 5))
	for range 200 {
		assert.Equal(t, list[a.ByDegree(r1)], b.ByDegree(r2))
		assert.Equal(t, list[a.Uniform(r1)], b.Uniform(r2))
	}
}

package workload

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEstimateBatchByHand(t *testing.T) {
	s := BatchShape{Model: DistMult, Dim: 2, Edges: 3, Chunks: 2, ChunkEdges: 2, Negatives: 2, Rows: 7, Relations: 2, Concurrent: 1}
	m := EstimateBatch(s)
	assert.Equal(t, int64(7*2*4*2), m.Rows)
	assert.Equal(t, int64(2*2*4*2), m.Relations)
	assert.Equal(t, int64(3*3*4+2*2*4+7*8+2*8), m.Index)
	// (4+2+2)·n·d + 2md + 2nm + nd + md + 2n = 32+8+8+4+4+4 floats.
	assert.Equal(t, int64(60*4), m.Chunk)
	assert.Equal(t, m.Rows+m.Relations+m.Index+m.Chunk, m.Total)
	assert.InDelta(t, 10*(1-0.9*0.9*0.9), ExpectedDistinct(10, 3), 1e-12)
}

func TestFewestMicroBatches(t *testing.T) {
	// The search against a scan of every k, for peaks that fall with k.
	for _, tc := range []struct {
		name         string
		budget       int64
		start, limit int
		peak         func(k int) int64
		want         int
		wantErr      error
	}{
		{"whole fits", 100, 2, 50, func(k int) int64 { return 100 / int64(k) }, 1, nil},
		{"1/k", 10, 2, 100, func(k int) int64 { return 100 / int64(k) }, 10, nil},
		{"1/k from a bound", 10, 8, 100, func(k int) int64 { return 100 / int64(k) }, 10, nil},
		{"bound is the answer", 10, 10, 100, func(k int) int64 { return 100 / int64(k) }, 10, nil},
		{"constant part", 30, 2, 1000, func(k int) int64 { return 20 + 1000/int64(k) }, 91, nil},
		{"near the limit", 2, 2, 50, func(k int) int64 { return 100 / int64(k) }, 34, nil},
		{"at the limit", 50, 2, 50, func(k int) int64 { return 100 - int64(k) }, 50, nil},
		{"none fits", 1, 2, 50, func(k int) int64 { return 100 / int64(k) }, 0, ErrNoFit},
		{"limit 1", 1, 2, 1, func(k int) int64 { return 5 }, 0, ErrNoFit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			k, err := FewestMicroBatches(tc.start, tc.limit, func(k int) (bool, error) {
				calls++
				return tc.peak(k) <= tc.budget, nil
			})
			require.ErrorIs(t, err, tc.wantErr)
			assert.Equal(t, tc.want, k)
			scan := 0
			for k := 1; k <= tc.limit && scan == 0; k++ {
				if tc.peak(k) <= tc.budget {
					scan = k
				}
			}
			assert.Equal(t, scan, k, "the fewest, as a scan of every k finds")
			assert.LessOrEqual(t, calls, 2+2*bitsLen(tc.limit), "O(log limit) calls")
		})
	}
	_, err := FewestMicroBatches(2, 10, func(int) (bool, error) { return false, errors.New("boom") })
	assert.ErrorContains(t, err, "boom")
}

func TestMicroLowerBound(t *testing.T) {
	whole := BatchMemory{Chunk: 10, Total: 110}
	assert.Equal(t, 4, MicroLowerBound(whole, 40), "100 bytes beside the chunk, 30 spare: at least 4")
	assert.Equal(t, 2, MicroLowerBound(whole, 5), "no room beside the chunk")
	assert.Equal(t, 2, MicroLowerBound(whole, 200))
}

func bitsLen(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}

// A relation row is Model.RelWidth(d) floats: the gathered relation rows,
// and each edge's relation row in the chunk, are sized by it (d/2 for
// RotatE, two d×d matrices for linear+cos, none for dot and none+cos).
func TestEstimateBatchRelationWidths(t *testing.T) {
	const d, n, m, rels = 4, 2, 2, 3
	for _, tc := range []struct {
		model Model
		w     int64
	}{
		{Dot, 0}, {DistMult, d}, {ComplEx, d}, {TransEL1, d}, {TransEL2, d}, {RotatE, d / 2},
		{"linear+cos", 2 * d * d}, {"affine+l2", 2 * (d*d + d)}, {"diagonal+cos", 2 * d}, {"none+cos", 0},
	} {
		t.Run(string(tc.model), func(t *testing.T) {
			s := BatchShape{Model: tc.model, Dim: d, Edges: n, Chunks: 1, ChunkEdges: n, Negatives: m, Rows: 6, Relations: rels, Concurrent: 1}
			got := EstimateBatch(s)
			assert.Equal(t, int64(rels)*tc.w*4*2, got.Relations)
			// The chunk term: the width-d buffers plus 2·n·w for R and gR.
			var kappa int64
			if tc.model != Dot {
				kappa = 1
			}
			perChunk := (4+2*kappa)*n*d + 2*n*tc.w + 2*m*d + 2*n*m + n*d + m*d + 2*n
			assert.Equal(t, perChunk*4, got.Chunk)
		})
	}
}

package eval_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/workload"
)

func TestRandomMRR(t *testing.T) {
	direct := func(k int) float64 {
		var h float64
		for i := 1; i <= k; i++ {
			h += 1 / float64(i)
		}
		return h / float64(k)
	}
	tests := []struct {
		k    int
		want float64
	}{
		{0, 0},
		{1, 1},
		{2, 0.75},
		{3, 11.0 / 18},
		{64, direct(64)},
		{65, direct(65)},
		{1001, direct(1001)},
		{2001, direct(2001)},
		{14951, direct(14951)},
	}
	for _, tt := range tests {
		assert.InDelta(t, tt.want, eval.RandomMRR(tt.k), 1e-12, "k=%d", tt.k)
	}
}

// TestBaselineIsWhatRandomEmbeddingsScore: before any training the
// embeddings are random, so the measured MRR must be close to the random
// baseline, in both the filtered and the sampled evaluation.
func TestBaselineIsWhatRandomEmbeddingsScore(t *testing.T) {
	st := fixture.Prepare(t, "livejournal", 0.001, 4, 16, workload.Dot) // 4,800 nodes
	deg, err := st.Degrees()
	require.NoError(t, err)
	for _, opt := range []eval.Options{
		{FilteredMaxNodes: 10_000, MaxEdges: 3000, Workers: 2, Seed: 1},
		{FilteredMaxNodes: 0, Uniform: 500, ByDegree: 0, MaxEdges: 3000, Workers: 2, Seed: 1},
	} {
		q, err := eval.Evaluate(st, workload.Dot, nil, deg, opt)
		require.NoError(t, err)
		t.Logf("%s: untrained MRR %.5f, random baseline %.5f", q.Mode, q.MRR, q.Baseline)
		assert.InEpsilon(t, q.Baseline, q.MRR, 0.25, q.Mode)
	}
}

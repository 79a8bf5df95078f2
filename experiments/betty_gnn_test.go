package experiments

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tinyBetty runs the Betty experiments on tiny graphs and grids for the
// test's duration.
func tinyBetty(t *testing.T) {
	t.Helper()
	old := bettyGrid
	t.Cleanup(func() { bettyGrid = old })
	bettyGrid = BettyGrid{
		Scales:       map[string]float64{"ogbn-arxiv": 0.005, "ogbn-products": 0.001},
		Datasets:     []string{"ogbn-arxiv", "ogbn-products"},
		Fig10Layers:  []int{1, 2},
		Fig10Hidden:  []int{64},
		Fig10Fanouts: []int{10, 20},
		Fig11Ks:      []int{2, 4},
		Fig16Ks:      []int{2, 8},
		Fig12Ks:      []int{1, 4},
		Fig12Epochs:  1,
		Fig13Ks:      []int{1, 2},
		Fig13Epochs:  2,
		Table5Seeds:  []uint64{1},
		Table5K:      4,

		Table5DefaultEpochs: 1,
		Table7Ks:            []int{4, 8},
		Table7Models:        []string{"mlp", "sage-mean", "sage-lstm", "gat"},
		Table7Batch:         64,
	}
}

func TestBettyRegisteredAndSlow(t *testing.T) {
	for _, n := range []string{"betty-fig10", "betty-fig11", "betty-fig16", "betty-table7"} {
		e, err := Lookup(n)
		require.NoError(t, err, n)
		assert.True(t, e.Slow, "%s generates graphs and trains or measures for minutes", n)
	}
	for _, n := range []string{"edge-micro-fig16", "edge-micro-table7"} { // edge-micro-fig12: experiments/simulated
		_, err := Lookup(n)
		assert.NoError(t, err, n)
	}
}

// checkRunInfo: every Betty result says how, where and when it was made.
func checkRunInfo(t *testing.T, r Result) {
	t.Helper()
	require.NotEmpty(t, r.Notes)
	for _, w := range []string{"make reproduce-betty", "cores", "commit", "UTC"} {
		assert.Contains(t, r.Notes[0], w, r.Name)
	}
	assert.Contains(t, r.Notes[1], "data.Generate", r.Name)
}

func TestBettyFig10Tiny(t *testing.T) {
	tinyBetty(t)
	r, err := BettyFig10()
	require.NoError(t, err)
	checkRunInfo(t, r)
	require.Len(t, r.Rows, 3+2+1+2)
	k, est, meas := col(t, r, "K (ours)"), col(t, r, "largest micro est MB"), col(t, r, "largest micro measured MB")
	for _, row := range r.Rows {
		n, err := strconv.Atoi(row[k])
		require.NoError(t, err, "%v", row)
		assert.GreaterOrEqual(t, n, 1, "%v", row)
		for _, c := range []int{est, meas} {
			v, err := strconv.ParseFloat(row[c], 64)
			require.NoError(t, err, "%v", row)
			assert.Positive(t, v, "%v", row)
		}
	}
	// The reference configuration (2-layer mean, hidden 256, 10,25) is
	// what the budget is scaled from: it fits whole.
	assert.Equal(t, "1", r.Rows[0][k])
}

func TestBettyFig11Tiny(t *testing.T) {
	tinyBetty(t)
	r, err := BettyFig11()
	require.NoError(t, err)
	checkRunInfo(t, r)
	// Per dataset: the full batch, 4 methods × 2 Ks, the mean row.
	require.Len(t, r.Rows, 2*(1+4*2+1))
	assert.Len(t, r.Charts, 2)
}

func TestBettyFig16Tiny(t *testing.T) {
	tinyBetty(t)
	r, err := BettyFig16()
	require.NoError(t, err)
	checkRunInfo(t, r)
	require.Len(t, r.Rows, 4*2)
	red, split := col(t, r, "redundant rows"), col(t, r, "split")
	byK := map[string]map[string]int{}
	for _, row := range r.Rows {
		n, err := strconv.Atoi(row[red])
		require.NoError(t, err)
		assert.GreaterOrEqual(t, n, 0)
		if byK[row[0]] == nil {
			byK[row[0]] = map[string]int{}
		}
		byK[row[0]][row[split]] = n
	}
	for k, m := range byK {
		assert.LessOrEqual(t, m["reg"], m["random"], "K=%s: REG keeps shared rows together, random scatters them", k)
	}
}

func TestBettyTable7Tiny(t *testing.T) {
	tinyBetty(t)
	r, err := BettyTable7()
	require.NoError(t, err)
	checkRunInfo(t, r)
	require.Len(t, r.Rows, 2*4*2)
	worst := col(t, r, "worst error % (any micro-batch)")
	for _, row := range r.Rows {
		e, err := strconv.ParseFloat(strings.TrimPrefix(row[worst], "+"), 64)
		require.NoError(t, err, "%v", row)
		assert.LessOrEqual(t, e*e, 2.0*2.0, "the estimator is within 2%% of the engine: %v", row)
	}
}

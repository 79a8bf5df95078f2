package simulated

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/workload"
)

// Every Legend case of Table 5 and Figure 18 respects the lower bound, and
// turning prefetching off never makes Legend faster.
func TestLegendCasesBoundAndPrefetch(t *testing.T) {
	for _, dataset := range []string{"twitter", "freebase86m"} {
		for _, v := range LegendFig18Variants(dataset) {
			t.Run(v.Case.String(), func(t *testing.T) {
				rep, err := LegendSimulate(v.Case)
				require.NoError(t, err)
				assert.GreaterOrEqual(t, rep.EpochSeconds, rep.BoundSeconds)
				assert.Empty(t, rep.Warnings)
				if v.Case.NoPrefetch {
					return
				}
				off := v.Case
				off.NoPrefetch = true
				slow, err := LegendSimulate(off)
				require.NoError(t, err)
				assert.GreaterOrEqual(t, slow.EpochSeconds, rep.EpochSeconds, "prefetch off is faster")
				assert.GreaterOrEqual(t, slow.EpochSeconds, slow.BoundSeconds)
			})
		}
	}
}

func TestLegendTable5(t *testing.T) {
	r, err := LegendTable5()
	require.NoError(t, err)
	require.Len(t, r.Rows, 2)
	p, paper := col(t, r, "p"), col(t, r, "speedup % (paper)")
	buf := col(t, r, "buffer GB (3 partitions)")
	// §7.1: 8 partitions (12 GB buffer) for TW, 12 (17 GB) for FM.
	assert.Equal(t, []string{"TW", "8", "29.83", "12.5"}, []string{r.Rows[0][0], r.Rows[0][p], r.Rows[0][paper], r.Rows[0][buf]})
	assert.Equal(t, []string{"FM", "12", "11.24", "17.2"}, []string{r.Rows[1][0], r.Rows[1][p], r.Rows[1][paper], r.Rows[1][buf]})
	require.Len(t, r.Charts, 1)
	assert.Len(t, r.Charts[0].Series, 4)
	assert.Equal(t, 29.83, round2(legendSpeedup(235.0, 181.0)))
	assert.Equal(t, 11.24, round2(legendSpeedup(271.2, 243.8)))
}

// TestLegendComputeFit: the legend-a100 profile is fitted to Legend §4's
// t ≈ 1e-7 s per edge at the shape Table 5 runs (Dot, d=100, batches of
// 50,000, 1,000 negatives).
func TestLegendComputeFit(t *testing.T) {
	rep, err := LegendSimulate(LegendCase{Dataset: "twitter", P: LegendPartitions["twitter"]})
	require.NoError(t, err)
	tw, err := workload.LookupDataset("twitter")
	require.NoError(t, err)
	assert.InEpsilon(t, 1e-7, rep.ComputeSeconds/float64(tw.TrainEdges()), 0.01)
}

func round2(x float64) float64 { return float64(int(x*100+0.5)) / 100 }

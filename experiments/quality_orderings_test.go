package experiments

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{0.5}, 0.5},
		{[]float64{0.3, 0.1, 0.2}, 0.2},
		{[]float64{0.4, 0.1, 0.3, 0.2}, 0.25},
	} {
		in := append([]float64(nil), tc.in...)
		assert.InDelta(t, tc.want, median(tc.in), 1e-12, "%v", tc.in)
		assert.Equal(t, in, tc.in, "median must not reorder its input")
	}
}

func qoRuns(graph string, p, c int, ordering string, mrrs ...float64) []QORun {
	var out []QORun
	for i, m := range mrrs {
		out = append(out, QORun{Graph: graph, P: p, C: c, Ordering: ordering, Seed: int64(3 - i), MRR: m, Hits10: m + 0.1, Protocol: "filtered"})
	}
	return out
}

// TestAggregateQO: medians and ranges over seeds, the difference from the
// reference, and both verdicts, row by row.
func TestAggregateQO(t *testing.T) {
	var runs []QORun
	runs = append(runs, qoRuns("kg", 1, 1, QORef, 0.80, 0.82, 0.81)...)
	runs = append(runs, qoRuns("kg", 16, 4, "beta", 0.86, 0.85, 0.87)...)      // above the reference, best here
	runs = append(runs, qoRuns("kg", 16, 4, "row-major", 0.82, 0.85, 0.83)...) // overlaps both
	runs = append(runs, qoRuns("kg", 16, 4, "random", 0.70, 0.72, 0.71)...)    // below both
	runs = append(runs, qoRuns("kg", 4, 3, "beta", 0.815, 0.83, 0.82)...)      // alone at (4, 3): best
	runs = append(runs, qoRuns("social", 1, 1, QORef, 0.05, 0.05, 0.05)...)
	runs = append(runs, qoRuns("social", 16, 3, "beta", 0.050, 0.049, 0.048)...) // touches the reference's range
	runs = append(runs, qoRuns("orphan", 4, 3, "beta", 0.1)...)                  // no reference run
	cells := AggregateQO(runs)
	require.Len(t, cells, 8)
	for _, tc := range []struct {
		i                int
		graph, ordering  string
		median, min, max float64
		hits, delta      float64
		mrrs             []float64
		vsRef, vsBest    string
	}{
		{0, "kg", QORef, 0.81, 0.80, 0.82, 0.91, 0, []float64{0.81, 0.82, 0.80}, "reference", "-"},
		{1, "kg", "beta", 0.86, 0.85, 0.87, 0.96, 0.05, []float64{0.87, 0.85, 0.86}, "above, beyond the seed spread", "best here"},
		{2, "kg", "row-major", 0.83, 0.82, 0.85, 0.93, 0.02, []float64{0.83, 0.85, 0.82}, "within the seed spread", "within beta's spread"},
		{3, "kg", "random", 0.71, 0.70, 0.72, 0.81, -0.10, []float64{0.71, 0.72, 0.70}, "below, beyond the seed spread", "below beta, beyond the seed spread"},
		{4, "kg", "beta", 0.82, 0.815, 0.83, 0.92, 0.01, []float64{0.82, 0.83, 0.815}, "within the seed spread", "best here"},
		{5, "social", QORef, 0.05, 0.05, 0.05, 0.15, 0, []float64{0.05, 0.05, 0.05}, "reference", "-"},
		{6, "social", "beta", 0.049, 0.048, 0.050, 0.149, -0.001, []float64{0.048, 0.049, 0.050}, "within the seed spread", "best here"},
		{7, "orphan", "beta", 0.1, 0.1, 0.1, 0.2, 0, []float64{0.1}, "no reference", "best here"},
	} {
		c := cells[tc.i]
		assert.Equal(t, tc.graph, c.Graph, "row %d", tc.i)
		assert.Equal(t, tc.ordering, c.Ordering, "row %d", tc.i)
		assert.InDelta(t, tc.median, c.Median, 1e-9, "row %d median", tc.i)
		assert.InDelta(t, tc.min, c.Min, 1e-9, "row %d min", tc.i)
		assert.InDelta(t, tc.max, c.Max, 1e-9, "row %d max", tc.i)
		assert.InDelta(t, tc.hits, c.Hits10, 1e-9, "row %d hits", tc.i)
		assert.InDelta(t, tc.delta, c.DeltaRef, 1e-9, "row %d delta", tc.i)
		assert.InDeltaSlice(t, tc.mrrs, c.MRRs, 1e-9, "row %d: MRRs in seed order", tc.i)
		assert.Equal(t, tc.vsRef, c.VsRef, "row %d", tc.i)
		assert.Equal(t, tc.vsBest, c.VsBest, "row %d", tc.i)
	}
	rows := qoRows(cells)
	require.Len(t, rows, 8)
	assert.Equal(t, []string{"kg", "filtered", "1", "-", QORef, "0.810", "0.800–0.820", "0.810 0.820 0.800", "0.910", "-", "reference", "-"}, rows[0])
	assert.Equal(t, []string{"kg", "filtered", "16", "4", "random", "0.710", "0.700–0.720", "0.710 0.720 0.700", "0.810", "-0.100", "below, beyond the seed spread", "below beta, beyond the seed spread"}, rows[3])
}

// TestOnePartitionPlan: the reference's plan is one bucket in one slot,
// its one partition loaded before the bucket and flushed at the end.
func TestOnePartitionPlan(t *testing.T) {
	pl := onePartitionPlan()
	assert.Equal(t, 1, pl.P)
	assert.Equal(t, 1, pl.C)
	require.Len(t, pl.Buckets, 1)
	require.Len(t, pl.Loads, 1)
	assert.Equal(t, []int{1}, pl.Arrivals())
	assert.Equal(t, pl.Counts.Loads, len(pl.Loads))
}

func TestQualityOrderingsRegistered(t *testing.T) {
	for _, name := range []string{"quality-orderings", "quality-orderings-curve"} {
		e, err := Lookup(name)
		require.NoError(t, err)
		assert.True(t, e.Slow, "%s trains for minutes: it must not run in make test", name)
	}
	for _, g := range DefaultQOGrid.Graphs {
		for _, pc := range g.PC {
			assert.LessOrEqual(t, pc[1], pc[0], "%s: c ≤ p", g.Name)
		}
	}
}

// TestQOCache: a runs file keeps each run as it finishes and gives it back
// to a later experiment by graph, p, c, ordering, seed and epochs.
func TestQOCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.jsonl")
	c, err := openQOCache(path)
	require.NoError(t, err)
	run := QORun{Graph: "kg", P: 16, C: 4, Ordering: "beta", Seed: 2, Epochs: 5, MRR: 0.86, Hits10: 0.93, Protocol: "filtered", Seconds: 7}
	_, ok := c.get(run)
	assert.False(t, ok)
	require.NoError(t, c.put(run))
	require.NoError(t, c.put(QORun{Graph: "kg", P: 1, C: 1, Ordering: QORef, Seed: 2, Epochs: 5, MRR: 0.8}))
	again, err := openQOCache(path)
	require.NoError(t, err)
	got, ok := again.get(QORun{Graph: "kg", P: 16, C: 4, Ordering: "beta", Seed: 2, Epochs: 5})
	require.True(t, ok)
	assert.Equal(t, run, got)
	_, ok = again.get(QORun{Graph: "kg", P: 16, C: 4, Ordering: "beta", Seed: 2, Epochs: 10})
	assert.False(t, ok, "another number of epochs is another run")
	mem, err := openQOCache("")
	require.NoError(t, err)
	require.NoError(t, mem.put(run))
	require.NoError(t, os.WriteFile(path, []byte("{broken\n"), 0o644))
	_, err = openQOCache(path)
	assert.ErrorContains(t, err, "runs.jsonl:1")
}

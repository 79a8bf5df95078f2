package sim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
)

// spreadConfig is Marius on p3.2xlarge, Freebase86m d=100, BETA at p=16
// c=4: data-bound, so the disk's spread moves the epoch.
func spreadConfig(t *testing.T) Config {
	t.Helper()
	out, _, err := Request{System: "marius", Device: "p3.2xlarge", Dataset: "freebase86m", Dim: 100, P: 16, C: 4, Orderings: "beta"}.Assemble()
	require.NoError(t, err)
	out.Ordering = "beta"
	cfg, err := out.Config()
	require.NoError(t, err)
	cfg.TimelineSlices = 1
	return cfg
}

// withSpread is p with every listed rate's range ±frac around its value.
func withSpread(t *testing.T, p devices.Profile, frac float64, keys ...string) devices.Profile {
	t.Helper()
	for _, k := range keys {
		var v float64
		switch k {
		case "disk.read":
			v = float64(p.Disk.Read)
		case "disk.write":
			v = float64(p.Disk.Write)
		case "cpu.batch_edges":
			v = float64(p.CPU.BatchEdges)
		}
		require.NoError(t, p.SetSpread(k, v*(1-frac), v*(1+frac)))
	}
	return p
}

func TestRunRangeWithoutSpread(t *testing.T) {
	cfg := spreadConfig(t)
	want, err := Run(cfg)
	require.NoError(t, err)
	got, r, err := RunRange(cfg)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, EpochRange{}, r)
	assert.False(t, r.Has())
}

func TestRunRangeHoldsTheMedianAndWidensWithTheSpread(t *testing.T) {
	keys := []string{"disk.read", "disk.write", "cpu.batch_edges"}
	base := spreadConfig(t)
	median, err := Run(base)
	require.NoError(t, err)
	prev := EpochRange{Low: median.EpochSeconds, High: median.EpochSeconds}
	for _, frac := range []float64{0.05, 0.2, 0.4} {
		cfg := base
		cfg.Profile = withSpread(t, base.Profile, frac, keys...)
		rep, r, err := RunRange(cfg)
		require.NoError(t, err)
		assert.Equal(t, median.EpochSeconds, rep.EpochSeconds, "the report is the profile as given")
		require.True(t, r.Has())
		assert.True(t, r.Contains(rep.EpochSeconds), "±%.0f%%: %v does not hold %v", 100*frac, r, rep.EpochSeconds)
		assert.Less(t, r.Low, prev.Low, "±%.0f%%: a wider spread, a wider range", 100*frac)
		assert.Greater(t, r.High, prev.High, "±%.0f%%", 100*frac)
		prev = r
	}
}

func TestRank(t *testing.T) {
	rng := func(lo, hi float64) EpochRange { return EpochRange{Low: lo, High: hi} }
	for _, tc := range []struct {
		name    string
		entries []Ranked
		want    []Place
	}{
		{"no spread: certain", []Ranked{{Median: 3}, {Median: 1}, {Median: 2}},
			[]Place{{Rank: 3, RankBest: 3, RankWorst: 3}, {Rank: 1, RankBest: 1, RankWorst: 1}, {Rank: 2, RankBest: 2, RankWorst: 2}}},
		{"apart: certain", []Ranked{{1, rng(0.9, 1.1)}, {2, rng(1.8, 2.2)}},
			[]Place{{Rank: 1, RankBest: 1, RankWorst: 1}, {Rank: 2, RankBest: 2, RankWorst: 2}}},
		{"overlapping neighbours", []Ranked{{1, rng(0.8, 1.5)}, {1.2, rng(1.1, 1.3)}, {2, rng(1.9, 2.1)}},
			[]Place{{Rank: 1, RankBest: 1, RankWorst: 2}, {Rank: 2, RankBest: 1, RankWorst: 2, WithinSpread: true}, {Rank: 3, RankBest: 3, RankWorst: 3}}},
		{"a wide range reaches past its neighbour", []Ranked{{1, rng(0.5, 3)}, {1.2, rng(1.1, 1.3)}, {2, rng(1.9, 2.1)}},
			[]Place{{Rank: 1, RankBest: 1, RankWorst: 3}, {Rank: 2, RankBest: 1, RankWorst: 2, WithinSpread: true}, {Rank: 3, RankBest: 2, RankWorst: 3}}},
		{"ties are not certain", []Ranked{{2, rng(2, 2)}, {2, rng(2, 2)}},
			[]Place{{Rank: 1, RankBest: 1, RankWorst: 2}, {Rank: 2, RankBest: 1, RankWorst: 2, WithinSpread: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Rank(tc.entries))
		})
	}
	p := Place{Rank: 2, RankBest: 1, RankWorst: 3, WithinSpread: true}
	assert.Equal(t, "2 ≈", p.Marked())
	assert.Equal(t, "1–3", p.Span())
	p = Place{Rank: 3, RankBest: 3, RankWorst: 3}
	assert.Equal(t, "3", p.Marked())
	assert.Equal(t, "3", p.Span())
	assert.Equal(t, "93.4 (81.0–110.2)", EpochRange{Low: 81.0 * 60, High: 110.2 * 60}.Text(93.4*60, 60, 1))
	assert.Equal(t, "93.4", EpochRange{}.Text(93.4*60, 60, 1))
}

// TestPredictRanksWithTheSpread: simulate's orderings are placed only
// when the device has a spread, and the order of BETA and row-major (4×
// the I/O) stays certain under a ±10% disk.
func TestPredictRanksWithTheSpread(t *testing.T) {
	q := Request{System: "marius", Device: "p3.2xlarge", Dataset: "freebase86m", Dim: 100, P: 16, C: 4, Orderings: "beta,row-major"}
	out, err := q.Predict()
	require.NoError(t, err)
	assert.False(t, out.HasSpread())
	for _, r := range out.Results {
		assert.Zero(t, r.Place)
		assert.Zero(t, r.EpochRange)
	}

	sc, names, err := q.Assemble()
	require.NoError(t, err)
	sc.Profile = withSpread(t, sc.Profile, 0.1, "disk.read", "disk.write")
	out, err = Predict(sc, names)
	require.NoError(t, err)
	require.True(t, out.HasSpread())
	beta, rowMajor := out.Results[0], out.Results[1]
	assert.Equal(t, Place{Rank: 1, RankBest: 1, RankWorst: 1}, beta.Place)
	assert.Equal(t, Place{Rank: 2, RankBest: 2, RankWorst: 2}, rowMajor.Place)
	assert.Less(t, beta.High, rowMajor.Low)
}

// TestOrderingRate: the CPU engine's rate on an ordering's own bucket
// sequence (cpu.train.<model>.orderings) is the rate that ordering is
// simulated with, its range scaled with it; other orderings keep the
// profile's rate.
func TestOrderingRate(t *testing.T) {
	const base = `name: orderings
disk: {read: 400 MB/s, write: 400 MB/s}
cpu:
  workers: 2
  memory: 8 GB
  batch_edges: 1M edges/s
  gather_bandwidth: 6 GB/s
  train:
    dot:
      edges: 1M edges/s
`
	predict := func(extra string) map[string]Result {
		path := filepath.Join(t.TempDir(), "p.yaml")
		require.NoError(t, os.WriteFile(path, []byte(base+extra), 0o644))
		out, err := Request{System: "realrun", Device: path, Dataset: "fb15k", Model: "dot", Dim: 128, P: 8, C: 3, Orderings: "beta,hilbert"}.Predict()
		require.NoError(t, err)
		res := map[string]Result{}
		for _, r := range out.Results {
			res[r.Ordering] = r
		}
		return res
	}
	plain := predict("")
	half := predict("      orderings: {beta: 500k edges/s}\nspread:\n  cpu.train.dot.edges: [800k edges/s, 1.2M edges/s]\n")
	require.Positive(t, plain["beta"].ComputeSeconds)
	assert.InDelta(t, 2*plain["beta"].ComputeSeconds, half["beta"].ComputeSeconds, 1e-9)
	assert.InDelta(t, plain["hilbert"].ComputeSeconds, half["hilbert"].ComputeSeconds, 1e-9)
	// BETA's range is over its own rate's spread: 400k–600k edges/s.
	require.True(t, half["beta"].EpochRange.Has())
	assert.Greater(t, half["beta"].EpochRange.High, half["beta"].EpochSeconds)
	assert.Less(t, half["beta"].EpochRange.Low, half["beta"].EpochSeconds)
}

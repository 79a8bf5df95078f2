package orderings

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings/internal/misses"
)

// TestLegendCIsLegendAtC3 checks that legend-c reproduces the published
// c = 3 behaviour exactly: the same states and the same bucket order as the
// legend ordering (whose p = 6 output is pinned by the golden file).
func TestLegendCIsLegendAtC3(t *testing.T) {
	for p := 4; p <= 40; p++ {
		a := build(t, "legend", p, 3)
		b := build(t, "legend-c", p, 3)
		require.Equal(t, a.States, b.States, "p=%d", p)
		require.Equal(t, a.Buckets, b.Buckets, "p=%d", p)
		require.Equal(t, a.Counts, b.Counts, "p=%d", p)
	}
}

// TestLegendCMoversSlide checks the pivot/mover property for c > 3: the
// partition just loaded is never the next one evicted, so every swap after
// the first keeps the buckets its predecessor added with the pivots.
func TestLegendCMoversSlide(t *testing.T) {
	for _, pc := range [][2]int{{8, 4}, {16, 4}, {16, 6}, {32, 8}, {40, 13}, {64, 16}} {
		pl := build(t, "legend-c", pc[0], pc[1])
		require.NoError(t, pl.Validate())
		for i := 2; i < len(pl.States); i++ {
			loaded := withoutAll(pl.States[i-1], pl.States[i-2])
			evicted := withoutAll(pl.States[i-1], pl.States[i])
			require.Len(t, loaded, 1)
			require.Len(t, evicted, 1)
			assert.NotEqual(t, loaded[0], evicted[0], "p=%d c=%d state %d", pc[0], pc[1], i)
		}
		if pc[0] >= 16 {
			assert.GreaterOrEqual(t, pl.Counts.PrefetchableSwaps*10, pl.Counts.Swaps*9, "p=%d c=%d", pc[0], pc[1])
		}
	}
	_, err := Build("legend-c", 8, 2, Belady, 0)
	assert.ErrorIs(t, err, ErrNotApplicable)
}

func withoutAll(s, drop []int) []int {
	var out []int
	for _, x := range s {
		if !containsInt(drop, x) {
			out = append(out, x)
		}
	}
	return out
}

// TestTierflowTargets checks tierflow's two targets over 3 ≤ c ≤ p/2: every
// p ≤ 64 and every eighth p up to 128 (about 5 s of CPU); with -update
// every p ≤ 128, all 3,844 pairs (about 25 s), and it rewrites
// testdata/tierflow_prefetch_misses.txt (`go test ./orderings -run
// TestTierflowTargets -update` after changing the ordering). Swaps ≤
// BETA's must hold everywhere. The share of prefetchable swaps must reach
// 95% everywhere except the (p, c) listed in the file, which must match
// exactly.
func TestTierflowTargets(t *testing.T) {
	const maxP = 128
	swept := func(p int) bool { return *update || p <= 64 || p%8 == 0 }
	missed := make([][]string, maxP+1)
	for p := 6; p <= maxP; p++ {
		if !swept(p) {
			continue
		}
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			t.Parallel()
			for c := 3; c <= p/2; c++ {
				pl, err := Build("tierflow", p, c, Belady, 0)
				require.NoError(t, err)
				require.NoError(t, pl.Validate())
				require.LessOrEqual(t, pl.Counts.Swaps, BETASwaps(p, c), "p=%d c=%d", p, c)
				if !pl.Counts.MeetsPrefetchTarget() {
					missed[p] = append(missed[p], fmt.Sprintf("%d %d %d %d %.3f", p, c, pl.Counts.Swaps, pl.Counts.PrefetchableSwaps,
						float64(pl.Counts.PrefetchableSwaps)/float64(pl.Counts.Swaps)))
				}
			}
		})
	}
	t.Cleanup(func() {
		var got []string
		for _, m := range missed {
			got = append(got, m...)
		}
		if *update {
			body := "# p c swaps prefetchable share: tierflow below 95% prefetchable swaps (p ≤ 128, 3 ≤ c ≤ p/2)\n" + strings.Join(got, "\n") + "\n"
			require.NoError(t, os.WriteFile(misses.Path, []byte(body), 0o644))
		}
		list, err := misses.Read(misses.Path)
		require.NoError(t, err)
		var want []string
		for _, m := range list {
			if swept(m.P) {
				want = append(want, m.Line)
			}
		}
		assert.Equal(t, want, got, "tierflow's prefetch misses changed; run go test ./orderings -run TestTierflowTargets -update")
	})
}

// TestTierflowBeatsBETAWhereBETAIsNotOptimal checks tierflow against the
// exact optimum for p ≤ 8: it is optimal wherever the search finds BETA
// is not.
func TestTierflowBeatsBETAWhereBETAIsNotOptimal(t *testing.T) {
	for p := 3; p <= 8; p++ {
		for c := 2; c <= p; c++ {
			r, err := OptimalSwaps(p, c, 0)
			require.NoError(t, err)
			pl := build(t, "tierflow", p, c)
			assert.LessOrEqual(t, pl.Counts.Swaps, BETASwaps(p, c))
			if r.Swaps < BETASwaps(p, c) {
				assert.Equal(t, r.Swaps, pl.Counts.Swaps, "p=%d c=%d", p, c)
			}
		}
	}
}

// listedMisses returns the (p, c) of testdata/tierflow_prefetch_misses.txt.
func listedMisses(t *testing.T) [][2]int {
	t.Helper()
	list, err := misses.Read(misses.Path)
	require.NoError(t, err)
	out := make([][2]int, len(list))
	for i, m := range list {
		out[i] = [2]int{m.P, m.C}
	}
	return out
}

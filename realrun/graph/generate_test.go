package graph

import (
	"errors"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookupPreset(t *testing.T) {
	for _, p := range Presets {
		got, err := LookupPreset(p.Name)
		require.NoError(t, err)
		assert.Equal(t, p, got)
	}
	got, err := LookupPreset("Twitter")
	require.NoError(t, err)
	assert.Equal(t, "twitter", got.Name)

	_, err = LookupPreset("orkut")
	require.Error(t, err)
	assert.Equal(t, `graph: unknown preset "orkut" (known: twitter, livejournal, freebase86m, fb15k)`, err.Error())
}

func TestScaled(t *testing.T) {
	tw, fb, fbk := mustPreset(t, "twitter"), mustPreset(t, "freebase86m"), mustPreset(t, "fb15k")
	tests := []struct {
		name string
		p    Preset
		f    float64
		want Preset
	}{
		{"identity", tw, 1, tw},
		{"twitter 0.002", tw, 0.002, Preset{"twitter", 83_200, 2_920_000, 1, "dot"}},
		{"freebase 0.01", fb, 0.01, Preset{"freebase86m", 861_000, 3_380_000, 1_480, "complex"}},
		{"node and edge floors", fbk, 1e-6, Preset{"fb15k", 100, 1_000, 1, "complex"}},
		{"relations never grow", Preset{"x", 1000, 10000, 3, "complex"}, 0.99, Preset{"x", 990, 9900, 3, "complex"}},
		{"relations at least 1", Preset{"x", 1000, 10000, 3, "complex"}, 0.01, Preset{"x", 100, 1000, 1, "complex"}},
		{"fb15k 0.25", fbk, 0.25, Preset{"fb15k", 3_738, 148_053, 673, "complex"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.p.Scaled(tc.f)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	for _, f := range []float64{0, -0.5, 1.0000001, 2, math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := tw.Scaled(f)
		require.Error(t, err, "f=%v", f)
		assert.Contains(t, err.Error(), "scale must be in (0, 1]")
	}
}

func mustPreset(t testing.TB, name string) Preset {
	t.Helper()
	p, err := LookupPreset(name)
	require.NoError(t, err)
	return p
}

func TestCommunities(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want int
	}{{100, 4}, {1_000, 8}, {83_200, 72}, {14_951, 31}, {41_600_000, 1000}} {
		assert.Equal(t, tc.want, Communities(tc.n), "n=%d", tc.n)
	}
}

// edgeHash hashes the first limit edges generated for p and seed, and counts
// all of them.
func edgeHash(t *testing.T, p Preset, seed int64, limit int) (uint64, int64) {
	t.Helper()
	h := fnv.New64a()
	var buf [24]byte
	n := int64(0)
	err := Generate(p, seed, func(src, rel, dst int64) error {
		if n < int64(limit) {
			for i, x := range []int64{src, rel, dst} {
				for b := range 8 {
					buf[8*i+b] = byte(x >> (8 * b))
				}
			}
			h.Write(buf[:])
		}
		n++
		return nil
	})
	require.NoError(t, err)
	return h.Sum64(), n
}

func TestGenerateDeterministic(t *testing.T) {
	for _, name := range []string{"twitter", "fb15k"} {
		t.Run(name, func(t *testing.T) {
			p, err := mustPreset(t, name).Scaled(0.0005)
			require.NoError(t, err)
			p.Edges = 20_000
			h1, n1 := edgeHash(t, p, 42, 10_000)
			h2, n2 := edgeHash(t, p, 42, 10_000)
			h3, _ := edgeHash(t, p, 43, 10_000)
			assert.Equal(t, h1, h2)
			assert.Equal(t, n1, n2)
			assert.NotEqual(t, h1, h3)
		})
	}
}

func TestGenerateShape(t *testing.T) {
	tests := []struct {
		name string
		p    Preset
	}{
		{"social", Preset{"s", 20_000, 400_000, 1, "dot"}},
		{"kg", Preset{"k", 20_000, 400_000, 300, "complex"}},
		{"tiny", Preset{"t", 100, 5_000, 2, "complex"}},
		{"no edges", Preset{"z", 100, 0, 1, "dot"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			comm := communitiesOf(p, 7)
			k := Communities(p.Nodes)
			deg := make([]int64, p.Nodes)
			rels := make([]int64, p.Relations)
			var n, inTarget, inOwn, selfLoops, outOfRange int64
			err := Generate(p, 7, func(src, rel, dst int64) error {
				n++
				if src < 0 || src >= p.Nodes || dst < 0 || dst >= p.Nodes || rel < 0 || rel >= int64(p.Relations) {
					outOfRange++
					return nil
				}
				if src == dst {
					selfLoops++
				}
				deg[src]++
				deg[dst]++
				rels[rel]++
				if comm[dst] == TargetCommunity(comm[src], rel, p.Relations, k) {
					inTarget++
				}
				if comm[dst] == comm[src] {
					inOwn++
				}
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, p.Edges, n, "exact edge count")
			require.Zero(t, outOfRange, "ids in range")
			require.Zero(t, selfLoops, "self loops")
			if p.Edges < 100_000 {
				return
			}

			// Heavy tail: the hubs have tens of times the mean degree, and
			// the top 1% of nodes hold far more than 1% of the endpoints.
			mean := 2 * float64(p.Edges) / float64(p.Nodes)
			var maxDeg int64
			for _, d := range deg {
				maxDeg = max(maxDeg, d)
			}
			t.Logf("max degree %d, mean %.1f, top 1%% share %.3f, in target %.4f, in own %.4f",
				maxDeg, mean, topShare(deg, 0.01), float64(inTarget)/float64(n), float64(inOwn)/float64(n))
			assert.Greater(t, float64(maxDeg), 15*mean, "max degree %d, mean %.1f", maxDeg, mean)
			assert.Greater(t, topShare(deg, 0.01), 0.05)

			// Planted structure: μ of the edges aim at the target community,
			// and a background draw lands there with probability ≈ 1/K.
			want := CommunityAffinity + (1-CommunityAffinity)/float64(k)
			assert.InDelta(t, want, float64(inTarget)/float64(n), 0.01)
			if p.Relations > 1 {
				// Relations map communities elsewhere: few edges stay home.
				assert.Less(t, float64(inOwn)/float64(n), 0.1)
				// Relations are uniform.
				for r, c := range rels {
					assert.InDelta(t, float64(n)/float64(p.Relations), float64(c), 0.25*float64(n)/float64(p.Relations), "relation %d", r)
				}
			}
		})
	}
}

// communitiesOf rebuilds the community assignment Generate uses for p and
// seed (the first draws of its stream).
func communitiesOf(p Preset, seed int64) []int32 {
	return assignCommunities(rand.New(newPCG(seed)), p.Nodes, Communities(p.Nodes))
}

func topShare(deg []int64, frac float64) float64 {
	d := slices.Clone(deg)
	slices.Sort(d)
	slices.Reverse(d)
	var top, all int64
	for i, x := range d {
		if i < int(frac*float64(len(d))) {
			top += x
		}
		all += x
	}
	return float64(top) / float64(all)
}

func TestCommunitiesBalanced(t *testing.T) {
	p := Preset{"s", 10_007, 0, 1, "dot"}
	comm := communitiesOf(p, 1)
	k := Communities(p.Nodes)
	size := make([]int, k)
	for _, c := range comm {
		size[c]++
	}
	for c, s := range size {
		assert.InDelta(t, float64(p.Nodes)/float64(k), float64(s), 1, "community %d", c)
	}
}

func TestGenerateMemoryIndependentOfEdges(t *testing.T) {
	allocated := func(edges int64) uint64 {
		p := Preset{"m", 5_000, edges, 10, "complex"}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		require.NoError(t, Generate(p, 1, func(_, _, _ int64) error { return nil }))
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := allocated(1_000), allocated(1_000_000)
	assert.Less(t, large, small+64<<10, "allocated %d bytes for 1k edges, %d for 1M", small, large)
}

func TestGenerateErrors(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := Generate(Preset{"s", 1000, 10_000, 1, "dot"}, 1, func(_, _, _ int64) error {
		n++
		if n == 5 {
			return stop
		}
		return nil
	})
	assert.Same(t, stop, err, "emit's error unchanged")
	assert.Equal(t, 5, n)

	bad := []struct {
		p    Preset
		want string
	}{
		{Preset{"a", 99, 10, 1, "dot"}, `graph: preset "a": 99 nodes, want between 100 and 2147483647`},
		{Preset{"b", 1 << 31, 10, 1, "dot"}, `graph: preset "b": 2147483648 nodes, want between 100 and 2147483647`},
		{Preset{"c", 100, -1, 1, "dot"}, `graph: preset "c": negative edge count -1`},
		{Preset{"d", 100, 10, 0, "dot"}, `graph: preset "d": 0 relations, want at least 1`},
	}
	for _, tc := range bad {
		err := Generate(tc.p, 1, func(_, _, _ int64) error { return nil })
		require.Error(t, err)
		assert.Equal(t, tc.want, err.Error())
	}
	assert.Error(t, Generate(Preset{"s", 1000, 10, 1, "dot"}, 1, nil))
}

func TestAliasTable(t *testing.T) {
	w := []float64{1, 2, 3, 4, 0.5, 9.5}
	nodes := []int32{10, 11, 12, 13, 14, 15}
	tab := make([]aliasEntry, len(w))
	buildAlias(tab, nodes, w, make([]float64, len(w)), make([]int32, len(w)))
	rng := newPCG(3)
	counts := map[int32]int{}
	const draws = 400_000
	for range draws {
		counts[draw(tab, rng.Uint64())]++
	}
	for i, x := range w {
		assert.InDelta(t, x/20, float64(counts[nodes[i]])/draws, 0.003, "node %d", nodes[i])
	}
}

// BenchmarkGenerate measures Generate on Twitter at scale 0.002 (83,200
// nodes, 2.92M edges), table building included.
func BenchmarkGenerate(b *testing.B) {
	p, err := mustPreset(b, "twitter").Scaled(0.002)
	require.NoError(b, err)
	var sink int64
	for b.Loop() {
		if err := Generate(p, 1, func(src, rel, dst int64) error {
			sink += src ^ dst
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(p.Edges)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
	_ = sink
}

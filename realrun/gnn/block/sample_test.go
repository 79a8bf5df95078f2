package block

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/data"
)

// graphOf builds an undirected graph of n nodes from edges (self loops and
// repeats dropped), in the form data.Load gives.
func graphOf(n int, edges [][2]int32) *data.Graph {
	adj := make([][]int32, n)
	for _, e := range edges {
		if e[0] != e[1] {
			adj[e[0]] = append(adj[e[0]], e[1])
			adj[e[1]] = append(adj[e[1]], e[0])
		}
	}
	g := &data.Graph{Names: make([]string, n), Ptr: make([]int64, 1, n+1)}
	for v, a := range adj {
		slices.Sort(a)
		a = slices.Compact(a)
		g.Nbr = append(g.Nbr, a...)
		g.Ptr = append(g.Ptr, int64(len(g.Nbr)))
		g.Names[v] = string(rune('a' + v%26))
	}
	return g
}

// randomGraph has n nodes whose degrees vary from 0 (node 0 is isolated)
// to about 2·meanDeg, drawn from seed.
func randomGraph(n, meanDeg int, seed uint64) *data.Graph {
	rng := rand.New(rand.NewPCG(seed, 7))
	var edges [][2]int32
	for v := 1; v < n; v++ {
		k := rng.IntN(meanDeg + 1) // each edge counts at both ends
		for range k {
			u := 1 + rng.IntN(n-1)
			edges = append(edges, [2]int32{int32(v), int32(u)})
		}
	}
	return graphOf(n, edges)
}

// checkBatch asserts every invariant of a batch sampled from g with
// fanouts for seeds.
func checkBatch(t *testing.T, g *data.Graph, fanouts []int, seeds []int32, b *Batch) {
	t.Helper()
	require.Len(t, b.Blocks, len(fanouts))
	if len(seeds) == 0 {
		assert.Empty(t, b.Output(), "output nodes")
	} else {
		assert.Equal(t, seeds, b.Output(), "output nodes")
	}
	for l := range b.Blocks {
		blk := &b.Blocks[l]
		require.Len(t, blk.Ptr, blk.NumDst+1, "block %d Ptr", l)
		require.Equal(t, int32(0), blk.Ptr[0])
		require.Equal(t, len(blk.Nbr), int(blk.Ptr[blk.NumDst]))
		if l+1 < len(b.Blocks) {
			require.Equal(t, b.Blocks[l+1].Src, blk.Src[:blk.NumDst], "block %d's destinations are block %d's sources", l, l+1)
		}
		seen := map[int32]bool{}
		for _, v := range blk.Src {
			require.False(t, seen[v], "block %d: source %d twice", l, v)
			seen[v] = true
		}
		next := int32(blk.NumDst) // the next new source, in first-seen order
		for i := 0; i < blk.NumDst; i++ {
			v := blk.Src[i]
			nb := g.Neighbors(v)
			got := blk.Nbr[blk.Ptr[i]:blk.Ptr[i+1]]
			var glob []int32
			mine := map[int32]bool{}
			for _, j := range got {
				require.True(t, j >= 0 && int(j) < len(blk.Src), "block %d: local index %d out of range", l, j)
				require.NotEqual(t, int32(i), j, "block %d: destination %d is its own neighbour", l, i)
				u := blk.Src[j]
				assert.False(t, mine[u], "block %d: destination %d draws %d twice", l, v, u)
				mine[u] = true
				_, real := slices.BinarySearch(nb, u)
				assert.True(t, real, "block %d: %d is not a neighbour of %d", l, u, v)
				glob = append(glob, u)
				if j >= int32(blk.NumDst) {
					require.LessOrEqual(t, j, next, "block %d: sources not in first-seen order", l)
					if j == next {
						next++
					}
				}
			}
			switch f := fanouts[l]; {
			case f == Full:
				assert.Equal(t, nb, append([]int32{}, glob...)[:len(glob):len(glob)], "block %d: Full gives every neighbour of %d in order", l, v)
			default:
				assert.Len(t, got, min(f, len(nb)), "block %d: neighbours of %d (degree %d, fanout %d)", l, v, len(nb), f)
			}
		}
		assert.Equal(t, int(next), len(blk.Src), "block %d: every extra source is someone's neighbour", l)
	}
}

func TestSampleInvariants(t *testing.T) {
	g := randomGraph(300, 12, 1)
	small := graphOf(4, [][2]int32{{0, 1}, {1, 2}}) // node 3 isolated
	cases := []struct {
		name    string
		g       *data.Graph
		fanouts []int
		seeds   []int32
	}{
		{"two layers", g, []int{3, 5}, []int32{5, 17, 0, 250, 99}},
		{"full and sampled", g, []int{Full, 4}, []int32{1, 2, 3}},
		{"fanout over every degree", g, []int{100, 100}, []int32{8, 9}},
		{"degree about fanout (shuffle path)", g, []int{9, 11, 13}, []int32{10, 20, 30, 40}},
		{"mlp: no edges", g, []int{0, 0, 0}, []int32{4, 2, 7}},
		{"one layer full", g, []int{Full}, []int32{299, 0, 150}},
		{"isolated and tiny", small, []int{2, Full}, []int32{3, 1}},
		{"no seeds", g, []int{2, 2}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewSampler(c.g, c.fanouts)
			for seed := uint64(0); seed < 5; seed++ {
				b := s.Sample(c.seeds, rand.New(rand.NewPCG(seed, 3)))
				checkBatch(t, c.g, c.fanouts, c.seeds, b)
			}
		})
	}
}

func TestSampleFanoutZero(t *testing.T) {
	g := randomGraph(100, 8, 2)
	b := NewSampler(g, []int{0, 0}).Sample([]int32{3, 1, 4}, rand.New(rand.NewPCG(1, 1)))
	for _, blk := range b.Blocks {
		assert.Equal(t, []int32{3, 1, 4}, blk.Src)
		assert.Equal(t, 3, blk.NumDst)
		assert.Equal(t, []int32{0, 0, 0, 0}, blk.Ptr)
		assert.Empty(t, blk.Nbr)
	}
}

func TestSampleDeterminism(t *testing.T) {
	g := randomGraph(500, 20, 3)
	seeds := []int32{1, 2, 3, 4, 5, 6, 7, 8}
	s := NewSampler(g, []int{5, 10})
	a := s.Sample(seeds, rand.New(rand.NewPCG(9, 9)))
	b := s.Sample(seeds, rand.New(rand.NewPCG(9, 9)))
	c := NewSampler(g, []int{5, 10}).Sample(seeds, rand.New(rand.NewPCG(9, 9)))
	d := s.Sample(seeds, rand.New(rand.NewPCG(10, 9)))
	assert.Equal(t, a, b, "same seed, same sampler")
	assert.Equal(t, a, c, "same seed, new sampler")
	assert.NotEqual(t, a, d, "different seeds")
	// SampleInto over a used batch gives the same batch.
	e := s.SampleInto(d, seeds, rand.New(rand.NewPCG(9, 9)))
	assert.Equal(t, a, e)
}

// TestSampleUniform checks that both drawing paths (rejection when the
// degree is at least twice the fanout, partial shuffle otherwise) pick
// each neighbour, and each neighbour first, equally often.
func TestSampleUniform(t *testing.T) {
	for _, c := range []struct{ deg, fanout int }{{12, 3}, {5, 3}, {7, 6}} {
		var edges [][2]int32
		for u := 1; u <= c.deg; u++ {
			edges = append(edges, [2]int32{0, int32(u)})
		}
		g := graphOf(c.deg+1, edges)
		s := NewSampler(g, []int{c.fanout})
		rng := rand.New(rand.NewPCG(5, uint64(c.deg)))
		const trials = 20000
		count := make([]float64, c.deg+1)
		first := make([]float64, c.deg+1)
		for range trials {
			blk := s.Sample([]int32{0}, rng).Blocks[0]
			for k, j := range blk.Nbr {
				count[blk.Src[j]]++
				if k == 0 {
					first[blk.Src[j]]++
				}
			}
		}
		for u := 1; u <= c.deg; u++ {
			assert.InDelta(t, float64(c.fanout)/float64(c.deg), count[u]/trials, 0.02, "deg %d fanout %d: neighbour %d", c.deg, c.fanout, u)
			assert.InDelta(t, 1/float64(c.deg), first[u]/trials, 0.015, "deg %d fanout %d: neighbour %d first", c.deg, c.fanout, u)
		}
	}
}

func TestSampleIntoNoAllocs(t *testing.T) {
	g := randomGraph(2000, 30, 4)
	s := NewSampler(g, []int{10, 25})
	seeds := []int32{1, 2, 3, 50, 60, 70, 800, 900}
	rng := rand.New(rand.NewPCG(1, 2))
	b := s.Sample(seeds, rng)
	for range 10 {
		s.SampleInto(b, seeds, rng)
	}
	allocs := testing.AllocsPerRun(20, func() { s.SampleInto(b, seeds, rng) })
	assert.Zero(t, allocs)
}

func TestFullGraph(t *testing.T) {
	g := randomGraph(50, 6, 5)
	b := FullGraph(g, 3)
	require.Len(t, b.Blocks, 3)
	for _, blk := range b.Blocks {
		require.Equal(t, 50, blk.NumDst)
		require.Len(t, blk.Src, 50)
		for i, v := range blk.Src {
			assert.Equal(t, int32(i), v)
			got := blk.Nbr[blk.Ptr[i]:blk.Ptr[i+1]]
			assert.Equal(t, g.Neighbors(int32(i)), got)
		}
	}
	checkBatch(t, g, []int{Full, Full, Full}, b.Output(), b)
	// A batch of every node with full fanouts has the same edges, with
	// sources renumbered.
	all := make([]int32, 50)
	for i := range all {
		all[i] = int32(i)
	}
	sb := NewSampler(g, []int{Full, Full, Full}).Sample(all, rand.New(rand.NewPCG(1, 1)))
	assert.Equal(t, b.Blocks[2].Src, sb.Blocks[2].Src)
	assert.Equal(t, b.Blocks[2].Ptr, sb.Blocks[2].Ptr)
	assert.Equal(t, b.Blocks[2].Nbr, sb.Blocks[2].Nbr)
	assert.Empty(t, FullGraph(&data.Graph{}, 2).Blocks[0].Src)
}

func TestNeighborhood(t *testing.T) {
	g := randomGraph(200, 10, 6)
	dst := []int32{7, 3, 150, 0}
	blk := Neighborhood(g, dst)
	b := &Batch{Blocks: []Block{*blk}}
	checkBatch(t, g, []int{Full}, dst, b)
	want := NewSampler(g, []int{Full}).Sample(dst, nil).Blocks[0]
	assert.Equal(t, want.Src, blk.Src)
	assert.Equal(t, want.Nbr, blk.Nbr)
	// The pooled index serves another graph next.
	g2 := randomGraph(20, 3, 7)
	checkBatch(t, g2, []int{Full}, []int32{19, 1}, &Batch{Blocks: []Block{*Neighborhood(g2, []int32{19, 1})}})
}

// BenchmarkSample samples batches at a Reddit-like shape: 50,000 nodes of
// mean degree about 100, 1,024 seeds, fanouts 10,25. ns/edge is by the
// wall clock, cpu-ns/edge by the thread's CPU time (the machine is
// shared).
func BenchmarkSample(b *testing.B) {
	const n = 50000
	rng := rand.New(rand.NewPCG(1, 1))
	var edges [][2]int32
	for range n * 50 {
		edges = append(edges, [2]int32{int32(rng.IntN(n)), int32(rng.IntN(n))})
	}
	g := graphOf(n, edges)
	s := NewSampler(g, []int{10, 25})
	perm := rng.Perm(n)
	seeds := make([]int32, 1024)
	var batch *Batch
	edgesDrawn := 0
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	c0 := threadCPU()
	for i := 0; b.Loop(); i++ {
		for k := range seeds {
			seeds[k] = int32(perm[(i*1024+k)%n])
		}
		batch = s.SampleInto(batch, seeds, rng)
		for _, blk := range batch.Blocks {
			edgesDrawn += len(blk.Nbr)
		}
	}
	cpu := threadCPU() - c0
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(edgesDrawn), "ns/edge")
	b.ReportMetric(cpu*1e9/float64(edgesDrawn), "cpu-ns/edge")
	b.ReportMetric(float64(edgesDrawn)/float64(b.N), "edges/batch")
	b.ReportMetric(float64(len(batch.Blocks[0].Src)), "input-nodes")
}

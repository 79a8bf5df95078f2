package split

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
)

// needMETIS skips a test that runs gpmetis when it is missing, unless
// TIERFLOW_METIS_REQUIRED is set (make test sets it), when it fails.
func needMETIS(t testing.TB) {
	t.Helper()
	if err := METISAvailable(); err != nil {
		if os.Getenv("TIERFLOW_METIS_REQUIRED") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// graphs caches the generated graphs the tests share.
var graphs sync.Map // name@scale → *data.Graph

func genGraph(t testing.TB, name string, scale float64) *data.Graph {
	t.Helper()
	key := fmt.Sprint(name, "@", scale)
	if g, ok := graphs.Load(key); ok {
		return g.(*data.Graph)
	}
	g, err := data.Generate(name, scale, 1)
	require.NoError(t, err)
	graphs.Store(key, g)
	return g
}

// sample draws a batch of n training nodes of g with fanouts (of any
// nodes when g has fewer than n training nodes).
func sample(g *data.Graph, n int, fanouts []int, seed uint64) *block.Batch {
	rng := rand.New(rand.NewPCG(seed, 2))
	train := slices.Clone(g.Train)
	if len(train) < n {
		train = make([]int32, g.N())
		for v := range train {
			train[v] = int32(v)
		}
	}
	rng.Shuffle(len(train), func(i, j int) { train[i], train[j] = train[j], train[i] })
	return block.NewSampler(g, fanouts).Sample(train[:min(n, len(train))], rng)
}

// smallGraph is a generated graph with ogbn-arxiv's shape, about 850
// nodes of mean degree 14.
func smallGraph(t testing.TB) *data.Graph { return genGraph(t, "ogbn-arxiv", 0.005) }

// checkPartition asserts that parts is a valid split of n positions into
// k parts.
func checkPartition(t *testing.T, parts [][]int32, n, k int) {
	t.Helper()
	require.Len(t, parts, k)
	seen := make([]bool, n)
	for i, p := range parts {
		require.NotEmpty(t, p, "part %d", i)
		require.True(t, slices.IsSorted(p), "part %d ascending", i)
		for _, v := range p {
			require.True(t, v >= 0 && int(v) < n, "position %d in range", v)
			require.False(t, seen[v], "position %d twice", v)
			seen[v] = true
		}
	}
	for v, s := range seen {
		require.True(t, s, "position %d in no part", v)
	}
}

func TestParseMethod(t *testing.T) {
	for _, m := range Methods {
		got, err := ParseMethod(string(m))
		require.NoError(t, err)
		assert.Equal(t, m, got)
	}
	got, err := ParseMethod(" REG ")
	require.NoError(t, err)
	assert.Equal(t, REG, got)
	_, err = ParseMethod("spectral")
	assert.ErrorContains(t, err, `"spectral"`)
	assert.ErrorContains(t, err, "reg, range, random, metis")
	assert.Equal(t, REG, Methods[0], "the default first")
}

func TestSplitValid(t *testing.T) {
	g := smallGraph(t)
	batches := map[string]*block.Batch{
		"1 layer":   sample(g, 100, []int{5}, 1),
		"2 layers":  sample(g, 200, []int{4, 6}, 2),
		"3 layers":  sample(g, 150, []int{3, 4, 5}, 3),
		"mlp":       sample(g, 90, []int{0, 0}, 4),
		"no fanout": sample(g, 10, []int{0}, 5),
	}
	for name, b := range batches {
		n := len(b.Output())
		for _, m := range Methods {
			for _, k := range []int{1, 2, 3, 7, n} {
				t.Run(fmt.Sprintf("%s/%s/k=%d", name, m, k), func(t *testing.T) {
					if m.UsesMETIS() && k > 1 {
						needMETIS(t)
					}
					parts, err := Split(b, k, m, 9)
					require.NoError(t, err)
					checkPartition(t, parts, n, k)
					sizes := make([]int, k)
					for i, p := range parts {
						sizes[i] = len(p)
					}
					if m == Range || m == Random || !m.UsesMETIS() {
						assert.LessOrEqual(t, slices.Max(sizes)-slices.Min(sizes), 1, "sizes %v", sizes)
					}
					assert.LessOrEqual(t, slices.Max(sizes), maxPart(n, k), "sizes %v", sizes)
					if m.UsesMETIS() && slices.Max(b.Blocks[len(b.Blocks)-1].Ptr) == 0 {
						assert.Equal(t, rangeParts(n, k), parts, "no edge to cut: range's parts")
					}
					if m == Range {
						for i := 1; i < k; i++ {
							assert.Equal(t, parts[i-1][len(parts[i-1])-1]+1, parts[i][0], "contiguous")
						}
					}
				})
			}
		}
	}
}

func TestSplitErrors(t *testing.T) {
	g := smallGraph(t)
	b := sample(g, 20, []int{3, 3}, 1)
	for _, c := range []struct {
		name string
		b    *block.Batch
		k    int
		m    Method
		want string
	}{
		{"k=0", b, 0, Range, "at least 1"},
		{"k>n", b, 21, REG, "21 micro-batches for 20 output nodes"},
		{"method", b, 2, "spectral", "unknown method"},
		{"nil", nil, 2, Range, "no blocks"},
		{"no blocks", &block.Batch{}, 2, Range, "no blocks"},
		{"no outputs", sample(g, 0, []int{3}, 1), 1, Range, "no output nodes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Split(c.b, c.k, c.m, 1)
			assert.ErrorContains(t, err, c.want)
		})
	}
}

func TestMETISMissing(t *testing.T) {
	old := GPMETIS
	t.Cleanup(func() { GPMETIS = old })
	GPMETIS = "gpmetis-not-installed"
	err := METISAvailable()
	require.Error(t, err)
	assert.ErrorContains(t, err, "apt-get install metis")
	assert.ErrorContains(t, err, "make metis-deps")
	b := sample(smallGraph(t), 40, []int{3, 3}, 1)
	for _, m := range []Method{REG, METIS} {
		_, err := Split(b, 2, m, 1)
		assert.ErrorContains(t, err, "metis-deps", "%s", m)
		_, err = Split(b, 1, m, 1)
		assert.NoError(t, err, "k = 1 needs no METIS")
	}
	_, err = Split(b, 2, Range, 1)
	assert.NoError(t, err)

	GPMETIS = "false" // runs, fails, writes no partition
	if METISAvailable() == nil {
		_, err = Split(b, 2, REG, 1)
		assert.ErrorContains(t, err, "split: reg of 40 output nodes into 2: gpmetis on 40 nodes")
	}
}

// handBatch is a one-layer batch of 6 outputs: the even ones share
// neighbour 6, the odd ones neighbour 7, and 5 also reads 4's row (the
// only edge of the batch's own graph among outputs).
func handBatch() *block.Batch {
	return &block.Batch{Blocks: []block.Block{{
		Src:    []int32{10, 11, 12, 13, 14, 15, 16, 17},
		NumDst: 6,
		Ptr:    []int32{0, 1, 2, 3, 4, 5, 7},
		Nbr:    []int32{6, 7, 6, 7, 6, 7, 4},
	}}}
}

func TestREGGraph(t *testing.T) {
	g := regGraph(&handBatch().Blocks[0])
	w := map[[2]int32]int32{}
	for v := int32(0); v < int32(g.n()); v++ {
		for e := g.ptr[v]; e < g.ptr[v+1]; e++ {
			w[[2]int32{v, g.adj[e]}] = g.wgt[e]
		}
	}
	// R(0)={0,6} R(1)={1,7} R(2)={2,6} R(3)={3,7} R(4)={4,6} R(5)={5,7,4}
	want := map[[2]int32]int32{
		{0, 2}: 1, {0, 4}: 1, {2, 4}: 1, {1, 3}: 1, {1, 5}: 1, {3, 5}: 1, {4, 5}: 1,
	}
	for e, x := range want {
		want[[2]int32{e[1], e[0]}] = x
	}
	assert.Equal(t, want, w)

	// Rows 6 and 7 have 3 readers each, row 4 two.
	old := REGMaxReaders
	t.Cleanup(func() { REGMaxReaders = old })
	REGMaxReaders = 2
	g = regGraph(&handBatch().Blocks[0])
	assert.Equal(t, []int32{0, 0, 0, 0, 0, 1, 2}, g.ptr, "only the edge 4–5 (row 4) is left")
	assert.Equal(t, []int32{5, 4}, g.adj)
	assert.Equal(t, []int32{1, 1}, g.wgt)
}

func TestOutputGraph(t *testing.T) {
	g := outputGraph(&handBatch().Blocks[0])
	var edges [][2]int32
	for v := int32(0); v < int32(g.n()); v++ {
		for e := g.ptr[v]; e < g.ptr[v+1]; e++ {
			edges = append(edges, [2]int32{v, g.adj[e]})
		}
	}
	assert.Equal(t, [][2]int32{{4, 5}, {5, 4}}, edges, "one edge, listed at both ends, once")
	assert.Nil(t, g.wgt)
}

func TestREGHandSplit(t *testing.T) {
	needMETIS(t)
	b := handBatch()
	parts, err := Split(b, 2, REG, 1)
	require.NoError(t, err)
	checkPartition(t, parts, 6, 2)
	assert.ElementsMatch(t, [][]int32{{0, 2, 4}, {1, 3, 5}}, parts, "the two groups that share rows")
	s := Measure(b, parts)
	assert.Equal(t, 2, s.K)
	assert.Equal(t, 8, s.Inputs)
	assert.ElementsMatch(t, []int{4, 5}, s.MicroInputs)
	assert.Equal(t, 1, s.Redundant, "row 4 read twice")
	s = Measure(b, [][]int32{{0, 1, 2}, {3, 4, 5}})
	assert.Equal(t, Stats{K: 2, Inputs: 8, MicroInputs: []int{5, 5}, Redundant: 2}, s, "range reads 6 and 7 twice")
}

func TestRebalance(t *testing.T) {
	// A path of 8 nodes, METIS-like assignment with empty and heavy parts.
	g := &graph{ptr: []int32{0}}
	for v := int32(0); v < 8; v++ {
		if v > 0 {
			g.adj = append(g.adj, v-1)
		}
		if v < 7 {
			g.adj = append(g.adj, v+1)
		}
		g.ptr = append(g.ptr, int32(len(g.adj)))
	}
	for _, c := range []struct {
		k      int
		assign []int32
	}{
		{4, []int32{0, 0, 0, 0, 0, 0, 0, 0}},
		{4, []int32{0, 0, 1, 1, 1, 1, 3, 3}},
		{8, []int32{0, 0, 1, 1, 2, 2, 3, 3}},
		{2, []int32{0, 0, 0, 0, 0, 1, 1, 1}},
		{3, []int32{2, 2, 2, 2, 2, 2, 2, 2}},
	} {
		t.Run(fmt.Sprint(c.k, c.assign), func(t *testing.T) {
			a := slices.Clone(c.assign)
			g.rebalance(a, c.k)
			checkPartition(t, partsOf(a, c.k), 8, c.k)
			for _, p := range partsOf(a, c.k) {
				assert.LessOrEqual(t, len(p), maxPart(8, c.k))
			}
		})
	}
	// A balanced assignment stays as it is.
	a := []int32{0, 0, 0, 0, 1, 1, 1, 1}
	g.rebalance(a, 2)
	assert.Equal(t, []int32{0, 0, 0, 0, 1, 1, 1, 1}, a)
}

func TestDeterministic(t *testing.T) {
	b := sample(smallGraph(t), 300, []int{5, 8}, 7)
	for _, m := range Methods {
		t.Run(string(m), func(t *testing.T) {
			if m.UsesMETIS() {
				needMETIS(t)
			}
			p1, err := Split(b, 4, m, 11)
			require.NoError(t, err)
			p2, err := Split(b, 4, m, 11)
			require.NoError(t, err)
			assert.Equal(t, p1, p2, "same seed, same parts")
			if m == Random {
				p3, err := Split(b, 4, m, 12)
				require.NoError(t, err)
				assert.NotEqual(t, p1, p3, "another seed, other parts")
			}
		})
	}
}

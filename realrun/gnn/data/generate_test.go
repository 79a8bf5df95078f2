package data

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testScales keep every preset's test graph small (reddit keeps its mean
// degree of 492, so it stays the largest).
var testScales = map[string]float64{"cora": 1, "pubmed": 0.25, "reddit": 0.01, "ogbn-arxiv": 0.03, "ogbn-products": 0.003}

func TestGenerateShape(t *testing.T) {
	for _, p := range Presets {
		t.Run(p.Name, func(t *testing.T) {
			s := testScales[p.Name]
			g, err := Generate(p.Name, s, 1)
			require.NoError(t, err)
			assertValid(t, g)
			n := int(math.Round(float64(p.Nodes) * s))
			assert.Equal(t, n, g.N())
			assert.Equal(t, p.Features, g.F)
			assert.Len(t, g.Classes, p.Classes)
			// Neighbour entries: Edges·scale, up to rounding to whole
			// undirected edges.
			assert.InDelta(t, float64(p.Edges)*s, float64(g.Edges()), 2)
			assert.True(t, symmetric(g))
			used := make([]bool, p.Classes)
			for _, c := range g.Y {
				used[c] = true
			}
			assert.NotContains(t, used, false, "every class labels some node")
			if p.Planetoid {
				assert.Len(t, g.Train, 20*p.Classes)
				assert.Len(t, g.Valid, 500)
				assert.Len(t, g.Test, 1000)
			} else {
				assert.InDelta(t, p.TrainFrac*float64(n), len(g.Train), 1)
				assert.InDelta(t, p.ValidFrac*float64(n), len(g.Valid), 1)
				assert.Equal(t, n, len(g.Train)+len(g.Valid)+len(g.Test))
			}
			// Skewed degrees: the largest is a multiple of the mean (capped
			// near n/3, which keeps small reddits tame).
			maxDeg := 0
			for v := int32(0); int(v) < g.N(); v++ {
				maxDeg = max(maxDeg, len(g.Neighbors(v)))
			}
			assert.Greater(t, float64(maxDeg), 2*float64(g.Edges())/float64(n))
		})
	}
}

// TestGenerateSignal: the labels are in the features (a nearest-centroid
// classifier beats chance and the majority class) and in the edges
// (averaging each node's features with its neighbours' raises its
// accuracy clearly), so a GNN has something to beat an MLP with.
func TestGenerateSignal(t *testing.T) {
	for _, p := range Presets {
		t.Run(p.Name, func(t *testing.T) {
			g, err := Generate(p.Name, testScales[p.Name], 2)
			require.NoError(t, err)
			raw, avg := CentroidAccuracy(g, false), CentroidAccuracy(g, true)
			base := majority(g)
			t.Logf("%s: majority %.3f, nearest centroid raw %.3f, neighbour-averaged %.3f", p.Name, base, raw, avg)
			assert.Greater(t, raw, base+0.1, "raw features carry the class")
			assert.Greater(t, avg, raw+0.08, "neighbours carry the class")
			assert.Less(t, avg, 0.99, "the label noise caps the accuracy")
		})
	}
}

// TestGenerateSignalControl: without homophily (edges blind to the
// classes), averaging over neighbours no longer helps — the signal test
// above measures what the edges carry.
func TestGenerateSignalControl(t *testing.T) {
	for _, name := range []string{"cora", "ogbn-arxiv"} {
		p, err := LookupPreset(name)
		require.NoError(t, err)
		p.Homophily = 0
		g, err := generate(p, testScales[name], 2)
		require.NoError(t, err)
		raw, avg := CentroidAccuracy(g, false), CentroidAccuracy(g, true)
		t.Logf("%s without homophily: raw %.3f, neighbour-averaged %.3f", name, raw, avg)
		assert.Less(t, avg, raw+0.02)
	}
}

// majority is the test accuracy of always answering the commonest class.
func majority(g *Graph) float64 {
	count := make([]int, len(g.Classes))
	for _, v := range g.Test {
		count[g.Y[v]]++
	}
	best := 0
	for _, c := range count {
		best = max(best, c)
	}
	return float64(best) / float64(len(g.Test))
}

func TestGenerateDeterministic(t *testing.T) {
	a, err := Generate("ogbn-arxiv", 0.01, 7)
	require.NoError(t, err)
	b, err := Generate("arxiv", 0.01, 7)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	c, err := Generate("ogbn-arxiv", 0.01, 8)
	require.NoError(t, err)
	assert.NotEqual(t, a.Nbr, c.Nbr)
	assert.NotEqual(t, a.X, c.X)
	assert.NotEqual(t, a.Train, c.Train)
}

func TestGenerateBad(t *testing.T) {
	for _, c := range []struct {
		name  string
		scale float64
		err   string
	}{
		{"orkut", 1, `unknown dataset "orkut"`},
		{"cora", 1.5, "want 0 < scale ≤ 1"},
		{"cora", -1, "want 0 < scale ≤ 1"},
		{"cora", math.NaN(), "want 0 < scale ≤ 1"},
		{"cora", 0.01, "leaves 27 nodes (at least 100 needed)"},
		{"reddit", 0.002, "over half of all pairs"},
	} {
		_, err := Generate(c.name, c.scale, 1)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.err)
	}
}

func TestDefaultScale(t *testing.T) {
	g, err := Generate("cora", 0, 1)
	require.NoError(t, err)
	assert.Equal(t, 2708, g.N())
	assert.EqualValues(t, 10556, g.Edges())
}

func TestWriteFilesRoundTrip(t *testing.T) {
	g, err := Generate("cora", 0.2, 3)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "cora")
	require.NoError(t, WriteFiles(g, dir))
	got, st, err := Load(DirFiles(dir))
	require.NoError(t, err)
	assert.Equal(t, g, got)
	assert.Equal(t, g.Edges()/2, st.Edges)
	// Nothing but the layout's files (no temporary files left).
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{EdgesFile, NodesFile, FeaturesFile, LabelsFile, TrainFile, ValidFile, TestFile}, names)
}

func TestWriteFilesDirected(t *testing.T) {
	f := baseFiles(t, nil)
	f.Directed = true
	g, _, err := Load(f)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, WriteFiles(g, dir))
	df := DirFiles(dir)
	df.Directed = true
	got, _, err := Load(df)
	require.NoError(t, err)
	assert.Equal(t, g, got)
}

func TestWriteFilesRefuses(t *testing.T) {
	g, _, err := Load(baseFiles(t, nil))
	require.NoError(t, err)
	for _, c := range []struct {
		edit func(*Graph)
		err  string
	}{
		{func(g *Graph) { g.Names[0] = "#x" }, "starts with '#'"},
		{func(g *Graph) { g.Names[0] = "a\tb" }, "tab or line break"},
		{func(g *Graph) { g.Names[0] = " x" }, "blanks around it"},
		{func(g *Graph) { g.Names[1] = g.Names[0] }, "twice"},
		{func(g *Graph) { g.X = g.X[1:] }, "feature values"},
		{func(g *Graph) { g.Y[0] = 9 }, "class id 9"},
		{func(g *Graph) { g.Nbr[0] = 99 }, "out of range"},
	} {
		h := *g
		h.Names = append([]string(nil), g.Names...)
		h.Y = append([]int32(nil), g.Y...)
		h.Nbr = append([]int32(nil), g.Nbr...)
		c.edit(&h)
		err := WriteFiles(&h, t.TempDir())
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.err)
	}
}

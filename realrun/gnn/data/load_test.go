package data

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/graph"
)

// writeFiles writes name → content into a temporary directory and returns
// the paths by name.
func writeFiles(t *testing.T, files map[string]string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{}
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		out[name] = p
	}
	return out
}

// base is a small valid input: names with spaces, a header, a relation
// column, a self loop, a repeated edge and an isolated node ("lone").
var base = map[string]string{
	"edges.tsv": "head\trelation\ttail\n" +
		"New York\tnear\tBoston\n" +
		"Boston\tnear\tNew York\n" +
		"Boston\tnear\tParis\n" +
		"Paris\tself\tParis\n" +
		"Rome\tnear\tParis\n",
	"feat.tsv": "Paris\t1 2\n" +
		"New York\t3 4\n" +
		"Boston\t5\t6\n" + // tabs between values too
		"\n" +
		"Rome\t7 8\n" +
		"lone\t-1 1e-3\n",
	"labels.tsv": "Paris\teurope\nRome\teurope\nNew York\tamerica\nBoston\tamerica\nlone\tnowhere land\n",
	"train.txt":  "Paris\n\nBoston\n",
	"valid.txt":  "Rome\n",
	"test.txt":   "New York\nlone\n",
}

func baseFiles(t *testing.T, override map[string]string) Files {
	t.Helper()
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for k, v := range override {
		m[k] = v
	}
	p := writeFiles(t, m)
	f := Files{Edges: p["edges.tsv"], Features: p["feat.tsv"], Labels: p["labels.tsv"],
		TrainNodes: p["train.txt"], ValidNodes: p["valid.txt"], TestNodes: p["test.txt"]}
	if _, ok := m["names.txt"]; ok {
		f.FeatureNames = p["names.txt"]
	}
	if _, ok := m["feat.npy"]; ok {
		f.Features = p["feat.npy"]
	}
	return f
}

func TestLoad(t *testing.T) {
	g, st, err := Load(baseFiles(t, nil))
	require.NoError(t, err)
	// Ids follow the feature file.
	assert.Equal(t, []string{"Paris", "New York", "Boston", "Rome", "lone"}, g.Names)
	assert.Equal(t, 2, g.F)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6, 7, 8, -1, 1e-3}, g.X)
	assert.Equal(t, []int64{0, 2, 3, 5, 6, 6}, g.Ptr)
	assert.Equal(t, []int32{2, 3, 2, 0, 1, 0}, g.Nbr) // Paris: Boston, Rome; NY: Boston; Boston: Paris, NY; Rome: Paris
	assert.Equal(t, []string{"america", "europe", "nowhere land"}, g.Classes)
	assert.Equal(t, []int32{1, 0, 0, 1, 2}, g.Y)
	assert.Equal(t, []int32{0, 2}, g.Train)
	assert.Equal(t, []int32{3}, g.Valid)
	assert.Equal(t, []int32{1, 4}, g.Test)
	assert.Equal(t, Stats{Nodes: 5, Features: 2, Classes: 3, Edges: 5, Train: 2, Valid: 1, Test: 2, Skipped: map[string]int64{}}, st)
}

func TestLoadDirected(t *testing.T) {
	f := baseFiles(t, nil)
	f.Directed = true
	g, _, err := Load(f)
	require.NoError(t, err)
	// dst reads src: Paris ← Boston, Rome; NY ← Boston; Boston ← NY.
	assert.Equal(t, []int64{0, 2, 3, 4, 4, 4}, g.Ptr)
	assert.Equal(t, []int32{2, 3, 2, 1}, g.Nbr)
}

func TestLoadCSVEdges(t *testing.T) {
	f := baseFiles(t, map[string]string{"edges.tsv": "\"New York\",Boston\nBoston,Paris\nRome,Paris\n"})
	g, st, err := Load(f)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 2, 3, 5, 6, 6}, g.Ptr)
	assert.EqualValues(t, 3, st.Edges)
}

func npyBytes(t *testing.T, x []float32, rows, cols int) string {
	var b bytes.Buffer
	require.NoError(t, writeNPY(&b, x, rows, cols))
	return b.String()
}

func TestLoadNPY(t *testing.T) {
	f := baseFiles(t, map[string]string{
		"names.txt": "Paris\nNew York\nBoston\nRome\nlone\n",
		"feat.npy":  npyBytes(t, []float32{1, 2, 3, 4, 5, 6, 7, 8, -1, 1e-3}, 5, 2),
	})
	g, _, err := Load(f)
	require.NoError(t, err)
	want, _, err := Load(baseFiles(t, nil))
	require.NoError(t, err)
	assert.Equal(t, want, g)
}

// TestLoadBad: every refusal, and what Skip makes of those it may skip.
func TestLoadBad(t *testing.T) {
	nan := npyBytes(t, []float32{1, 2, 3, 4, 5, 6, 7, float32(math.NaN()), -1, 1}, 5, 2)
	names := "Paris\nNew York\nBoston\nRome\nlone\n"
	for _, c := range []struct {
		name     string
		files    map[string]string
		err      string // without Skip
		skipErr  string // with Skip ("" when it loads)
		skipped  map[string]int64
		nodes    int
		train    int
		skipNote string
	}{
		{name: "edge node without features",
			files:   map[string]string{"edges.tsv": "Paris\tBoston\nParis\tLyon\nLyon\tRome\nRome\tBoston\n"},
			err:     `edges.tsv:2: node "Lyon" has no features`,
			skipped: map[string]int64{SkipNoFeatures: 1, SkipEdgeLeftOut: 2}, nodes: 5, train: 2},
		{name: "duplicate feature row",
			files:   map[string]string{"feat.tsv": base["feat.tsv"] + "Paris\t9 9\n"},
			err:     `feat.tsv:7: duplicate node "Paris" (first on line 1)`,
			skipped: map[string]int64{SkipDupFeatures: 1}, nodes: 5, train: 2},
		{name: "NaN feature",
			files: map[string]string{"feat.tsv": strings.Replace(base["feat.tsv"], "7 8", "7 NaN", 1)},
			err:   `feat.tsv:5: node "Rome": feature 2 is NaN`,
			// Rome goes with its edge, its label and its valid entry.
			skipped: map[string]int64{SkipNonFinite: 1, SkipEdgeLeftOut: 1, SkipUnknownLabel: 1, SkipUnknownSplit: 1}, nodes: 4, train: 2},
		{name: "infinite feature (float32 overflow)",
			files:   map[string]string{"feat.tsv": strings.Replace(base["feat.tsv"], "1 2", "1e39 2", 1)},
			err:     `feat.tsv:1: node "Paris": feature 1 is +Inf`,
			skipped: map[string]int64{SkipNonFinite: 1, SkipEdgeLeftOut: 3, SkipUnknownLabel: 1, SkipUnknownSplit: 1}, nodes: 4, train: 1}, // its self loop too
		{name: "NaN in .npy",
			files:   map[string]string{"names.txt": names, "feat.npy": nan},
			err:     `feat.npy: row 4 (node "Rome"): feature 2 is NaN`,
			skipped: map[string]int64{SkipNonFinite: 1, SkipEdgeLeftOut: 1, SkipUnknownLabel: 1, SkipUnknownSplit: 1}, nodes: 4, train: 2},
		{name: "duplicate name in the .npy names",
			files: map[string]string{"names.txt": "Paris\nNew York\nBoston\nRome\nParis\nlone\n",
				"feat.npy": npyBytes(t, make([]float32, 12), 6, 2)},
			err:     `names.txt:5: duplicate node "Paris" (first on line 1)`,
			skipped: map[string]int64{SkipDupFeatures: 1}, nodes: 5, train: 2},
		{name: "duplicate label",
			files:   map[string]string{"labels.tsv": base["labels.tsv"] + "Paris\tasia\n"},
			err:     `labels.tsv:6: duplicate node "Paris" (first on line 1)`,
			skipped: map[string]int64{SkipDupLabel: 1}, nodes: 5, train: 2},
		{name: "label of an unknown node",
			files:   map[string]string{"labels.tsv": "Oslo\teurope\n" + base["labels.tsv"]},
			err:     `labels.tsv:1: unknown node "Oslo"`,
			skipped: map[string]int64{SkipUnknownLabel: 1}, nodes: 5, train: 2},
		{name: "unknown split node",
			files:   map[string]string{"train.txt": "Paris\nOslo\nBoston\n"},
			err:     `train.txt:2: unknown node "Oslo"`,
			skipped: map[string]int64{SkipUnknownSplit: 1}, nodes: 5, train: 2},
		{name: "duplicate split node",
			files:   map[string]string{"train.txt": "Paris\nBoston\nParis\n"},
			err:     `train.txt:3: duplicate node "Paris" (first on line 1)`,
			skipped: map[string]int64{SkipDupSplit: 1}, nodes: 5, train: 2},
		{name: "split node without a label",
			files:   map[string]string{"labels.tsv": "Paris\teurope\nRome\teurope\nNew York\tamerica\nlone\tx\n"},
			err:     `train.txt:3: node "Boston" has no label`,
			skipped: map[string]int64{SkipUnlabelled: 1}, nodes: 5, train: 1},
		{name: "node in two splits",
			files: map[string]string{"test.txt": "New York\nParis\n"},
			err:   `test.txt:2: node "Paris" is also in`, skipErr: "also in"},
		{name: "empty training split",
			files: map[string]string{"train.txt": "\n\n"},
			err:   "train.txt: no training nodes", skipErr: "no training nodes"},
		{name: "training split empty after skipping",
			files: map[string]string{"train.txt": "Oslo\n"},
			err:   `unknown node "Oslo"`, skipErr: "train.txt: no training nodes left"},
		{name: "ragged feature rows",
			files: map[string]string{"feat.tsv": base["feat.tsv"] + "Oslo\t1 2 3\n"},
			err:   `feat.tsv:7: node "Oslo" has 3 feature values, but earlier rows have 2`, skipErr: "earlier rows have 2"},
		{name: "npy rows are not the names'",
			files: map[string]string{"names.txt": names + "Oslo\n", "feat.npy": nan},
			err:   "feat.npy: 5 rows, but", skipErr: "has 6 node names"},
		{name: "label line without a tab",
			files: map[string]string{"labels.tsv": "Paris europe\n"},
			err:   "labels.tsv:1: no tab between node and label", skipErr: "no tab"},
		{name: "label line with three fields",
			files: map[string]string{"labels.tsv": "Paris\teurope\tx\n"},
			err:   "more than two tab-separated fields", skipErr: "more than two"},
		{name: "empty label",
			files: map[string]string{"labels.tsv": "Paris\t \n"},
			err:   `labels.tsv:1: node "Paris": empty label`, skipErr: "empty label"},
		{name: "feature line without a tab",
			files: map[string]string{"feat.tsv": "Paris 1 2\n"},
			err:   "feat.tsv:1: no tab after the node name", skipErr: "no tab"},
		{name: "feature not a number",
			files: map[string]string{"feat.tsv": "Paris\t1 x2\n"},
			err:   `feat.tsv:1: node "Paris": feature 2, "x2", is not a number`, skipErr: "not a number"},
		{name: "no feature values",
			files: map[string]string{"feat.tsv": "Paris\t\n"},
			err:   `feat.tsv:1: node "Paris" has no feature values`, skipErr: "no feature values"},
		{name: "empty feature file",
			files: map[string]string{"feat.tsv": "\n"},
			err:   "feat.tsv: no feature rows", skipErr: "no feature rows"},
		{name: "binary feature file",
			files: map[string]string{"feat.tsv": "Paris\t1 2\n\x00\x01\n"},
			err:   "feat.tsv:2: not a text file", skipErr: "not a text file"},
		{name: "npy of float64",
			files: map[string]string{"names.txt": names, "feat.npy": strings.Replace(nan, "<f4", "<f8", 1)},
			err:   `feat.npy: an .npy array of "<f8", want little-endian float32`, skipErr: "<f8"},
		{name: "npy truncated",
			files: map[string]string{"names.txt": names, "feat.npy": nan[:len(nan)-3]},
			err:   "feat.npy: 165 bytes, but a 5 × 2 float32 array takes 168", skipErr: "takes 168"},
		{name: "not an npy",
			files: map[string]string{"names.txt": names, "feat.npy": "Paris\t1 2\n"},
			err:   "feat.npy: not an .npy file", skipErr: "not an .npy file"},
		{name: "no labels",
			files: map[string]string{"labels.tsv": ""},
			err:   "labels.tsv: no labels", skipErr: "no labels"},
		{name: "edge file without edges",
			files: map[string]string{"edges.tsv": "# nothing\n"},
			err:   "edges.tsv: no edges", skipErr: "no edges"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := baseFiles(t, c.files)
			_, _, err := Load(f)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.err)
			assert.NotContains(t, err.Error(), "\n")
			f.Skip = true
			g, st, err := Load(f)
			if c.skipErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.skipErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.skipped, st.Skipped)
			assert.Equal(t, c.nodes, g.N())
			assert.Len(t, g.Train, c.train)
			assertValid(t, g)
		})
	}
}

func TestLoadMissingFiles(t *testing.T) {
	f := baseFiles(t, nil)
	for _, c := range []struct {
		edit func(*Files)
		err  string
	}{
		{func(f *Files) { f.Edges = "" }, "no edge file"},
		{func(f *Files) { f.Labels = "" }, "no label file"},
		{func(f *Files) { f.TrainNodes = "" }, "no training split file"},
		{func(f *Files) { f.Features = "x.npy" }, "needs a file of its rows' node names"},
		{func(f *Files) { f.Labels = "/nonexistent/labels.tsv" }, "/nonexistent/labels.tsv"},
		{func(f *Files) { f.TestNodes = filepath.Dir(f.TestNodes) }, "is a directory"},
		{func(f *Files) { f.Format = graph.Format{Delimiter: "pipe"} }, "pipe"},
	} {
		g := f
		c.edit(&g)
		_, _, err := Load(g)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.err)
	}
}

// assertValid checks the Graph invariants.
func assertValid(t *testing.T, g *Graph) {
	t.Helper()
	n := g.N()
	require.Len(t, g.Ptr, n+1)
	require.Len(t, g.X, n*g.F)
	require.Len(t, g.Y, n)
	require.EqualValues(t, len(g.Nbr), g.Ptr[n])
	for v := int32(0); int(v) < n; v++ {
		nb := g.Neighbors(v)
		for i, u := range nb {
			require.True(t, u >= 0 && int(u) < n && u != v, "node %d neighbour %d", v, u)
			require.True(t, i == 0 || nb[i-1] < u, "node %d: neighbours not ascending", v)
		}
	}
	in := map[int32]bool{}
	for _, s := range [][]int32{g.Train, g.Valid, g.Test} {
		for _, v := range s {
			require.False(t, in[v], "node %d in two splits", v)
			in[v] = true
			require.GreaterOrEqual(t, g.Y[v], int32(0))
		}
	}
	for _, x := range g.X {
		require.False(t, math.IsNaN(float64(x)) || math.IsInf(float64(x), 0))
	}
}

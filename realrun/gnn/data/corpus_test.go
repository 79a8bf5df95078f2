package data

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadInputCorpus loads the gnn-* files of the bad-input corpus
// (testdata/bad) with the messages proposed for its cases.
func TestBadInputCorpus(t *testing.T) {
	dir := "../../../testdata/bad"
	p := func(name string) string { return filepath.Join(dir, name) }
	ok := Files{Edges: p("gnn-edges.tsv"), Features: p("gnn-features.tsv"), Labels: p("gnn-labels.tsv"),
		TrainNodes: p("gnn-train.txt"), ValidNodes: p("gnn-valid.txt"), TestNodes: p("gnn-test.txt")}
	g, _, err := Load(ok)
	require.NoError(t, err)
	assert.Equal(t, 6, g.N())
	for _, c := range []struct {
		edit func(*Files)
		err  string
	}{
		{func(f *Files) { f.Features = p("gnn-features-nan.tsv") }, `gnn-features-nan.tsv:2: node "b": feature 2 is NaN`},
		{func(f *Files) { f.Features = p("gnn-features-ragged.tsv") }, "gnn-features-ragged.tsv:2: node \"b\" has 3 feature values, but earlier rows have 2"},
		{func(f *Files) { f.Features = p("gnn-features-no-tab.tsv") }, "gnn-features-no-tab.tsv:1: no tab after the node name"},
		{func(f *Files) { f.Features = p("gnn-features-not-number.tsv") }, `gnn-features-not-number.tsv:2: node "b": feature 2, "one", is not a number`},
		{func(f *Files) { f.Features = p("gnn-features-duplicate.tsv") }, `gnn-features-duplicate.tsv:6: duplicate node "a" (first on line 1)`},
		{func(f *Files) { f.Edges = p("gnn-edges-no-features.tsv") }, `gnn-edges-no-features.tsv:2: node "z" has no features`},
		{func(f *Files) { f.Labels = p("gnn-labels-no-tab.tsv") }, "gnn-labels-no-tab.tsv:1: no tab between node and label"},
		{func(f *Files) { f.Labels = p("gnn-labels-unknown.tsv") }, `gnn-labels-unknown.tsv:3: unknown node "zz"`},
		{func(f *Files) { f.Labels = p("gnn-labels-duplicate.tsv") }, `gnn-labels-duplicate.tsv:3: duplicate node "a" (first on line 1)`},
		{func(f *Files) { f.TrainNodes = p("gnn-train-empty.txt") }, "gnn-train-empty.txt: no training nodes"},
		{func(f *Files) { f.TrainNodes = p("gnn-train-unknown.txt") }, `gnn-train-unknown.txt:2: unknown node "zz"`},
		{func(f *Files) { f.TrainNodes = p("gnn-train-unlabelled.txt") }, `gnn-train-unlabelled.txt:2: node "f" has no label`},
		{func(f *Files) { f.TrainNodes = p("gnn-train-duplicate.txt") }, `gnn-train-duplicate.txt:3: duplicate node "a" (first on line 1)`},
		{func(f *Files) { f.TestNodes = p("gnn-test-overlap.txt") }, `gnn-test-overlap.txt:2: node "a" is also in`},
	} {
		f := ok
		c.edit(&f)
		_, _, err := Load(f)
		require.Error(t, err, c.err)
		assert.Contains(t, err.Error(), c.err)
	}
}

package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWordNetSmall(t *testing.T) {
	g, err := WordNet("testdata/wordnet", 1)
	require.NoError(t, err)
	assertValid(t, g)
	assert.Equal(t, []string{"n.00001740", "n.00001930", "n.00002137", "v.00000002", "a.00000003", "a.00000004", "r.00000005"}, g.Names)
	assert.Equal(t, []string{"adj.all", "adv.all", "noun.Tops", "verb.body"}, g.Classes)
	assert.Equal(t, []int32{2, 2, 2, 3, 0, 0, 1}, g.Y)
	// entity–physical_entity, entity–abstraction, physical_entity–breathe
	// (a lexical pointer), able–capable (satellite named "a.").
	assert.Equal(t, []int64{0, 2, 4, 5, 6, 7, 8, 8}, g.Ptr)
	assert.Equal(t, []int32{1, 2, 0, 3, 0, 1, 5, 4}, g.Nbr)
	assert.Equal(t, WordNetFeatures, g.F)
	assert.Equal(t, 7, len(g.Train)+len(g.Valid)+len(g.Test))
	assert.Len(t, g.Train, 1)
	// "an entity that has physical existence": 4 words after the stop
	// words, each ±1, normalised.
	ss := float32(0)
	for _, x := range g.Row(1) {
		ss += x * x
	}
	assert.InDelta(t, 1, ss, 1e-5)
	assert.Equal(t, hashGloss("only just", g.F), g.Row(6))
	assert.Equal(t, hashGloss("Only, JUST!", g.F), g.Row(6))
	assert.Equal(t, make([]float32, g.F), hashGloss("of the and", g.F))
	// Seeded splits.
	h, err := WordNet("testdata/wordnet", 1)
	require.NoError(t, err)
	assert.Equal(t, g, h)
	// Its files read back the same.
	dir := t.TempDir()
	require.NoError(t, WriteFiles(g, dir))
	back, _, err := Load(DirFiles(dir))
	require.NoError(t, err)
	assert.Equal(t, g, back)
}

func TestWordNetBad(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata/wordnet", name))
		require.NoError(t, err)
		return string(b)
	}
	for _, c := range []struct {
		file, from, to, err string
	}{
		{"data.verb", "+ 00001930 n", "+ 00001999 n", "data.verb:1: a pointer to synset n.00001999, which no data file holds"},
		{"data.verb", "00000002 29", "00000002 77", "data.verb:1: lexicographer file 77 is not in the lexnames list"},
		{"data.adv", "000 |", "002 |", "data.adv:1: pointer count \"002\" does not match"},
		{"data.adj", "00000004 00 s 01", "00000004 00 s zz", "data.adj:2: word count \"zz\" is not hexadecimal"},
		{"data.adj", "00000004 00 s", "00000003 00 a", "data.adj:2: synset a.00000003 twice"},
		{"data.noun", "", "", ""},
	} {
		dir := t.TempDir()
		for _, f := range []string{"data.noun", "data.verb", "data.adj", "data.adv"} {
			s := read(f)
			if f == c.file {
				if c.from == "" {
					continue // leave the file out
				}
				s = strings.Replace(s, c.from, c.to, 1)
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644))
		}
		_, err := WordNet(dir, 1)
		require.Error(t, err)
		if c.err == "" {
			assert.Contains(t, err.Error(), "data.noun")
		} else {
			assert.Contains(t, err.Error(), c.err)
		}
	}
}

// TestWordNet reads Debian's WordNet (skipped where it is not installed)
// and checks that its labels are learnable from the glosses and carried
// by the pointers.
func TestWordNet(t *testing.T) {
	if _, err := os.Stat("/usr/share/wordnet/data.noun"); err != nil {
		t.Skip("no WordNet database (apt-get install wordnet-base)")
	}
	g, err := WordNet("/usr/share/wordnet", 1)
	require.NoError(t, err)
	assert.Equal(t, 117_659, g.N())
	assert.Len(t, g.Classes, 45)
	assert.Equal(t, "n.00001740", g.Names[0])
	assert.Equal(t, "noun.Tops", g.Classes[g.Y[0]])
	assert.True(t, symmetric(g))
	// Scored on 20,000 of the 94,127 test nodes, to keep the test short.
	h := *g
	h.Test = g.Test[:20_000]
	raw, avg := CentroidAccuracy(&h, false), CentroidAccuracy(&h, true)
	base := majority(&h)
	t.Logf("wordnet (20,000 test nodes): %d nodes, %d neighbour entries; majority %.3f, nearest centroid raw %.3f, neighbour-averaged %.3f", g.N(), g.Edges(), base, raw, avg)
	assert.Greater(t, raw, base+0.1)
	assert.Greater(t, avg, raw+0.08)
}

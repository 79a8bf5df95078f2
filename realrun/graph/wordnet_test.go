package graph

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two noun synsets and a satellite adjective in WordNet's data-file format
// (the license header lines start with two spaces).
const wnNoun = `  1 This software and database is being provided to you, the LICENSEE
00001740 03 n 01 entity 0 003 ~ 00001930 n 0000 ~ 00002137 n 0000 + 00003000 a 0101 | that which is perceived
00001930 03 n 02 physical_entity 0 thing 1 002 @ 00001740 n 0000 ! 00009999 n 0101 | an entity that has physical existence
`
const wnAdj = `00003000 00 s 01 able 0 001 & 00002098 a 0000 | able
`

func TestReadWordNet(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"data.noun": wnNoun, "data.verb": "", "data.adj": wnAdj, "data.adv": ""} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	ts, err := ReadWordNet(dir, WN18Relations)
	require.NoError(t, err)
	assert.Equal(t, []Triple{
		{"n.00001740", "_hyponym", "n.00001930"}, {"n.00001740", "_hyponym", "n.00002137"},
		{"n.00001740", "_derivationally_related_form", "a.00003000"},
		{"n.00001930", "_hypernym", "n.00001740"}, // "!" (antonym) is not a WN18 relation
		{"a.00003000", "_similar_to", "a.00002098"},
	}, ts)
	var buf bytes.Buffer
	require.NoError(t, WriteTriples(&buf, ts[:1]))
	assert.Equal(t, "n.00001740\t_hyponym\tn.00001930\n", buf.String())

	_, err = ReadWordNet(t.TempDir(), WN18Relations)
	assert.ErrorContains(t, err, "data.noun")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data.verb"), []byte("00000001 29 v 01 breathe 0 005 @ 1 v 0000\n"), 0o644))
	_, err = ReadWordNet(dir, WN18Relations)
	assert.ErrorContains(t, err, `data.verb:1: pointer count "005" does not match`)
}

func TestSplitKG(t *testing.T) {
	var ts []Triple
	for i := 0; i < 400; i++ {
		ts = append(ts, Triple{Src: "e" + string(rune('a'+i%20)), Rel: "r" + string(rune('a'+i%3)), Dst: "e" + string(rune('a'+(i*7+1)%20))})
	}
	s := SplitKG(ts, 1, 30, 1)
	assert.Len(t, s.Valid, 30)
	assert.Len(t, s.Test, 30)
	assert.Equal(t, len(ts)-countSelf(ts), len(s.Train)+len(s.Valid)+len(s.Test))
	again := SplitKG(ts, 1, 30, 1)
	assert.Equal(t, s, again, "seeded")
}

func countSelf(ts []Triple) int {
	n := 0
	for _, t := range ts {
		if t.Src == t.Dst {
			n++
		}
	}
	return n
}

func FuzzParseWordNet(f *testing.F) {
	f.Add(wnNoun)
	f.Add(wnAdj)
	f.Add("00000001 29 v 0z x")
	f.Fuzz(func(t *testing.T, s string) {
		_ = scanWordNet(strings.NewReader(s), "fuzz", func(Synset, string) error { return nil })
	})
}

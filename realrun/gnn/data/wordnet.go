package data

import (
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/tierflow/tierflow/realrun/graph"
)

// WordNetFeatures is the width of the hashed bag of words WordNet makes of
// each synset's gloss.
const WordNetFeatures = 512

// WordNetTrain and WordNetValid are the fractions of the synsets WordNet
// draws for training and validation; the rest (80%) is test.
const (
	WordNetTrain = 0.1
	WordNetValid = 0.1
)

// lexNames are the 45 lexicographer files of WordNet 3.0 (lexnames(5WN)),
// by number: used when the database directory has no lexnames file
// (Debian's wordnet-base installs none).
var lexNames = []string{
	"adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
	"noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
	"noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
	"noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
	"noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
	"verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition",
	"verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
	"verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather", "adj.ppl",
}

// WordNet returns a node-classification graph made from a WordNet 3.0
// database directory (Debian's wordnet-base: /usr/share/wordnet): one
// node per synset of data.noun, data.verb, data.adj and data.adv, named
// "POS.OFFSET" as graph.ReadWordNet names them (satellites share "a.");
// an undirected edge for every pointer between synsets, whatever its
// symbol (hypernyms, meronyms, similar-to, derivations, …); the label is
// the synset's lexicographer file (noun.animal, verb.motion, …: 45 files,
// from DIR/lexnames when there is one, else WordNet 3.0's list); the
// features are the gloss as a signed hashed bag of words (WordNetFeatures
// wide, stop words left out, L2-normalised; a gloss of stop words only
// gives a zero row). Seed draws the splits: WordNetTrain and WordNetValid
// of the synsets, the rest test.
func WordNet(dir string, seed uint64) (*Graph, error) {
	lex, err := readLexNames(dir)
	if err != nil {
		return nil, err
	}
	g := &Graph{F: WordNetFeatures}
	index := map[string]int32{}
	var lexOf []int
	type ptr struct {
		src int32
		dst string
		at  string
	}
	var ptrs []ptr
	err = graph.WalkWordNet(dir, func(s graph.Synset, at string) error {
		if s.Lex >= len(lex) || lex[s.Lex] == "" {
			return fmt.Errorf("lexicographer file %d is not in the lexnames list", s.Lex)
		}
		if _, dup := index[s.Name]; dup {
			return fmt.Errorf("synset %s twice", s.Name)
		}
		v := int32(len(g.Names))
		index[s.Name] = v
		g.Names = append(g.Names, s.Name)
		lexOf = append(lexOf, s.Lex)
		g.X = append(g.X, hashGloss(s.Gloss, g.F)...)
		for _, p := range s.Pointers {
			ptrs = append(ptrs, ptr{v, p.Target, at})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(g.Names) == 0 {
		return nil, fmt.Errorf("wordnet: no synsets under %s", dir)
	}
	src, dst := make([]int32, len(ptrs)), make([]int32, len(ptrs))
	for i, p := range ptrs {
		d, ok := index[p.dst]
		if !ok {
			return nil, fmt.Errorf("%s: a pointer to synset %s, which no data file holds", p.at, p.dst)
		}
		src[i], dst[i] = p.src, d
	}
	g.Ptr, g.Nbr = buildCSR(g.N(), src, dst, false)
	used := map[string]bool{}
	for _, l := range lexOf {
		used[lex[l]] = true
	}
	for c := range used {
		g.Classes = append(g.Classes, c)
	}
	slices.Sort(g.Classes)
	g.Y = make([]int32, g.N())
	for v, l := range lexOf {
		c, _ := slices.BinarySearch(g.Classes, lex[l])
		g.Y[v] = int32(c)
	}
	g.Train, g.Valid, g.Test = fractionSplit(newRand(seed, streamSplits), g.N(), WordNetTrain, WordNetValid)
	return g, nil
}

// readLexNames reads DIR/lexnames ("NN<TAB>name<TAB>pos" lines), or
// returns WordNet 3.0's list when there is no such file.
func readLexNames(dir string) ([]string, error) {
	path := filepath.Join(dir, "lexnames")
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return lexNames, nil
	} else if err != nil {
		return nil, fmt.Errorf("wordnet: %w", err)
	}
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.Atoi(f[0])
		if len(f) < 2 || err != nil || n < 0 || n > 1000 {
			return nil, fmt.Errorf("%s:%d: want NUMBER NAME [POS]", path, i+1)
		}
		for len(out) <= n {
			out = append(out, "")
		}
		out[n] = f[1]
	}
	return out, nil
}

// stopWords are left out of the glosses' bags of words.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the of or and to in on at by for with from as into
		that which who whom whose this these those it its is are was were be been being has have
		had not no but if than then so such any some e g etc esp usually especially used`) {
		stopWords[w] = true
	}
}

// hashGloss is the gloss as a signed hashed bag of words, L2-normalised:
// word w adds ±1 (the sign a bit of its FNV-1a hash) at hash mod width.
func hashGloss(gloss string, width int) []float32 {
	row := make([]float32, width)
	words := strings.FieldsFunc(strings.ToLower(gloss), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		if stopWords[w] {
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		if x>>63 == 0 {
			row[x%uint64(width)]++
		} else {
			row[x%uint64(width)]--
		}
	}
	ss := 0.0
	for _, v := range row {
		ss += float64(v) * float64(v)
	}
	if ss > 0 {
		inv := float32(1 / math.Sqrt(ss))
		for j := range row {
			row[j] *= inv
		}
	}
	return row
}

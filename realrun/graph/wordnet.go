package graph

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// WordNet pointer symbols (wninput(5WN)) kept as relations, named as in
// WN18 (Bordes et al., 2013): its 18 relation types. Antonyms, entailment,
// cause, attributes, participles, pertainyms and substance meronymy are
// left out, as in WN18.
var WN18Relations = map[string]string{
	"@":  "_hypernym",
	"~":  "_hyponym",
	"@i": "_instance_hypernym",
	"~i": "_instance_hyponym",
	"%m": "_member_meronym",
	"#m": "_member_holonym",
	"%p": "_has_part",
	"#p": "_part_of",
	"+":  "_derivationally_related_form",
	"^":  "_also_see",
	"$":  "_verb_group",
	"&":  "_similar_to",
	";c": "_synset_domain_topic_of",
	"-c": "_member_of_domain_topic",
	";r": "_synset_domain_region_of",
	"-r": "_member_of_domain_region",
	";u": "_synset_domain_usage_of",
	"-u": "_member_of_domain_usage",
}

// Triple is one knowledge-graph edge with string ids.
type Triple struct{ Src, Rel, Dst string }

// WordNetFiles are the synset files of a WordNet 3.0 database directory
// (Debian's wordnet-base installs them under /usr/share/wordnet).
var WordNetFiles = []string{"data.noun", "data.verb", "data.adj", "data.adv"}

// ReadWordNet reads the synsets of a WordNet database directory and
// returns one triple per semantic or lexical pointer whose symbol is in
// rels, between synsets: entities are synsets named "POS.OFFSET" (adjective
// satellites share the adjectives' "a."), relations the names rels gives.
// Duplicate triples (a lexical pointer repeated for several words of a
// synset) are kept once; the order is the files' order.
func ReadWordNet(dir string, rels map[string]string) ([]Triple, error) {
	var out []Triple
	seen := map[Triple]bool{}
	err := WalkWordNet(dir, func(s Synset, _ string) error {
		for _, p := range s.Pointers {
			t := Triple{Src: s.Name, Dst: p.Target}
			if r, ok := rels[p.Symbol]; ok && !seen[Triple{t.Src, r, t.Dst}] {
				t.Rel = r
				seen[t] = true
				out = append(out, t)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("wordnet: no pointers found under %s", dir)
	}
	return out, nil
}

// Synset is one line of a WordNet data file (wndb(5WN)).
type Synset struct {
	// Name is "POS.OFFSET"; adjective satellites share the adjectives' "a.".
	Name string
	// Lex is the number of the synset's lexicographer file (lexnames(5WN)).
	Lex int
	// Gloss is the text after " | ": definition and examples.
	Gloss string
	// Pointers are the synset's semantic and lexical pointers, in order.
	Pointers []Pointer
}

// Pointer is one pointer of a synset: its symbol ("@" hypernym, "~"
// hyponym, …) and the synset it points at, named as Synset.Name.
type Pointer struct{ Symbol, Target string }

// WalkWordNet calls each for every synset of the WordNet 3.0 database in
// dir (WordNetFiles, in that order) with its position "FILE:LINE". A line
// that is not a synset, or an error from each, stops the walk and is
// returned with that position.
func WalkWordNet(dir string, each func(s Synset, at string) error) error {
	for _, name := range WordNetFiles {
		path := filepath.Join(dir, name)
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("wordnet: %w", err)
		}
		err = scanWordNet(f, path, each)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// scanWordNet calls each for every synset line of r (the licence's lines
// start with two spaces and are skipped).
func scanWordNet(r io.Reader, name string, each func(s Synset, at string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(text, "  ") || strings.TrimSpace(text) == "" {
			continue
		}
		at := fmt.Sprintf("%s:%d", name, line)
		s, err := ParseSynset(text)
		if err == nil {
			err = each(s, at)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("wordnet: %s: %w", name, err)
	}
	return nil
}

// ParseSynset parses a line of a WordNet data file (wndb(5WN)): offset
// lex_filenum ss_type w_cnt (word lex_id)… p_cnt (symbol offset pos
// source/target)… [frames] | gloss.
func ParseSynset(text string) (Synset, error) {
	var s Synset
	if i := strings.Index(text, " | "); i >= 0 {
		s.Gloss = text[i+3:]
		text = text[:i]
	}
	f := strings.Fields(text)
	if len(f) < 4 {
		return s, fmt.Errorf("too few fields for a synset")
	}
	if _, err := strconv.ParseUint(f[0], 10, 32); err != nil {
		return s, fmt.Errorf("offset %s is not a number", QuoteShort(f[0]))
	}
	lex, err := strconv.Atoi(f[1])
	if err != nil || lex < 0 {
		return s, fmt.Errorf("lexicographer file number %s is not a number", QuoteShort(f[1]))
	}
	s.Lex = lex
	s.Name = synsetName(f[2], f[0])
	words, err := strconv.ParseUint(f[3], 16, 16)
	if err != nil {
		return s, fmt.Errorf("word count %s is not hexadecimal", QuoteShort(f[3]))
	}
	k := 4 + 2*int(words)
	if k >= len(f) {
		return s, fmt.Errorf("no pointer count")
	}
	n, err := strconv.Atoi(f[k])
	if err != nil || n < 0 || k+1+4*n > len(f) {
		return s, fmt.Errorf("pointer count %s does not match the pointers", QuoteShort(f[k]))
	}
	for p := 0; p < n; p++ {
		q := f[k+1+4*p:]
		s.Pointers = append(s.Pointers, Pointer{Symbol: q[0], Target: synsetName(q[2], q[1])})
	}
	return s, nil
}

func synsetName(pos, offset string) string {
	if pos == "s" {
		pos = "a" // satellites live in data.adj with the adjectives
	}
	return pos + "." + offset
}

// KGSplit is a knowledge graph split into training, validation and test
// triples.
type KGSplit struct {
	Train, Valid, Test []Triple
	Entities           int
}

// SplitKG keeps the entities with at least minDegree triples (counted over
// the kept relations, once, before splitting) and draws valid and test
// triples of held-out size each with seed, keeping only held-out triples
// whose entities and relation still occur in training — the WN18 recipe
// (Bordes et al., 2013: a filtered WordNet with 5,000 valid and 5,000 test
// triples).
func SplitKG(ts []Triple, minDegree, heldOut int, seed uint64) KGSplit {
	deg := map[string]int{}
	for _, t := range ts {
		deg[t.Src]++
		deg[t.Dst]++
	}
	var kept []Triple
	for _, t := range ts {
		if deg[t.Src] >= minDegree && deg[t.Dst] >= minDegree && t.Src != t.Dst {
			kept = append(kept, t)
		}
	}
	kept = slices.Clone(kept)
	rng := rand.New(rand.NewPCG(seed, 0x776e3138)) // "wn18"
	rng.Shuffle(len(kept), func(i, j int) { kept[i], kept[j] = kept[j], kept[i] })
	hold := min(2*heldOut, len(kept)/5)
	train := kept[hold:]
	inTrain := map[string]int{}
	for _, t := range train {
		inTrain[t.Src]++
		inTrain[t.Dst]++
		inTrain["rel:"+t.Rel]++
	}
	var out KGSplit
	out.Train = train
	for i, t := range kept[:hold] {
		if inTrain[t.Src] == 0 || inTrain[t.Dst] == 0 || inTrain["rel:"+t.Rel] == 0 {
			out.Train = append(out.Train, t) // keep it learnable: move it to training
			continue
		}
		if i%2 == 0 {
			out.Valid = append(out.Valid, t)
		} else {
			out.Test = append(out.Test, t)
		}
	}
	ents := map[string]bool{}
	for _, t := range out.Train {
		ents[t.Src], ents[t.Dst] = true, true
	}
	out.Entities = len(ents)
	return out
}

// WriteTriples writes triples as "src<TAB>rel<TAB>dst" lines, the edge
// format realrun --edges reads.
func WriteTriples(w io.Writer, ts []Triple) error {
	bw := bufio.NewWriter(w)
	for _, t := range ts {
		if _, err := fmt.Fprintf(bw, "%s\t%s\t%s\n", t.Src, t.Rel, t.Dst); err != nil {
			return err
		}
	}
	return bw.Flush()
}

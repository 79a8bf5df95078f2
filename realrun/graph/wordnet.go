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
	for _, name := range WordNetFiles {
		path := filepath.Join(dir, name)
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("wordnet: %w", err)
		}
		err = parseWordNet(f, path, func(t Triple) {
			if r, ok := rels[t.Rel]; ok && !seen[Triple{t.Src, r, t.Dst}] {
				t.Rel = r
				seen[t] = true
				out = append(out, t)
			}
		})
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("wordnet: no pointers found under %s", dir)
	}
	return out, nil
}

// parseWordNet calls emit for every pointer of every synset line in r
// (license lines start with two spaces and are skipped).
func parseWordNet(r io.Reader, name string, emit func(Triple)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(text, "  ") || strings.TrimSpace(text) == "" {
			continue
		}
		if i := strings.Index(text, " | "); i >= 0 {
			text = text[:i] // the gloss
		}
		f := strings.Fields(text)
		bad := func(what string) error { return fmt.Errorf("%s:%d: %s", name, line, what) }
		if len(f) < 4 {
			return bad("too few fields for a synset")
		}
		src := synsetID(f[2], f[0])
		words, err := strconv.ParseInt(f[3], 16, 32)
		if err != nil {
			return bad("word count is not hexadecimal")
		}
		k := 4 + 2*int(words)
		if k >= len(f) {
			return bad("no pointer count")
		}
		ptrs, err := strconv.Atoi(f[k])
		if err != nil || k+1+4*ptrs > len(f) {
			return bad("pointer count does not match the pointers")
		}
		for p := 0; p < ptrs; p++ {
			q := f[k+1+4*p:]
			emit(Triple{Src: src, Rel: q[0], Dst: synsetID(q[2], q[1])})
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func synsetID(pos, offset string) string {
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

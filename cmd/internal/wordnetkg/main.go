// Command wordnetkg writes the WN18-style WordNet KG of the quality
// experiment (train.tsv, valid.tsv, test.tsv) into a folder, so that a
// machine without Debian's WordNet (the GPU bundle's) can train it:
// wordnetkg DIR. It reads /usr/share/wordnet (TIERFLOW_WORDNET overrides).
package main

import (
	"fmt"
	"os"

	"github.com/tierflow/tierflow/experiments"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: wordnetkg DIR (writes train.tsv, valid.tsv and test.tsv there)")
		os.Exit(2)
	}
	dir := experiments.WordNetDir
	if d := os.Getenv("TIERFLOW_WORDNET"); d != "" {
		dir = d
	}
	if err := os.MkdirAll(os.Args[1], 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "wordnetkg:", err)
		os.Exit(1)
	}
	s, err := experiments.BuildWordNetKG(dir, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "wordnetkg:", err)
		os.Exit(1)
	}
	fmt.Printf("wordnetkg: %d entities, %d / %d / %d train / valid / test triples in %s\n", s.Entities, len(s.Train), len(s.Valid), len(s.Test), os.Args[1])
}

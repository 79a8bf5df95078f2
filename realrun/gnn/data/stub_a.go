package data

import (
	"errors"

	"github.com/tierflow/tierflow/realrun/graph"
)

// STUB (helper A replaces this file): the API of package data.

// Files names a node-classification graph's input files.
type Files struct {
	// Edges is the edge file (src dst, or src rel dst with the relation
	// ignored), read as Format says, like realrun's --edges.
	Edges  string
	Format graph.Format
	// Directed keeps messages along the edges' direction only (dst reads
	// src); by default they flow both ways.
	Directed bool
	// Features is node<TAB>v1 v2 … (.tsv) or a float32 N×F .npy whose
	// rows follow FeatureNames (one node name a line).
	Features, FeatureNames string
	// Labels is node<TAB>label, labels being arbitrary strings.
	Labels string
	// TrainNodes, ValidNodes, TestNodes list one node name a line.
	TrainNodes, ValidNodes, TestNodes string
	// Skip counts and leaves out bad records (see Stats.Skipped) instead
	// of refusing the input.
	Skip bool
}

// Stats is what Load read.
type Stats struct {
	Nodes, Features, Classes int
	// Edges are the input's edge lines kept (before symmetrising).
	Edges              int64
	Train, Valid, Test int
	// Skipped counts the records left out with Skip, by reason.
	Skipped map[string]int64
}

// Load reads a graph from files.
func Load(f Files) (*Graph, Stats, error) {
	return nil, Stats{}, errors.New("data.Load: not built yet")
}

// Generate returns a seeded synthetic graph with the shape of a preset
// (Presets) shrunk by scale.
func Generate(name string, scale float64, seed uint64) (*Graph, error) {
	return nil, errors.New("data.Generate: not built yet")
}

// WriteFiles writes g into dir as Load reads it.
func WriteFiles(g *Graph, dir string) error { return errors.New("data.WriteFiles: not built yet") }

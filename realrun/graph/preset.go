// Package graph produces the edges the real engine trains on: seeded synthetic
// graphs with the papers' shapes and planted structure, and parsed edge files
// with dense ids.
package graph

import (
	"fmt"
	"math"
	"strings"

	"github.com/tierflow/tierflow/workload"
)

// Preset is the shape of a benchmark graph: how many nodes, edges and
// relations it has at full size (scale 1), and which embedding model the
// papers train on it.
type Preset struct {
	Name      string
	Nodes     int64          // at scale 1
	Edges     int64          // at scale 1
	Relations int            // 1 for social graphs
	Model     workload.Model // dot (social) or complex (knowledge graphs)
}

// Presets are the graphs the generator imitates: the dataset table the
// simulator uses too (workload.Datasets — Marius Table 1's sizes, FB15k's
// exact release counts), so a generated graph and a simulated one are the
// same graph.
// PBG's full Freebase is simulated only: too large to generate here.
var Presets = presetsOf("twitter", "livejournal", "freebase86m", "fb15k")

func presetsOf(names ...string) []Preset {
	var out []Preset
	for _, n := range names {
		d, err := workload.LookupDataset(n)
		if err != nil {
			panic(err) // a name above is missing from the table: a programming error
		}
		out = append(out, Preset{Name: d.Name, Nodes: d.Nodes, Edges: d.Edges, Relations: d.Relations, Model: d.Model})
	}
	return out
}

// Floors of Scaled: a scaled preset never has fewer nodes or edges than this.
const (
	MinScaledNodes = 100
	MinScaledEdges = 1_000
)

// LookupPreset returns the preset with the given name (case-insensitive).
func LookupPreset(name string) (Preset, error) {
	names := make([]string, 0, len(Presets))
	for _, p := range Presets {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Preset{}, fmt.Errorf("graph: unknown preset %q (known: %s)", name, strings.Join(names, ", "))
}

// Scaled returns the preset shrunk by f (0 < f ≤ 1). Nodes and edges are
// multiplied by f and rounded, with floors of MinScaledNodes nodes and
// MinScaledEdges edges. Relations become
// min(relations, max(1, round(relations·√f))).
//
// Why √f for relations: scaling them by f (like nodes and edges) would
// collapse a knowledge graph to a handful of relations, losing the
// relation-parameter traffic that distinguishes it from a social graph; not
// scaling them at all would leave each relation with only f times its edges,
// too few to learn at small f. √f shrinks both the relation vocabulary and the
// edges per relation by the same factor √f, so a scaled knowledge graph keeps
// the balance of the full one (Freebase86m at f = 0.01: 1,480 relations with
// ~2.3k edges each, instead of 148 with ~22.8k or 14,800 with ~228).
//
// The name is kept, so the scaled preset still says which graph it imitates.
func (p Preset) Scaled(f float64) (Preset, error) {
	if math.IsNaN(f) || f <= 0 || f > 1 {
		return Preset{}, fmt.Errorf("graph: preset %q: scale must be in (0, 1], got %v", p.Name, f)
	}
	q := p
	q.Nodes = max(MinScaledNodes, int64(math.Round(float64(p.Nodes)*f)))
	q.Edges = max(MinScaledEdges, int64(math.Round(float64(p.Edges)*f)))
	q.Relations = min(p.Relations, max(1, int(math.Round(float64(p.Relations)*math.Sqrt(f)))))
	return q, nil
}

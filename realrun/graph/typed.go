package graph

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/tierflow/tierflow/workload"
)

// Types are the node tables of a typed graph (entity types, as
// PyTorch-BigGraph has them): node names are per type — "alice" the
// user and "alice" the item are two nodes —, a node's type is given by
// the relation of its edge (the source is of the relation's lhs type,
// the destination of its rhs type), and the relations are the schema's,
// numbered in its order.
type Types struct {
	Schema workload.Schema
	// Nodes are the node tables, one per entity type of Schema.
	Nodes []*IDs
	rels  map[string]int64
	lhs   []int
	rhs   []int
}

// NewTypes returns empty node tables for a checked schema (see
// workload.Schema.Check).
func NewTypes(s workload.Schema) *Types {
	t := &Types{Schema: s, rels: map[string]int64{}}
	for range s.Types {
		t.Nodes = append(t.Nodes, NewIDs())
	}
	for i, r := range s.Relations {
		t.rels[r.Name] = int64(i)
		lhs, _ := s.TypeIndex(r.Lhs)
		rhs, _ := s.TypeIndex(r.Rhs)
		t.lhs, t.rhs = append(t.lhs, lhs), append(t.rhs, rhs)
	}
	return t
}

// Freeze freezes every type's table (IDs.Freeze).
func (t *Types) Freeze() {
	for _, n := range t.Nodes {
		n.Freeze()
	}
}

// Sides are the entity types (indexes into Schema.Types) of relation
// rel's source and destination.
func (t *Types) Sides(rel int64) (lhs, rhs int) { return t.lhs[rel], t.rhs[rel] }

// Len is the nodes of every type.
func (t *Types) Len() int64 {
	var n int64
	for _, ids := range t.Nodes {
		n += ids.Len()
	}
	return n
}

// Offsets are the first global id of each type: the nodes of a typed
// graph are numbered type after type, in the schema's order, so node
// local of type k is Offsets()[k] + local.
func (t *Types) Offsets() []int64 {
	out := make([]int64, len(t.Nodes))
	var n int64
	for k, ids := range t.Nodes {
		out[k] = n
		n += ids.Len()
	}
	return out
}

// NodeTypes is the type of every global id (see Offsets).
func (t *Types) NodeTypes() []uint16 {
	out := make([]uint16, 0, t.Len())
	for k, ids := range t.Nodes {
		for range ids.Len() {
			out = append(out, uint16(k))
		}
	}
	return out
}

// WriteTSV writes the typed id table: one "id\ttype\tname" line per
// node, in global id order (type after type, see Offsets). Names hold no
// tab or line break (Parse refuses them), so the name is everything after
// the second tab, and a reader of "id\tname" tables that takes the text
// after the last tab (ReadNames) reads the names of either.
func (t *Types) WriteTSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	var id int64
	for k, ids := range t.Nodes {
		typ := t.Schema.Types[k].Name
		for _, s := range ids.names {
			if strings.ContainsAny(s, "\t\r\n") {
				return fmt.Errorf("graph: id %d: name %s contains a tab or line break", id, QuoteShort(s))
			}
			if _, err := fmt.Fprintf(bw, "%d\t%s\t%s\n", id, typ, s); err != nil {
				return fmt.Errorf("graph: writing ids: %w", err)
			}
			id++
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("graph: writing ids: %w", err)
	}
	return nil
}

// WriteRelationsTSV writes the schema's relations as an "id\tname" table
// (IDs.WriteTSV's format).
func (t *Types) WriteRelationsTSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for i, r := range t.Schema.Relations {
		if _, err := fmt.Fprintf(bw, "%d\t%s\n", i, r.Name); err != nil {
			return fmt.Errorf("graph: writing relations: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("graph: writing relations: %w", err)
	}
	return nil
}

func (t *Types) relationList() string {
	names := make([]string, len(t.Schema.Relations))
	for i, r := range t.Schema.Relations {
		names[i] = r.Name
	}
	return strings.Join(names, ", ")
}

// ParseTyped is Parse for a typed graph: the relation of each edge must
// be one of the schema's (any other is an error, "NAME:LINE: relation
// "x" is not in the schema (…)"), a file without a relation column needs
// a schema of exactly one relation, and emit gets src and dst as ids of
// their types' tables (types.Nodes[lhs], types.Nodes[rhs] of relation
// rel, see Sides). A frozen table (Types.Freeze) leaves out or refuses an
// edge with an unseen node as Parse does.
func ParseTyped(r io.Reader, name string, f Format, types *Types, emit func(src, rel, dst int64) error) (Info, error) {
	if types == nil {
		return Info{}, fmt.Errorf("%s: graph.ParseTyped: nil types", name)
	}
	return parse(r, name, f, nil, nil, types, emit)
}

// typedIDs are the ids of a typed edge's names.
func (p *parser) typedIDs(names [3][]byte, line int) (src, rel, dst int64, err error) {
	if p.info.Rel >= 0 {
		r, ok := p.types.rels[string(names[1])]
		if !ok {
			return 0, 0, 0, fmt.Errorf("%s:%d: relation %s is not in the schema (its relations: %s)", p.name, line, QuoteShort(string(names[1])), p.types.relationList())
		}
		rel = r
	}
	lhs, rhs := p.types.Sides(rel)
	return p.types.Nodes[lhs].idBytes(names[0]), rel, p.types.Nodes[rhs].idBytes(names[2]), nil
}

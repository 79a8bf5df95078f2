package workload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// EntityType is one kind of node of a typed graph, in PyTorch-BigGraph's
// terms: partitioned into Partitions parts (every partitioned type of a
// graph has the same count, the run's p), or unpartitioned (Partitions 1,
// PBG's default) and then resident: held in memory for the whole run.
type EntityType struct {
	Name       string `json:"name"`
	Partitions int    `json:"partitions"`
}

// Resident reports whether the type is unpartitioned.
func (t EntityType) Resident() bool { return t.Partitions <= 1 }

// RelationType is one relation of a typed graph with the types of its
// source (Lhs) and destination (Rhs), as PBG's relation configs name them.
type RelationType struct {
	Name string `json:"name"`
	Lhs  string `json:"lhs"`
	Rhs  string `json:"rhs"`
}

// Schema is a typed graph's entity types and relations (the schema file a
// user writes). Types and Relations keep the file's order; a node's type
// is given by the relation of its edge: the source is of the relation's
// Lhs type, the destination of its Rhs type.
type Schema struct {
	Types     []EntityType   `json:"entities"`
	Relations []RelationType `json:"relations"`
}

// SchemaError is a bad schema, naming the field (entities.user.partitions,
// relations[1].lhs, ...).
type SchemaError struct {
	Field string
	Err   error
}

func (e *SchemaError) Error() string {
	if e.Field == "" {
		return "schema: " + e.Err.Error()
	}
	return "schema: " + e.Field + ": " + e.Err.Error()
}

func (e *SchemaError) Unwrap() error { return e.Err }

func schemaErr(field, format string, args ...any) error {
	return &SchemaError{Field: field, Err: fmt.Errorf(format, args...)}
}

// schemaFile is the file's layout: entities is a mapping (kept in order
// through yaml.Node), relations a list.
type schemaFile struct {
	Entities  yaml.Node `yaml:"entities"`
	Relations []struct {
		Name string `yaml:"name"`
		Lhs  string `yaml:"lhs"`
		Rhs  string `yaml:"rhs"`
	} `yaml:"relations"`
}

// ParseSchema reads a schema file (YAML, or JSON, which is YAML):
//
//	entities:
//	  user: {partitions: 4}
//	  item: {partitions: 1}
//	relations:
//	  - {name: bought, lhs: user, rhs: item}
//
// and checks it (Check). Unknown keys are refused.
func ParseSchema(data []byte) (Schema, error) {
	var f schemaFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return Schema{}, schemaErr("", "the file is empty: want entities and relations")
		}
		return Schema{}, &SchemaError{Err: fmt.Errorf("not a schema: %s", yamlMessage(err))}
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return Schema{}, schemaErr("", "more than one YAML document: want one, with entities and relations")
	}
	var s Schema
	switch f.Entities.Kind {
	case 0:
		return Schema{}, schemaErr("entities", "missing: want a mapping of type names to {partitions: N}")
	case yaml.MappingNode:
	default:
		return Schema{}, schemaErr("entities", "want a mapping of type names to {partitions: N}, not a %s", kindName(f.Entities.Kind))
	}
	for i := 0; i+1 < len(f.Entities.Content); i += 2 {
		name := f.Entities.Content[i].Value
		t, err := entityBody(f.Entities.Content[i+1])
		if err != nil {
			return Schema{}, &SchemaError{Field: "entities." + name, Err: err}
		}
		t.Name = name
		s.Types = append(s.Types, t)
	}
	for _, r := range f.Relations {
		s.Relations = append(s.Relations, RelationType(r))
	}
	if err := s.Check(); err != nil {
		return Schema{}, err
	}
	return s, nil
}

// entityBody reads an entity type's body: {partitions: N}, {} or
// nothing (PBG's default, 1 partition).
func entityBody(body *yaml.Node) (EntityType, error) {
	t := EntityType{Partitions: 1}
	if body.Kind == yaml.AliasNode && body.Alias != nil {
		body = body.Alias
	}
	switch {
	case body.Kind == yaml.ScalarNode && body.Tag == "!!null":
		return t, nil
	case body.Kind != yaml.MappingNode:
		return t, fmt.Errorf("want {partitions: N}, not a %s", kindName(body.Kind))
	}
	for i := 0; i+1 < len(body.Content); i += 2 {
		k, v := body.Content[i], body.Content[i+1]
		if k.Value != "partitions" {
			return t, fmt.Errorf("unknown key %q (an entity type has partitions)", k.Value)
		}
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			continue
		}
		p, err := strconv.Atoi(v.Value)
		if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || err != nil {
			return t, fmt.Errorf("partitions %q: want a whole number, 1 or more", oneLine(v.Value))
		}
		t.Partitions = p
	}
	return t, nil
}

// yamlMessage is a decoding error in one line without the Go types it
// names.
func yamlMessage(err error) string {
	msg := oneLine(err.Error())
	msg = goTypeRE.ReplaceAllString(msg, "")
	msg = notFoundRE.ReplaceAllString(msg, "unknown key $1")
	return tagRE.ReplaceAllStringFunc(msg, func(m string) string {
		tag := tagRE.FindStringSubmatch(m)[1]
		if w, ok := tagWords[tag]; ok {
			tag = w
		}
		return tag + " where it does not belong"
	})
}

var tagWords = map[string]string{"map": "a mapping", "seq": "a list", "str": "a string", "int": "a number", "float": "a number", "bool": "a true or false"}

var (
	goTypeRE   = regexp.MustCompile(` into (\[\])?(struct \{[^}]*\}|workload\.\w+)`)
	tagRE      = regexp.MustCompile(`cannot unmarshal !!(\w+)`)
	notFoundRE = regexp.MustCompile(`field (\S+) not found in type (struct \{[^}]*\}|workload\.\w+)`)
)

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "single value"
	}
	return "value of another kind"
}

// oneLine is s on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Check reports the first problem of s: no types or relations, an empty,
// repeated or badly named type or relation, partitions below 1,
// partitioned types with different counts, a relation whose lhs or rhs is
// not a type of s.
func (s Schema) Check() error {
	if len(s.Types) == 0 {
		return schemaErr("entities", "none: want at least one entity type")
	}
	if len(s.Relations) == 0 {
		return schemaErr("relations", "none: want at least one relation with its lhs and rhs types")
	}
	if len(s.Types) > math.MaxUint16 {
		return schemaErr("entities", "%d entity types: at most %d", len(s.Types), math.MaxUint16)
	}
	seen := map[string]bool{}
	part := -1
	for i, t := range s.Types {
		field := "entities." + t.Name
		if strings.TrimSpace(t.Name) == "" {
			return schemaErr("entities", "an entity type with an empty name")
		}
		if strings.ContainsAny(t.Name, "\t\r\n/") {
			return schemaErr(field, "the name contains a tab, line break or slash")
		}
		if seen[t.Name] {
			return schemaErr(field, "named twice")
		}
		seen[t.Name] = true
		if t.Partitions < 1 {
			return schemaErr(field+".partitions", "%d: want 1 (unpartitioned, in memory) or more", t.Partitions)
		}
		if t.Partitions > 1 {
			if part >= 0 && t.Partitions != s.Types[part].Partitions {
				return schemaErr(field+".partitions", "%d, but %s has %d: every partitioned type has the same count (the run's p)", t.Partitions, s.Types[part].Name, s.Types[part].Partitions)
			}
			if part < 0 {
				part = i
			}
		}
	}
	rels := map[string]bool{}
	for i, r := range s.Relations {
		field := fmt.Sprintf("relations[%d]", i)
		if strings.TrimSpace(r.Name) == "" {
			return schemaErr(field+".name", "missing")
		}
		if strings.ContainsAny(r.Name, "\t\r\n") {
			return schemaErr(field+".name", "%q contains a tab or line break", r.Name)
		}
		if rels[r.Name] {
			return schemaErr(field+".name", "%q named twice", r.Name)
		}
		rels[r.Name] = true
		for _, side := range []struct{ key, v string }{{"lhs", r.Lhs}, {"rhs", r.Rhs}} {
			if side.v == "" {
				return schemaErr(field+"."+side.key, "missing: want the name of an entity type (%s)", s.typeList())
			}
			if !seen[side.v] {
				return schemaErr(field+"."+side.key, "%q is not an entity type of the schema (%s)", side.v, s.typeList())
			}
		}
	}
	return nil
}

func (s Schema) typeList() string {
	names := make([]string, len(s.Types))
	for i, t := range s.Types {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// P is the partitioned types' count (1 when every type is unpartitioned).
func (s Schema) P() int {
	for _, t := range s.Types {
		if t.Partitions > 1 {
			return t.Partitions
		}
	}
	return 1
}

// TypeIndex is the index of the type named name in s.Types.
func (s Schema) TypeIndex(name string) (int, bool) {
	i := slices.IndexFunc(s.Types, func(t EntityType) bool { return t.Name == name })
	return i, i >= 0
}

// RelationIndex is the index of the relation named name in s.Relations.
func (s Schema) RelationIndex(name string) (int, bool) {
	i := slices.IndexFunc(s.Relations, func(r RelationType) bool { return r.Name == name })
	return i, i >= 0
}

// Partitioned reports whether type t (an index into s.Types) is partitioned.
func (s Schema) Partitioned(t int) bool { return !s.Types[t].Resident() }

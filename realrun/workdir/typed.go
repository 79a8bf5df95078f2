package workdir

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// SchemaKey is the key of Manifest.InputFormat that records a typed
// directory's schema (its JSON; the field Schema's key, SettingKey): a
// directory is reused only for the same schema, as for the same edge
// files read the same way.
var SchemaKey = SettingKey("Schema")

// schemaValue is how a schema is recorded in Manifest.InputFormat: its
// JSON (the content, so that the same schema written otherwise — YAML or
// JSON, other spacing or comments — is the same).
func schemaValue(s workload.Schema) string {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Sprintf("%v", s)
	}
	return string(b)
}

// SchemaIdentity names a schema in a run's settings: its types and
// relations counted, and the CRC-32C of its JSON (the same words mean the
// same schema).
func SchemaIdentity(s workload.Schema) string {
	return fmt.Sprintf("%d entity types, %d relations (CRC-32C %08x)", len(s.Types), len(s.Relations), crc32.Checksum([]byte(schemaValue(s)), crc32.MakeTable(crc32.Castagnoli)))
}

// inputFormat is what Manifest.InputFormat records of spec: how the edge
// files are read, and the schema of a typed graph.
func (spec DataSpec) inputFormat() map[string]string {
	f := spec.Format.Flags()
	if spec.Schema != nil {
		f[SchemaKey] = schemaValue(*spec.Schema)
	}
	return f
}

// CheckP resolves the run's p against a schema: the partitioned types'
// count when p is 0 (not given), p itself when it equals that count; any
// other p is an error naming both.
func CheckP(s workload.Schema, p int) (int, error) {
	want := s.P()
	if p == 0 || p == want {
		return want, nil
	}
	return 0, fmt.Errorf("p = %d, but the schema's partitioned entity types have %d partitions", p, want)
}

// prepareTyped is prepareFiles for a typed graph (spec.Schema): node
// names are per entity type, a node's type given by its edge's relation
// (the source is of its lhs type, the destination of its rhs type), and
// the relations are the schema's. The nodes are numbered type after type
// in the schema's order (graph.Types.Offsets), those of one type in
// first-seen order; ids.tsv holds "id\ttype\tname" lines in that order
// (graph.Types.WriteTSV), relations.tsv the schema's relations.
func prepareTyped(spec DataSpec) (*store.Store, error) {
	schema := *spec.Schema
	types := graph.NewTypes(schema)
	var edges int64
	train, err := parseTypedFile(spec.Edges, spec.Format, types, func(int64, int64, int64) error { edges++; return nil })
	if err != nil {
		return nil, err
	}
	types.Freeze()
	var extra int64
	for _, path := range []string{spec.Edges, spec.Valid, spec.Test} {
		if fi, err := os.Stat(path); err == nil && path != "" {
			extra += fi.Size()
		}
	}
	if err := spec.checkSpace(spec.space(types.Len(), edges, extra)); err != nil {
		return nil, err
	}
	offsets := types.Offsets()
	mtypes := make([]store.EntityType, len(schema.Types))
	for k, t := range schema.Types {
		mtypes[k] = store.EntityType{Name: t.Name, Partitioned: schema.Partitioned(k), Nodes: types.Nodes[k].Len()}
	}
	var partitioned int64
	for _, t := range mtypes {
		if t.Partitioned {
			partitioned += t.Nodes
		}
	}
	if partitioned > 0 && int64(spec.P) > partitioned {
		return nil, inputerr.Errorf("{P} %d exceeds the %d nodes of the partitioned entity types of %s", spec.P, partitioned, spec.Edges)
	}
	relTypes := make([][2]int, len(schema.Relations))
	for r := range relTypes {
		lhs, rhs := types.Sides(int64(r))
		relTypes[r] = [2]int{lhs, rhs}
	}
	b, err := store.NewTypedBuilder(spec.Workdir, spec.Edges, mtypes, types.NodeTypes(), len(schema.Relations), relTypes, spec.P, spec.Seed)
	if err != nil {
		return nil, inputerr.Errorf("{Workdir}: %w", err)
	}
	fail := func(err error) (*store.Store, error) {
		b.Abort()
		return nil, err
	}
	if err := startBuild(b, spec, types.WriteTSV, types.WriteRelationsTSV); err != nil {
		return fail(err)
	}
	add := func(sp func() store.Split) func(src, rel, dst int64) error {
		return func(src, rel, dst int64) error {
			lhs, rhs := types.Sides(rel)
			return b.Add(offsets[lhs]+src, rel, offsets[rhs]+dst, sp())
		}
	}
	split := graph.NewSplitter(spec.Seed, HeldOut, HeldOut)
	given := spec.Valid != "" || spec.Test != ""
	if _, err := parseTypedFile(spec.Edges, spec.Format, types, add(func() store.Split {
		if given {
			return store.Train
		}
		return store.Split(split.Next())
	})); err != nil {
		return fail(err)
	}
	files := []store.InputFile{inputFile(spec.Edges, map[bool]string{true: "train", false: "all"}[given], train)}
	for _, f := range []struct {
		path, name string
		sp         store.Split
	}{{spec.Valid, "valid", store.Valid}, {spec.Test, "test", store.Test}} {
		if f.path == "" {
			continue
		}
		info, err := parseTypedFile(f.path, spec.Format, types, add(func() store.Split { return f.sp }))
		if err != nil {
			return fail(err)
		}
		if info.HasRelations() != train.HasRelations() {
			return fail(inputerr.Errorf("%s: edges %s, but those of %s %s", f.path, relationsWord(info), spec.Edges, relationsWord(train)))
		}
		files = append(files, inputFile(f.path, f.name, info))
	}
	b.SetInputFormat(spec.inputFormat(), files)
	return b.Finish(spec.Dim, spec.Model, InitScale)
}

func parseTypedFile(path string, format graph.Format, types *graph.Types, emit func(src, rel, dst int64) error) (graph.Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return graph.Info{}, inputerr.Errorf("%s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	info, err := graph.ParseTyped(f, path, format, types, emit)
	if err != nil {
		return graph.Info{}, &inputerr.Error{Err: err}
	}
	return info, nil
}

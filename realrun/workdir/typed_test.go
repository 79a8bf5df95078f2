package workdir_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/workload"
)

const typedSchema = `
entities:
  user: {partitions: 2}
  item: {partitions: 1}
relations:
  - {name: bought, lhs: user, rhs: item}
  - {name: follows, lhs: user, rhs: user}
`

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

// typedSpec writes a small user–item graph in which "alice" is both a
// user and an item.
func typedSpec(t *testing.T) workdir.DataSpec {
	t.Helper()
	dir := t.TempDir()
	s, err := workload.ParseSchema([]byte(typedSchema))
	require.NoError(t, err)
	var train strings.Builder
	users := []string{"alice", "bob", "carol", "dave", "erin", "frank"}
	items := []string{"alice", "book", "pen"}
	for k := range 60 {
		if k%2 == 0 {
			train.WriteString(users[k%6] + "\tbought\t" + items[k%3] + "\n")
		} else {
			train.WriteString(users[k%6] + "\tfollows\t" + users[(k+1)%6] + "\n")
		}
	}
	return workdir.DataSpec{
		Edges: writeFile(t, dir, "train.tsv", train.String()),
		Valid: writeFile(t, dir, "valid.tsv", "bob\tbought\talice\nzed\tbought\tpen\n"),
		Test:  writeFile(t, dir, "test.tsv", "carol\tfollows\talice\n"),
		Seed:  1, P: 2, Dim: 4, Model: "complex", Workdir: filepath.Join(dir, "work"), Schema: &s,
	}
}

func TestPrepareTyped(t *testing.T) {
	spec := typedSpec(t)
	st, err := workdir.Prepare(spec)
	require.NoError(t, err)
	m := st.M
	assert.Equal(t, []store.EntityType{{Name: "user", Partitioned: true, Nodes: 6}, {Name: "item", Nodes: 3}}, m.Types)
	assert.Equal(t, int64(9), m.Nodes, "alice the user and alice the item are two nodes")
	assert.Equal(t, int64(3), m.Resident)
	assert.Equal(t, int64(3), m.Rows)
	assert.Equal(t, 2, m.Relations)
	assert.Equal(t, [][2]int{{0, 1}, {0, 0}}, m.RelationTypes)
	assert.Equal(t, int64(60), m.Train)
	assert.Equal(t, int64(1), m.Valid, "zed is no user of the training edges")
	assert.Equal(t, int64(1), m.Test)
	assert.Equal(t, int64(1), m.InputFiles[1].SkippedUnseenNode)

	ids, err := os.ReadFile(filepath.Join(st.Dir, "ids.tsv"))
	require.NoError(t, err)
	assert.Equal(t, "0\tuser\talice\n1\tuser\tbob\n", firstLines(string(ids), 2))
	assert.True(t, strings.HasPrefix(string(ids), "0\tuser\talice\n"))
	assert.Contains(t, string(ids), "6\titem\talice\n")
	rels, err := os.ReadFile(filepath.Join(st.Dir, "relations.tsv"))
	require.NoError(t, err)
	assert.Equal(t, "0\tbought\n1\tfollows\n", string(rels))
	names, err := graph.ReadNames(filepath.Join(st.Dir, "ids.tsv"), m.Nodes)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice", "bob", "carol", "dave", "erin", "frank", "alice", "pen", "book"}, names)

	types, err := st.NodeTypes()
	require.NoError(t, err)
	perm, err := st.Permutation()
	require.NoError(t, err)
	for orig, id := range perm {
		want := uint16(0)
		if orig >= 6 {
			want = 1
		}
		assert.Equal(t, want, types[id])
	}
	valid, err := st.ReadSplit(store.Valid)
	require.NoError(t, err)
	assert.Equal(t, []store.Edge{{Src: perm[1], Rel: 0, Dst: perm[6]}}, valid, "bob the user bought alice the item")

	// The same schema written otherwise reuses the directory; another
	// one (or none) does not.
	same, err := workload.ParseSchema([]byte(`{"entities": {"user": {"partitions": 2}, "item": null}, "relations": [{"name": "bought", "lhs": "user", "rhs": "item"}, {"name": "follows", "lhs": "user", "rhs": "user"}]}`))
	require.NoError(t, err)
	spec.Schema = &same
	built, err := workdir.Built(spec)
	require.NoError(t, err)
	assert.NotNil(t, built)
	other := same
	other.Types = []workload.EntityType{{Name: "user", Partitions: 2}, {Name: "item", Partitions: 2}}
	spec.Schema = &other
	built, err = workdir.Built(spec)
	require.NoError(t, err)
	assert.Nil(t, built, "another schema")
	spec.Schema = nil
	built, err = workdir.Built(spec)
	require.NoError(t, err)
	assert.Nil(t, built, "untyped")
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "")
}

func TestPrepareTypedBadInput(t *testing.T) {
	for _, tt := range []struct {
		name, train, schema, err string
	}{
		{"relation not in the schema", "alice\tbought\tbook\nbob\tlikes\tpen\n", typedSchema, `train.tsv:2: relation "likes" is not in the schema (its relations: bought, follows)`},
		{"no relation column, two relations", "alice\tbook\n", typedSchema, "train.tsv:1: the edges have no relation column, so the schema must have exactly one relation (it has 2: bought, follows)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := typedSpec(t)
			spec.Edges = writeFile(t, t.TempDir(), "train.tsv", tt.train)
			spec.Valid, spec.Test = "", ""
			_, err := workdir.Prepare(spec)
			require.Error(t, err)
			var bad *inputerr.Error
			assert.ErrorAs(t, err, &bad)
			assert.Contains(t, err.Error(), tt.err)
			assert.NoDirExists(t, spec.Workdir, "nothing written")
		})
	}
	// One relation and no relation column: every edge is of it.
	s, err := workload.ParseSchema([]byte("entities: {user: {partitions: 2}, item: {}}\nrelations: [{name: bought, lhs: user, rhs: item}]\n"))
	require.NoError(t, err)
	spec := typedSpec(t)
	spec.Schema = &s
	spec.Edges = writeFile(t, t.TempDir(), "train.tsv", "alice\tbook\nbob\tpen\ncarol\talice\n")
	spec.Valid, spec.Test = "", ""
	st, err := workdir.Prepare(spec)
	require.NoError(t, err)
	assert.Equal(t, int64(6), st.M.Nodes)
	assert.Equal(t, int64(3), st.M.Resident)
	assert.Equal(t, [][2]int{{0, 1}}, st.M.RelationTypes)
}

func TestCheckP(t *testing.T) {
	s, err := workload.ParseSchema([]byte(typedSchema))
	require.NoError(t, err)
	p, err := workdir.CheckP(s, 0)
	require.NoError(t, err)
	assert.Equal(t, 2, p)
	p, err = workdir.CheckP(s, 2)
	require.NoError(t, err)
	assert.Equal(t, 2, p)
	_, err = workdir.CheckP(s, 4)
	assert.EqualError(t, err, "p = 4, but the schema's partitioned entity types have 2 partitions")
}

package graph

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/workload"
)

func TestParseTyped(t *testing.T) {
	two := workload.Schema{
		Types:     []workload.EntityType{{Name: "user", Partitions: 2}, {Name: "item", Partitions: 1}},
		Relations: []workload.RelationType{{Name: "bought", Lhs: "user", Rhs: "item"}, {Name: "follows", Lhs: "user", Rhs: "user"}},
	}
	one := workload.Schema{Types: two.Types, Relations: two.Relations[:1]}
	type edge struct{ src, rel, dst int64 }
	for _, tt := range []struct {
		name   string
		schema workload.Schema
		in     string
		want   []edge
		users  []string
		items  []string
		err    string
	}{
		{name: "names per type", schema: two, in: "alice bought alice\nalice follows bob\nbob bought pen\n",
			want: []edge{{0, 0, 0}, {0, 1, 1}, {1, 0, 1}}, users: []string{"alice", "bob"}, items: []string{"alice", "pen"}},
		{name: "one relation, no column", schema: one, in: "alice,pen\nbob,pen\n",
			want: []edge{{0, 0, 0}, {1, 0, 0}}, users: []string{"alice", "bob"}, items: []string{"pen"}},
		{name: "header names the columns", schema: two, in: "head\trelation\ttail\nalice\tfollows\tbob\n",
			want: []edge{{0, 1, 1}}, users: []string{"alice", "bob"}, items: nil},
		{name: "relation not in the schema", schema: two, in: "a bought b\na likes b\n", err: `x.tsv:2: relation "likes" is not in the schema (its relations: bought, follows)`},
		{name: "no relation column, two relations", schema: two, in: "# c\na b\n", err: "x.tsv:2: the edges have no relation column, so the schema must have exactly one relation (it has 2: bought, follows)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			types := NewTypes(tt.schema)
			var got []edge
			_, err := ParseTyped(strings.NewReader(tt.in), "x.tsv", Format{}, types, func(s, r, d int64) error {
				got = append(got, edge{s, r, d})
				return nil
			})
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.users, types.Nodes[0].names)
			assert.Equal(t, tt.items, types.Nodes[1].names)
		})
	}
}

func TestTypesTables(t *testing.T) {
	s := workload.Schema{
		Types:     []workload.EntityType{{Name: "user", Partitions: 2}, {Name: "item", Partitions: 1}},
		Relations: []workload.RelationType{{Name: "bought", Lhs: "user", Rhs: "item"}},
	}
	types := NewTypes(s)
	_, err := ParseTyped(strings.NewReader("a b\nc a\n"), "x", Format{}, types, func(int64, int64, int64) error { return nil })
	require.NoError(t, err)
	types.Freeze()
	assert.Equal(t, int64(4), types.Len())
	assert.Equal(t, []int64{0, 2}, types.Offsets())
	assert.Equal(t, []uint16{0, 0, 1, 1}, types.NodeTypes())
	var ids, rels bytes.Buffer
	require.NoError(t, types.WriteTSV(&ids))
	assert.Equal(t, "0\tuser\ta\n1\tuser\tc\n2\titem\tb\n3\titem\ta\n", ids.String())
	require.NoError(t, types.WriteRelationsTSV(&rels))
	assert.Equal(t, "0\tbought\n", rels.String())
	// a frozen table leaves unseen nodes out, as Parse does
	info, err := ParseTyped(strings.NewReader("a b\nz b\n"), "v", Format{}, types, func(int64, int64, int64) error { return nil })
	require.NoError(t, err)
	assert.Equal(t, int64(1), info.UnseenNode)
	_, err = ParseTyped(strings.NewReader("a b\na z\n"), "v", Format{Unseen: UnseenError}, types, func(int64, int64, int64) error { return nil })
	assert.EqualError(t, err, `v:2: unknown item node id "z" (not in the training edges; {Unseen} skip leaves such edges out)`)
}

package workload

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseSchemaPBGVocabulary(t *testing.T) {
	s, err := ParseSchema([]byte("entities:\n  user: {partitions: 4}\n  item: {partitions: 1}\nrelations:\n  - {name: bought, lhs: user, rhs: item}\n  - {name: follows, lhs: user, rhs: user}\n"))
	require.NoError(t, err)
	require.Equal(t, []EntityType{{"user", 4}, {"item", 1}}, s.Types)
	require.Equal(t, 4, s.P())
	i, ok := s.RelationIndex("follows")
	require.True(t, ok)
	require.Equal(t, RelationType{"follows", "user", "user"}, s.Relations[i])
	require.False(t, s.Partitioned(1))
}

func TestParseSchemaRefuses(t *testing.T) {
	for _, tt := range []struct{ name, in, field string }{
		{"unknown type", "entities: {user: {partitions: 2}}\nrelations: [{name: r, lhs: user, rhs: usr}]", "relations[0].rhs"},
		{"different counts", "entities: {a: {partitions: 2}, b: {partitions: 3}}\nrelations: [{name: r, lhs: a, rhs: b}]", "entities.b.partitions"},
		{"no relations", "entities: {a: {partitions: 2}}", "relations"},
		{"unknown key", "entities: {a: {parts: 2}}\nrelations: [{name: r, lhs: a, rhs: a}]", "entities.a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSchema([]byte(tt.in))
			var se *SchemaError
			require.ErrorAs(t, err, &se, "%v", err)
			require.Equal(t, tt.field, se.Field, "%v", err)
		})
	}
}

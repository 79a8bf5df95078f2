package workload

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const pbgSchema = "entities:\n  user: {partitions: 4}\n  item: {partitions: 1}\nrelations:\n  - {name: bought, lhs: user, rhs: item}\n  - {name: follows, lhs: user, rhs: user}\n"

func TestParseSchemaPBGVocabulary(t *testing.T) {
	s, err := ParseSchema([]byte(pbgSchema))
	require.NoError(t, err)
	require.Equal(t, []EntityType{{"user", 4}, {"item", 1}}, s.Types)
	require.Equal(t, 4, s.P())
	i, ok := s.RelationIndex("follows")
	require.True(t, ok)
	require.Equal(t, RelationType{"follows", "user", "user"}, s.Relations[i])
	require.False(t, s.Partitioned(1))
	require.True(t, s.Partitioned(0))
	_, ok = s.TypeIndex("thing")
	require.False(t, ok)
}

func TestParseSchemaAccepts(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     Schema
		p        int
	}{
		{"JSON", `{"entities": {"user": {"partitions": 2}, "item": {"partitions": 1}}, "relations": [{"name": "bought", "lhs": "user", "rhs": "item"}]}`,
			Schema{[]EntityType{{"user", 2}, {"item", 1}}, []RelationType{{"bought", "user", "item"}}}, 2},
		{"PBG's default: no partitions is 1", "entities:\n  user: {}\n  item:\nrelations: [{name: r, lhs: user, rhs: item}]",
			Schema{[]EntityType{{"user", 1}, {"item", 1}}, []RelationType{{"r", "user", "item"}}}, 1},
		{"the file's order is kept", "entities: {b: {partitions: 3}, a: {partitions: 3}, c: null}\nrelations: [{name: z, lhs: c, rhs: a}, {name: y, lhs: b, rhs: b}]",
			Schema{[]EntityType{{"b", 3}, {"a", 3}, {"c", 1}}, []RelationType{{"z", "c", "a"}, {"y", "b", "b"}}}, 3},
		{"comments and a document marker", "# users and items\n---\nentities: {u: {partitions: 2}} # one type\nrelations: [{name: r, lhs: u, rhs: u}]\n",
			Schema{[]EntityType{{"u", 2}}, []RelationType{{"r", "u", "u"}}}, 2},
		{"a type on both sides of relations", "entities: {u: {partitions: 2}, i: {partitions: 1}}\nrelations: [{name: a, lhs: u, rhs: i}, {name: b, lhs: i, rhs: u}]",
			Schema{[]EntityType{{"u", 2}, {"i", 1}}, []RelationType{{"a", "u", "i"}, {"b", "i", "u"}}}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSchema([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, s)
			assert.Equal(t, tt.p, s.P())
		})
	}
}

func TestParseSchemaRefuses(t *testing.T) {
	rel := "\nrelations: [{name: r, lhs: a, rhs: a}]"
	for _, tt := range []struct{ name, in, field, msg string }{
		{"unknown type", "entities: {user: {partitions: 2}}\nrelations: [{name: r, lhs: user, rhs: usr}]", "relations[0].rhs", `"usr" is not an entity type of the schema (user)`},
		{"relation between types that do not exist", "entities: {user: {partitions: 2}}\nrelations: [{name: r, lhs: movie, rhs: critic}]", "relations[0].lhs", `"movie" is not an entity type`},
		{"missing lhs", "entities: {a: {partitions: 2}}\nrelations: [{name: r, rhs: a}]", "relations[0].lhs", "missing"},
		{"missing relation name", "entities: {a: {partitions: 2}}\nrelations: [{lhs: a, rhs: a}]", "relations[0].name", "missing"},
		{"different counts", "entities: {a: {partitions: 2}, b: {partitions: 3}}\nrelations: [{name: r, lhs: a, rhs: b}]", "entities.b.partitions", "3, but a has 2"},
		{"zero partitions", "entities: {a: {partitions: 0}}" + rel, "entities.a.partitions", "0: want 1"},
		{"negative partitions", "entities: {a: {partitions: -2}}" + rel, "entities.a.partitions", "-2: want 1"},
		{"partitions not a number", "entities: {a: {partitions: two}}" + rel, "entities.a", `partitions "two": want a whole number`},
		{"partitions a fraction", "entities: {a: {partitions: 2.5}}" + rel, "entities.a", `partitions "2.5"`},
		{"no relations", "entities: {a: {partitions: 2}}", "relations", "none"},
		{"empty relations", "entities: {a: {partitions: 2}}\nrelations: []", "relations", "none"},
		{"no entities", "relations: [{name: r, lhs: a, rhs: a}]", "entities", "missing"},
		{"empty entities", "entities: {}" + rel, "entities", "none"},
		{"entities a list", "entities: [a, b]" + rel, "entities", "not a list"},
		{"entity body a number", "entities: {a: 4}" + rel, "entities.a", "want {partitions: N}, not a single value"},
		{"duplicate type", "entities: {a: {partitions: 2}, a: {partitions: 2}}" + rel, "entities.a", "named twice"},
		{"duplicate relation", "entities: {a: {partitions: 2}}\nrelations: [{name: r, lhs: a, rhs: a}, {name: r, lhs: a, rhs: a}]", "relations[1].name", `"r" named twice`},
		{"unknown key in a type", "entities: {a: {parts: 2}}" + rel, "entities.a", `unknown key "parts"`},
		{"unknown key in a relation", "entities: {a: {partitions: 2}}\nrelations: [{name: r, lhs: a, rhs: a, weight: 2}]", "", "unknown key weight"},
		{"unknown top-level key", "entities: {a: {partitions: 2}}" + rel + "\ndimension: 100", "", "unknown key dimension"},
		{"relations a mapping", "entities: {a: {partitions: 2}}\nrelations: {name: r}", "", "a mapping where it does not belong"},
		{"malformed YAML", "entities: {a: {partitions: 2}\nrelations: [", "", "not a schema: yaml: "},
		{"empty file", "", "", "the file is empty"},
		{"comments only", "# nothing\n", "", "the file is empty"},
		{"two documents", "entities: {a: {partitions: 2}}" + rel + "\n---\nentities: {}\n", "", "more than one YAML document"},
		{"a type name with a slash", "entities: {a/b: {partitions: 2}}\nrelations: [{name: r, lhs: a/b, rhs: a/b}]", "entities.a/b", "slash"},
		{"a relation name with a tab", "entities: {a: {partitions: 2}}\nrelations: [{name: \"r\\ts\", lhs: a, rhs: a}]", "relations[0].name", "tab or line break"},
		{"an empty type name", "entities: {\"\": {partitions: 2}}" + rel, "entities", "empty name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSchema([]byte(tt.in))
			var se *SchemaError
			require.ErrorAs(t, err, &se, "%v", err)
			assert.Equal(t, tt.field, se.Field, "%v", err)
			assert.Contains(t, err.Error(), tt.msg)
			assert.NotContains(t, err.Error(), "\n", "one line")
			assert.NotContains(t, err.Error(), "--", "no flag names")
			assert.NotContains(t, err.Error(), "struct {", "no Go types")
		})
	}
}

// render writes s back in the file's YAML form (quoted: names may hold
// any character ParseSchema accepts).
func render(s Schema) string {
	var b strings.Builder
	b.WriteString("entities:\n")
	for _, t := range s.Types {
		fmt.Fprintf(&b, "  %q: {partitions: %d}\n", t.Name, t.Partitions)
	}
	b.WriteString("relations:\n")
	for _, r := range s.Relations {
		fmt.Fprintf(&b, "  - {name: %q, lhs: %q, rhs: %q}\n", r.Name, r.Lhs, r.Rhs)
	}
	return b.String()
}

// FuzzParseSchema: ParseSchema never panics; what it accepts passes
// Check, names no more than one partition count, reads back the same from
// its own rendering, and every error is a one-line SchemaError.
func FuzzParseSchema(f *testing.F) {
	for _, seed := range []string{
		pbgSchema,
		`{"entities": {"u": {"partitions": 2}}, "relations": [{"name": "r", "lhs": "u", "rhs": "u"}]}`,
		"entities: {a: null, b: {}}\nrelations: [{name: r, lhs: a, rhs: b}]",
		"entities: {a: {partitions: 2}, b: {partitions: 3}}\nrelations: [{name: r, lhs: a, rhs: b}]",
		"entities: &x {a: {partitions: 2}}\nrelations: [{name: r, lhs: a, rhs: a}]",
		"entities: {a: *x}\nrelations: []",
		"entities: {? [a, b] : {partitions: 2}}\nrelations: [{name: r, lhs: a, rhs: a}]",
		"--- \n...\n",
		"entities: {a: {partitions: 99999999999999999999}}\nrelations: [{name: r, lhs: a, rhs: a}]",
		"entities: {a: {partitions: 0x10}}\nrelations: [{name: r, lhs: a, rhs: a}]",
		"entities:\n  a: {<<: {partitions: 2}}\nrelations: [{name: r, lhs: a, rhs: a}]",
		"",
		"[",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSchema(data)
		if err != nil {
			var se *SchemaError
			require.ErrorAs(t, err, &se)
			require.NotContains(t, err.Error(), "\n")
			return
		}
		require.NoError(t, s.Check())
		p := s.P()
		require.GreaterOrEqual(t, p, 1)
		for i, ty := range s.Types {
			if s.Partitioned(i) {
				require.Equal(t, p, ty.Partitions)
			}
		}
		for _, r := range s.Relations {
			_, ok := s.TypeIndex(r.Lhs)
			require.True(t, ok)
			_, ok = s.TypeIndex(r.Rhs)
			require.True(t, ok)
		}
		again, err := ParseSchema([]byte(render(s)))
		require.NoError(t, err, "%s", render(s))
		require.Equal(t, s, again)
	})
}

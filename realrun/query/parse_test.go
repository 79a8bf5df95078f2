package query

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
)

func TestParseQueries(t *testing.T) {
	cases := []struct {
		name, in string
		want     []Question
		err      string
	}{
		{"tails heads triple", "a\tr\t?\n?\tr\tb\na\tr\tb\n", []Question{
			{Head: "a", Relation: "r", Tail: "?", Line: 1}, {Head: "?", Relation: "r", Tail: "b", Line: 2}, {Head: "a", Relation: "r", Tail: "b", Line: 3}}, ""},
		{"two columns", "a ?\n? b\na b", []Question{{Head: "a", Tail: "?", Line: 1}, {Head: "?", Tail: "b", Line: 2}, {Head: "a", Tail: "b", Line: 3}}, ""},
		{"spaces, CRLF, comments, blanks", "# queries\r\n\r\n  a   r   ?  \r\n\t\t\n# end\n", []Question{{Head: "a", Relation: "r", Tail: "?", Line: 3}}, ""},
		{"names with spaces need tabs", "New York\tlocated in\t?\n", []Question{{Head: "New York", Relation: "located in", Tail: "?", Line: 1}}, ""},
		{"one field", "a r ?\nlonely\n", nil, "q.tsv:2: 1 fields \"lonely\": want head relation tail"},
		{"four fields", "a r b c\n", nil, "q.tsv:1: 4 fields"},
		{"both unknown", "? r ?\n", nil, "q.tsv:1: both head and tail are \"?\""},
		{"unknown relation", "a\t?\tb\n", nil, "q.tsv:1: the relation is \"?\""},
		{"empty field", "a\t\tb\n", nil, "q.tsv:1: field 2 is empty"},
		{"not UTF-8", "a r ?\n\xff\xfe r ?\n", nil, "q.tsv:2: not UTF-8 text"},
		{"NUL", "a\x00 r ?\n", nil, "q.tsv:1: not UTF-8 text"},
		{"no query", "# nothing\n\n", nil, "q.tsv: no query"},
		{"empty file", "", nil, "q.tsv: no query"},
		{"long line", strings.Repeat("x", maxLine+10) + " r ?\n", nil, "q.tsv:1: line longer than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseQueries(strings.NewReader(c.in), "q.tsv")
			if c.err != "" {
				require.Error(t, err)
				var bad *inputerr.Error
				assert.ErrorAs(t, err, &bad)
				assert.Contains(t, err.Error(), c.err)
				assert.NotContains(t, err.Error(), "\n")
				return
			}
			require.NoError(t, err)
			for i := range c.want {
				c.want[i].File = "q.tsv"
			}
			assert.Equal(t, c.want, got)
		})
	}
}

func TestQuestionKind(t *testing.T) {
	for _, c := range []struct {
		q    Question
		kind Kind
		text string
	}{
		{Question{Head: "a", Relation: "r", Tail: "?"}, Tails, "a r ?"},
		{Question{Head: "?", Relation: "r", Tail: "b"}, Heads, "? r b"},
		{Question{Head: "a", Relation: "r", Tail: "b"}, Triple, "a r b"},
		{Question{Head: "a", Tail: "?"}, Tails, "a ?"},
	} {
		assert.Equal(t, c.kind, c.q.Kind(), c.text)
		assert.Equal(t, c.text, c.q.String())
	}
}

// FuzzParseQueries: any input parses into well-formed questions or fails
// with one line "q.tsv:…" naming the file; never a panic.
func FuzzParseQueries(f *testing.F) {
	for _, s := range []string{"a\tr\t?\n", "? b\n", "a r b\r\n# c\n", "? r ?\n", "\xff\n", "a\t\tb", "\n\n\n", strings.Repeat("a ", 5)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		qs, err := ParseQueries(strings.NewReader(in), "q.tsv")
		if err != nil {
			var bad *inputerr.Error
			require.ErrorAs(t, err, &bad)
			require.True(t, strings.HasPrefix(err.Error(), "q.tsv"), err.Error())
			require.NotContains(t, err.Error(), "\n")
			require.Nil(t, qs)
			return
		}
		require.NotEmpty(t, qs)
		last := 0
		for _, q := range qs {
			require.Greater(t, q.Line, last)
			last = q.Line
			require.False(t, q.Head == Unknown && q.Tail == Unknown)
			require.NotEqual(t, Unknown, q.Relation)
			for _, s := range []string{q.Head, q.Relation, q.Tail} {
				require.True(t, utf8.ValidString(s))
				require.NotContains(t, s, "\t")
				require.NotContains(t, s, "\n")
			}
			require.NotEmpty(t, q.Head)
			require.NotEmpty(t, q.Tail)
		}
	})
}

// TestQuestionString: a question prints as written, its fields apart by
// spaces, or by " | " where a name holds a blank.
func TestQuestionString(t *testing.T) {
	for _, tc := range []struct {
		q    Question
		want string
	}{
		{Question{Head: "dog", Relation: "_hypernym", Tail: "?"}, "dog _hypernym ?"},
		{Question{Head: "?", Tail: "b"}, "? b"},
		{Question{Head: "Leslie Knuth", Relation: "lives in", Tail: "?"}, "Leslie Knuth | lives in | ?"},
		{Question{Head: "a", Relation: "r", Tail: "New York"}, "a | r | New York"},
	} {
		assert.Equal(t, tc.want, tc.q.String())
	}
}

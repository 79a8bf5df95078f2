package graph

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// names lists a table's names in id order.
func names(ids *IDs) []string {
	var out []string
	for i := int64(0); i < ids.Len(); i++ {
		out = append(out, ids.Name(i))
	}
	return out
}

func TestParseFormats(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		f      Format
		edges  []edge
		nodes  []string
		rels   []string
		delim  string
		header []string
		cols   [3]int // src, rel, dst
	}{
		{name: "tsv ids with spaces and commas", in: "New York\tlocated in\tUSA\nParis, TX\tlocated in\tUSA\n",
			edges: []edge{{0, 0, 1}, {2, 0, 1}}, nodes: []string{"New York", "USA", "Paris, TX"}, rels: []string{"located in"},
			delim: DelimTab, cols: [3]int{0, 1, 2}},
		{name: "tsv blanks around fields are not part of ids", in: " a b \t r\t c\n",
			edges: []edge{{0, 0, 1}}, nodes: []string{"a b", "c"}, rels: []string{"r"}, delim: DelimTab, cols: [3]int{0, 1, 2}},
		{name: "quoted csv", in: "\"Smith, John\",knows,\"Doe, \"\"JD\"\" Jane\"\n\"Doe, \"\"JD\"\" Jane\",knows, x\n",
			edges: []edge{{0, 0, 1}, {1, 0, 2}}, nodes: []string{"Smith, John", `Doe, "JD" Jane`, "x"}, rels: []string{"knows"},
			delim: DelimComma, cols: [3]int{0, 1, 2}},
		{name: "csv with crlf, comments and blank lines", in: "# made by hand\r\n\r\na,b\r\n# more\r\nb,c\r\n",
			edges: []edge{{0, 0, 1}, {1, 0, 2}}, nodes: []string{"a", "b", "c"}, delim: DelimComma, cols: [3]int{0, -1, 1}},
		{name: "csv quoted field over a line break in an ignored column", in: "a,r,b,\"two\nlines\"\nb,r,c,x\n", f: Format{Columns: "1,2,3"},
			edges: []edge{{0, 0, 1}, {1, 0, 2}}, nodes: []string{"a", "b", "c"}, rels: []string{"r"}, delim: DelimComma, cols: [3]int{0, 1, 2}},
		{name: "header auto detected", in: "subject\tpredicate\tobject\na\tr\tb\n",
			edges: []edge{{0, 0, 1}}, nodes: []string{"a", "b"}, rels: []string{"r"}, delim: DelimTab,
			header: []string{"subject", "predicate", "object"}, cols: [3]int{0, 1, 2}},
		{name: "header names place the columns", in: "tail,relation,head\nb,r,a\n",
			edges: []edge{{0, 0, 1}}, nodes: []string{"a", "b"}, rels: []string{"r"}, delim: DelimComma,
			header: []string{"tail", "relation", "head"}, cols: [3]int{2, 1, 0}},
		{name: "header with a weight column and no relation", in: "# c\nFrom To Weight\n1 2 0.5\n2 3 1\n",
			edges: []edge{{0, 0, 1}, {1, 0, 2}}, nodes: []string{"1", "2", "3"}, delim: DelimSpace,
			header: []string{"From", "To", "Weight"}, cols: [3]int{0, -1, 1}},
		{name: "neo4j and _id header names", in: ":START_ID,:TYPE,:END_ID\nx,t,y\n",
			edges: []edge{{0, 0, 1}}, nodes: []string{"x", "y"}, rels: []string{"t"}, delim: DelimComma,
			header: []string{":START_ID", ":TYPE", ":END_ID"}, cols: [3]int{0, 1, 2}},
		{name: "header auto: an edge of ordinary ids is no header", in: "alice bob\nbob carol\n",
			edges: []edge{{0, 0, 1}, {1, 0, 2}}, nodes: []string{"alice", "bob", "carol"}, delim: DelimSpace, cols: [3]int{0, -1, 1}},
		{name: "header yes", in: "a b\nc d\n", f: Format{Header: HeaderYes},
			edges: []edge{{0, 0, 1}}, nodes: []string{"c", "d"}, delim: DelimSpace, header: []string{"a", "b"}, cols: [3]int{0, -1, 1}},
		{name: "header no", in: "source target\nc d\n", f: Format{Header: HeaderNo},
			edges: []edge{{0, 0, 1}, {2, 0, 3}}, nodes: []string{"source", "target", "c", "d"}, delim: DelimSpace, cols: [3]int{0, -1, 1}},
		{name: "columns by name in a wider file", in: "id,s,p,o,date\n1,a,r,b,2020\n2,b,r,c,2021\n", f: Format{Columns: "S,P,O"},
			edges: []edge{{0, 0, 1}, {1, 0, 2}}, nodes: []string{"a", "b", "c"}, rels: []string{"r"}, delim: DelimComma,
			header: []string{"id", "s", "p", "o", "date"}, cols: [3]int{1, 2, 3}},
		{name: "columns by name, two of them", in: "subject,predicate,object\na,r,b\n", f: Format{Columns: "subject,object"},
			edges: []edge{{0, 0, 1}}, nodes: []string{"a", "b"}, delim: DelimComma,
			header: []string{"subject", "predicate", "object"}, cols: [3]int{0, -1, 2}},
		{name: "columns by number counted from 1", in: "e1\tb\tr\ta\t0.3\ne2\tc\tr\tb\t0.1\n", f: Format{Columns: "4,3,2"},
			edges: []edge{{0, 0, 1}, {1, 0, 2}}, nodes: []string{"a", "b", "c"}, rels: []string{"r"}, delim: DelimTab, cols: [3]int{3, 2, 1}},
		{name: "columns by number with a header", in: "x y z\na r b\n", f: Format{Columns: "3,1", Header: HeaderYes},
			edges: []edge{{0, 0, 1}}, nodes: []string{"b", "a"}, delim: DelimSpace, header: []string{"x", "y", "z"}, cols: [3]int{2, -1, 0}},
		{name: "delimiter space reads double tabs as one", in: "10\t20\n20\t\t30\n", f: Format{Delimiter: DelimSpace},
			edges: []edge{{0, 0, 1}, {1, 0, 2}}, nodes: []string{"10", "20", "30"}, delim: DelimSpace, cols: [3]int{0, -1, 1}},
		{name: "delimiter comma on a file without commas in its first line", in: "a b,c\n", f: Format{Delimiter: DelimComma},
			edges: []edge{{0, 0, 1}}, nodes: []string{"a b", "c"}, delim: DelimComma, cols: [3]int{0, -1, 1}},
		{name: "delimiter tab keeps commas", in: "a,1\tb,2\n", f: Format{Delimiter: DelimTab},
			edges: []edge{{0, 0, 1}}, nodes: []string{"a,1", "b,2"}, delim: DelimTab, cols: [3]int{0, -1, 1}},
		{name: "a comment may hold quotes", in: "# the \"best\" graph\na,b\n",
			edges: []edge{{0, 0, 1}}, nodes: []string{"a", "b"}, delim: DelimComma, cols: [3]int{0, -1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes, rels := NewIDs(), NewIDs()
			got, info, err := parseWith(tc.in, tc.f, nodes, rels)
			require.NoError(t, err)
			assert.Equal(t, tc.edges, got)
			assert.Equal(t, tc.nodes, names(nodes))
			assert.Equal(t, tc.rels, names(rels))
			assert.Equal(t, tc.delim, info.Delimiter)
			assert.Equal(t, tc.header, info.Header)
			assert.Equal(t, tc.cols, [3]int{info.Src, info.Rel, info.Dst})
			assert.Equal(t, int64(len(tc.edges)), info.Edges)

			sniffed, err := Sniff(strings.NewReader(tc.in), "edges.tsv", tc.f)
			require.NoError(t, err)
			info.Edges = 0
			assert.Equal(t, info, sniffed, "Sniff reads the layout Parse reads")
		})
	}
}

func TestParseFormatErrors(t *testing.T) {
	tests := []struct {
		name, in string
		f        Format
		want     string
	}{
		{"bare quote in csv", "a,b\n5\" disk,c\n", Format{}, `edges.tsv:2: CSV: bare " in non-quoted-field (quote a field holding quotes whole, its quotes doubled: "5"" disk")`},
		{"unclosed quote in csv", "a,b\n\"c,d\n", Format{}, `edges.tsv:2: CSV: extraneous or missing " in quoted-field (quote a field holding quotes whole, its quotes doubled: "5"" disk")`},
		{"line break in a quoted id", "a,b\n\"c\nd\",e\n", Format{}, `edges.tsv:2: src id "c\nd" holds a tab or line break, which ids.tsv could not hold`},
		{"tab in a quoted id", "x,y\n\"c\td\",e\n", Format{}, `edges.tsv:2: src id "c\td" holds a tab or line break, which ids.tsv could not hold`},
		{"csv line over 1 MiB", "a,b\n" + strings.Repeat("x", MaxLineBytes+2) + ",b\n", Format{}, "edges.tsv:2: line longer than 1 MiB"},
		{"csv record over 16 MiB", "a,b\n\"" + strings.Repeat(strings.Repeat("x", 1000)+"\n", 17<<10), Format{}, "a record runs on over 16 MiB (an unclosed quote?)"},
		{"csv nul", "a,b\n\"c\x00\",d\n", Format{}, "edges.tsv:2: not a text edge list"},
		{"wider file without columns", "a\tb\tc\td\n", Format{}, "edges.tsv:1: want 2 or 3 fields, got 4 ({Columns} picks src, rel and dst from wider files)"},
		{"ids with spaces in a blank-separated file", "a r b\nNew York r b\n", Format{}, "edges.tsv:2: want 2 or 3 fields, got 4" + blankHint},
		{"columns name not in the header", "s,p,o\na,r,b\n", Format{Columns: "s,rel,o"}, `edges.tsv:1: {Columns} s,rel,o names columns, but the first line, "s,p,o", is not a header naming them ({Header} yes if it is one)`},
		{"columns name missing with header yes", "s,p,o\na,r,b\n", Format{Columns: "s,rel,o", Header: HeaderYes}, `edges.tsv:1: {Columns}: the header has no column "rel" (it has "s,p,o")`},
		{"columns name twice in the header", "s,s,o\na,r,b\n", Format{Columns: "s,o", Header: HeaderYes}, `edges.tsv:1: {Columns}: the header names "s" twice`},
		{"columns number past the last field", "a b c\n", Format{Columns: "1,4"}, "edges.tsv:1: {Columns} 1,4: the line has only 3 fields"},
		{"header and data of other widths", "source,target\na,b,c\n", Format{}, "edges.tsv:2: 3 fields, but earlier lines have 2"},
		{"only a header", "src dst\n", Format{}, "edges.tsv: no edges"},
		{"bad delimiter", "a b\n", Format{Delimiter: "semicolon"}, `edges.tsv: {Delimiter} "semicolon": want auto, tab, comma or space`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, info, err := parseWith(tc.in, tc.f, nil, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n")
			assert.Zero(t, info)
		})
	}
}

func TestParseUnseen(t *testing.T) {
	nodes, rels := NewIDs(), NewIDs()
	_, _, err := parseWith("a\tr\tb\nb\ts\tc\n", Format{}, nodes, rels)
	require.NoError(t, err)
	nodes.Freeze()
	rels.Freeze()
	test := "head\trelation\ttail\na\tr\tc\nx\tr\tb\na\tq\tb\nz\tq\ty\nb\ts\ta\n"

	got, info, err := parseWith(test, Format{}, nodes, rels)
	require.NoError(t, err)
	assert.Equal(t, []edge{{0, 0, 2}, {1, 1, 0}}, got)
	assert.Equal(t, int64(2), info.Edges)
	assert.Equal(t, int64(2), info.UnseenNode, "x and z: an unseen node counts before an unseen relation")
	assert.Equal(t, int64(1), info.UnseenRelation)
	assert.Equal(t, int64(3), info.Skipped())

	_, _, err = parseWith(test, Format{Unseen: UnseenError}, nodes, rels)
	require.Error(t, err)
	assert.Equal(t, `edges.tsv:3: unknown node id "x"`+unseenHint, err.Error())

	_, _, err = parseWith("x\tr\ty\n", Format{}, nodes, rels)
	require.Error(t, err)
	assert.Equal(t, "edges.tsv: none of its 1 edges is left: each has a node or relation not in the training edges", err.Error())
	assert.Equal(t, int64(3), nodes.Len(), "a frozen table does not grow")
}

func TestFormatCheck(t *testing.T) {
	tests := []struct {
		f    Format
		want string
	}{
		{Format{}, ""},
		{Format{Delimiter: "tab", Header: "yes", Columns: "1, 3", Unseen: "error"}, ""},
		{Format{Header: "maybe"}, `{Header} "maybe": want auto, yes or no`},
		{Format{Unseen: "drop"}, `{Unseen} "drop": want skip or error`},
		{Format{Columns: "1"}, "{Columns} 1: want src,dst or src,rel,dst (1 entries given)"},
		{Format{Columns: "1,2,3,4"}, "{Columns} 1,2,3,4: want src,dst or src,rel,dst (4 entries given)"},
		{Format{Columns: "0,1,2"}, "{Columns} 0,1,2: columns are numbered from 1, as cut -f numbers them"},
		{Format{Columns: "a,,b"}, "{Columns} a,,b: entry 2 is empty"},
		{Format{Columns: "a,A"}, "{Columns} a,A: names column A twice"},
		{Format{Columns: "s,o", Header: "no"}, "{Columns} s,o names header columns, but {Header} no says the files have no header line (give column numbers, counted from 1)"},
	}
	for _, tc := range tests {
		err := tc.f.Check()
		if tc.want == "" {
			assert.NoError(t, err, "%+v", tc.f)
			continue
		}
		require.Error(t, err, "%+v", tc.f)
		assert.Equal(t, tc.want, err.Error())
	}
	assert.Empty(t, Format{Delimiter: "auto", Header: "auto", Unseen: "skip"}.NonDefault())
	assert.Equal(t, map[string]string{"--header": "no", "--columns": "1,3"}, Format{Header: "no", Columns: " 1,3 "}.NonDefault())
	assert.Equal(t, map[string]string{"--delimiter": "auto", "--header": "auto", "--columns": "", "--unseen": "skip"}, Format{}.Flags())
}

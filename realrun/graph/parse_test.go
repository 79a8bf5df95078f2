package graph

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type edge struct{ src, rel, dst int64 }

// parseAll parses in with fresh tables unless given, and collects the
// edges; it returns the number of columns read (2 or 3, 0 on error).
func parseAll(in string, nodes, rels *IDs) ([]edge, int, error) {
	got, info, err := parseWith(in, Format{Unseen: UnseenError}, nodes, rels)
	cols := 0
	if err == nil {
		cols = 2
		if info.HasRelations() {
			cols = 3
		}
	}
	return got, cols, err
}

// parseWith parses in as f says with fresh tables unless given, and
// collects the edges.
func parseWith(in string, f Format, nodes, rels *IDs) ([]edge, Info, error) {
	if nodes == nil {
		nodes, rels = NewIDs(), NewIDs()
	}
	var got []edge
	info, err := Parse(strings.NewReader(in), "edges.tsv", f, nodes, rels, func(s, r, d int64) error {
		got = append(got, edge{s, r, d})
		return nil
	})
	return got, info, err
}

func TestParseGood(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		cols  int
		edges []edge
		nodes []string
		rels  []string
	}{
		{"two columns", "1 2\n2 3\n3 1\n", 2,
			[]edge{{0, 0, 1}, {1, 0, 2}, {2, 0, 0}}, []string{"1", "2", "3"}, nil},
		{"three columns", "a likes b\nb hates a\nb likes c\n", 3,
			[]edge{{0, 0, 1}, {1, 1, 0}, {1, 0, 2}}, []string{"a", "b", "c"}, []string{"likes", "hates"}},
		{"tabs", "10\t20\n20\t30\n", 2,
			[]edge{{0, 0, 1}, {1, 0, 2}}, []string{"10", "20", "30"}, nil},
		{"commas", "x,r,y\ny, r ,z\n", 3,
			[]edge{{0, 0, 1}, {1, 0, 2}}, []string{"x", "y", "z"}, []string{"r"}},
		{"snap comments and blanks", "# Directed graph\n# Nodes: 3 Edges: 2\n\n0\t1\n   \n  # indented\n1\t2\n", 2,
			[]edge{{0, 0, 1}, {1, 0, 2}}, []string{"0", "1", "2"}, nil},
		{"crlf", "a b\r\nb c\r\n", 2,
			[]edge{{0, 0, 1}, {1, 0, 2}}, []string{"a", "b", "c"}, nil},
		{"string ids", "/m/0abc\t/film/actor\t/m/0xyz\nÉmile\t/r\tZoë\n", 3,
			[]edge{{0, 0, 1}, {2, 1, 3}}, []string{"/m/0abc", "/m/0xyz", "Émile", "Zoë"}, []string{"/film/actor", "/r"}},
		{"no trailing newline", "1 2\n3 4", 2,
			[]edge{{0, 0, 1}, {2, 0, 3}}, []string{"1", "2", "3", "4"}, nil},
		{"self loop and duplicate kept", "1 1\n1 1\n", 2,
			[]edge{{0, 0, 0}, {0, 0, 0}}, []string{"1"}, nil},
		{"integers are strings", "007 7\n", 2,
			[]edge{{0, 0, 1}}, []string{"007", "7"}, nil},
		{"byte order mark", "\uFEFFa b\n", 2,
			[]edge{{0, 0, 1}}, []string{"a", "b"}, nil},
		{"line of exactly 1 MiB", strings.Repeat("a", MaxLineBytes-2) + " b\r\n", 2,
			[]edge{{0, 0, 1}}, []string{strings.Repeat("a", MaxLineBytes-2), "b"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes, rels := NewIDs(), NewIDs()
			got, cols, err := parseAll(tc.in, nodes, rels)
			require.NoError(t, err)
			assert.Equal(t, tc.cols, cols)
			assert.Equal(t, tc.edges, got)
			require.Equal(t, int64(len(tc.nodes)), nodes.Len())
			for i, s := range tc.nodes {
				assert.Equal(t, s, nodes.Name(int64(i)))
			}
			require.Equal(t, int64(len(tc.rels)), rels.Len())
			for i, s := range tc.rels {
				assert.Equal(t, s, rels.Name(int64(i)))
			}
		})
	}
}

const blankHint = "; blank-separated, so an id with spaces needs a tab-separated or CSV file"

func TestParseBad(t *testing.T) {
	long := strings.Repeat("x", MaxLineBytes)
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"mixed columns", "a r b\nc r d\ne f\n", "edges.tsv:3: 2 fields, but earlier lines have 3" + blankHint},
		{"mixed columns after comment", "# h\na b\nc r d\n", "edges.tsv:3: 3 fields, but earlier lines have 2" + blankHint},
		{"one column", "a b\nc\n", "edges.tsv:2: want 2 or 3 fields, got 1"},
		{"four columns", "a b\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\na b c d\n", "edges.tsv:17: want 2 or 3 fields, got 4" + blankHint},
		{"double tab is an empty field", "10\t20\n20\t\t30\n", "edges.tsv:2: 3 fields, but earlier lines have 2"},
		{"empty dst in tsv", "a\tr\tb\nc\tr\t \n", "edges.tsv:2: dst (column 3) is empty"},
		{"empty src in csv", "a,b\n,c\n", "edges.tsv:2: src (column 1) is empty"},
		{"empty", "", "edges.tsv: no edges"},
		{"only blanks", "\n \r\n\t\n", "edges.tsv: no edges"},
		{"only comments", "# a b\n#c d\n", "edges.tsv: no edges"},
		{"nul byte", "a b\nc\x00 d\n", "edges.tsv:2: not a text edge list"},
		{"invalid utf-8", "\xff\xfe a b\n", "edges.tsv:1: not a text edge list"},
		{"binary blob", "\x7fELF\x02\x01\x01\x00\x00", "edges.tsv:1: not a text edge list"},
		{"line over 1 MiB", "a b\n" + long + " b\n", "edges.tsv:2: line longer than 1 MiB"},
		{"line over 1 MiB by one byte", long + "x\n", "edges.tsv:1: line longer than 1 MiB"},
		{"huge line without newline", "a b\n" + long + long, "edges.tsv:2: line longer than 1 MiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, cols, err := parseAll(tc.in, nil, nil)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
			assert.Zero(t, cols)
		})
	}
}

const unseenHint = " (not in the training edges; {Unseen} skip leaves such edges out)"

func TestParseFrozen(t *testing.T) {
	nodes, rels := NewIDs(), NewIDs()
	_, _, err := parseAll("a r b\nb s c\n", nodes, rels)
	require.NoError(t, err)
	nodes.Freeze()
	rels.Freeze()
	assert.True(t, nodes.Frozen())

	got, cols, err := parseAll("c s a\n", nodes, rels)
	require.NoError(t, err)
	assert.Equal(t, 3, cols)
	assert.Equal(t, []edge{{2, 1, 0}}, got)

	tests := []struct {
		name, in, want string
	}{
		{"unknown src", "a r b\nx r b\n", `edges.tsv:2: unknown node id "x"` + unseenHint},
		{"unknown dst", "# c\na r zz\n", `edges.tsv:2: unknown node id "zz"` + unseenHint},
		{"unknown relation", "a q b\n", `edges.tsv:1: unknown relation id "q"` + unseenHint},
		{"long unknown id is cut", strings.Repeat("é", 40) + " r a\n", `edges.tsv:1: unknown node id "` + strings.Repeat("é", 32) + `"…` + unseenHint},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parseAll(tc.in, nodes, rels)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
	assert.Equal(t, int64(3), nodes.Len(), "a frozen table does not grow")
	assert.Equal(t, int64(2), rels.Len())
}

func TestParseEmitAndReadErrors(t *testing.T) {
	stop := errors.New("disk full")
	_, err := Parse(strings.NewReader("a b\nc d\n"), "e.txt", Format{}, NewIDs(), NewIDs(), func(s, r, d int64) error {
		if s == 2 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	assert.Equal(t, "e.txt:2: disk full", err.Error())

	_, err = Parse(iotest.TimeoutReader(strings.NewReader(strings.Repeat("a b\n", 100_000))), "slow.txt", Format{}, NewIDs(), NewIDs(), func(_, _, _ int64) error { return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "slow.txt:")
	assert.ErrorIs(t, err, iotest.ErrTimeout)

	_, err = Parse(strings.NewReader("a b\n"), "n.txt", Format{}, nil, NewIDs(), func(_, _, _ int64) error { return nil })
	assert.Error(t, err)
	_, err = Parse(strings.NewReader("a b\n"), "n.txt", Format{}, NewIDs(), NewIDs(), nil)
	assert.Error(t, err)
}

func TestIDs(t *testing.T) {
	var zero IDs // the zero value is usable
	assert.Equal(t, int64(0), zero.ID("x"))
	assert.Equal(t, int64(1), zero.ID("y"))
	assert.Equal(t, int64(0), zero.ID("x"))

	ids := NewIDs()
	_, ok := ids.Lookup("a")
	assert.False(t, ok)
	assert.Equal(t, int64(0), ids.ID("a"))
	assert.Equal(t, int64(1), ids.ID("b c"))
	id, ok := ids.Lookup("b c")
	assert.True(t, ok)
	assert.Equal(t, int64(1), id)
	assert.Equal(t, int64(2), ids.Len())
	assert.Equal(t, "a", ids.Name(0))
	assert.Equal(t, "", ids.Name(2))
	assert.Equal(t, "", ids.Name(-1))

	var buf bytes.Buffer
	require.NoError(t, ids.WriteTSV(&buf))
	assert.Equal(t, "0\ta\n1\tb c\n", buf.String())

	ids.Freeze()
	assert.Equal(t, int64(-1), ids.ID("new"))
	assert.Equal(t, int64(2), ids.Len())
	assert.Equal(t, int64(0), ids.ID("a"))

	bad := NewIDs()
	bad.ID("ok")
	bad.ID("tab\there")
	buf.Reset()
	err := bad.WriteTSV(&buf)
	require.Error(t, err)
	assert.Equal(t, `graph: id 1: name "tab\there" contains a tab or line break`, err.Error())
	assert.Zero(t, buf.Len(), "nothing written")
}

// FuzzParse parses any bytes under any Format: the parse never panics,
// its errors are one line naming the input, its edges use ids in range,
// a second parse with the frozen tables gives the same edges, and the
// names it assigned can always be written to ids.tsv.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"1 2\n2 3\n", "a r b\nb r c\n", "# c\n\n1,2\r\n", "a\tb\tc\td\n", "x\x00y z\n",
		"\uFEFFa b", "a b\nc d e\n", "\xff", "", "#", ",,, ,\n", "a b\r\r\n",
		"src,rel,dst\n\"a, b\",r,\"c \"\"q\"\"\"\n", "head\trelation\ttail\nNew York\tlocated in\tUSA\n",
		"\"a\nb\",r,c\n", "a,\"b\n", "from to weight\n1 2 0.5\n", "s,p,o,x\na,b,c,d\n",
	} {
		f.Add([]byte(s), uint8(0), uint8(0), "")
	}
	f.Add([]byte("subject,predicate,object,w\na,r,b,1\n"), uint8(2), uint8(1), "subject,object")
	f.Add([]byte("a\tb\tc\td\n"), uint8(1), uint8(2), "4,1")
	f.Fuzz(func(t *testing.T, in []byte, delim, header uint8, columns string) {
		form := Format{
			Delimiter: []string{"", DelimTab, DelimComma, DelimSpace}[delim%4],
			Header:    []string{"", HeaderYes, HeaderNo}[header%3],
			Columns:   columns,
		}
		if form.Check() != nil {
			return
		}
		nodes, rels := NewIDs(), NewIDs()
		var got []edge
		info, err := Parse(bytes.NewReader(in), "fuzz", form, nodes, rels, func(s, r, d int64) error {
			got = append(got, edge{s, r, d})
			return nil
		})
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "fuzz:") || strings.Contains(msg, "\n") {
				t.Fatalf("error not one line naming the input: %q", msg)
			}
			return
		}
		if int64(len(got)) != info.Edges || len(got) == 0 {
			t.Fatalf("Info says %d edges, %d emitted", info.Edges, len(got))
		}
		for _, e := range got {
			if e.src < 0 || e.src >= nodes.Len() || e.dst < 0 || e.dst >= nodes.Len() {
				t.Fatalf("node id out of range: %v, Len %d", e, nodes.Len())
			}
			if !info.HasRelations() && e.rel != 0 || info.HasRelations() && (e.rel < 0 || e.rel >= rels.Len()) {
				t.Fatalf("relation id out of range: %v, %+v, Len %d", e, info, rels.Len())
			}
		}
		sniffed, err := Sniff(bytes.NewReader(in), "fuzz", form)
		if err != nil || sniffed.Src != info.Src || sniffed.Rel != info.Rel || sniffed.Dst != info.Dst || sniffed.Delimiter != info.Delimiter {
			t.Fatalf("Sniff %+v, %v; Parse %+v", sniffed, err, info)
		}
		// Parsing again with the frozen tables gives the same edges.
		nodes.Freeze()
		rels.Freeze()
		var again []edge
		form.Unseen = UnseenError
		_, err = Parse(bytes.NewReader(in), "fuzz", form, nodes, rels, func(s, r, d int64) error {
			again = append(again, edge{s, r, d})
			return nil
		})
		if err != nil {
			t.Fatalf("re-parse with frozen tables: %v", err)
		}
		if fmt.Sprint(got) != fmt.Sprint(again) {
			t.Fatalf("re-parse differs")
		}
		// Names from Parse can always be written out.
		var buf bytes.Buffer
		if err := nodes.WriteTSV(&buf); err != nil {
			t.Fatalf("WriteTSV: %v", err)
		}
		if err := rels.WriteTSV(&buf); err != nil {
			t.Fatalf("WriteTSV: %v", err)
		}
	})
}

package graph

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxLineBytes is the longest line Parse accepts, not counting the line end.
const MaxLineBytes = 1 << 20

// IDs maps names (the ids of an edge file, arbitrary strings) to dense ids
// 0, 1, 2, … in first-seen order, and back. The zero value is an empty,
// unfrozen table. An IDs is not safe for concurrent use.
type IDs struct {
	index  map[string]int64
	names  []string
	frozen bool
}

// NewIDs returns an empty table.
func NewIDs() *IDs { return &IDs{index: make(map[string]int64)} }

// ID returns the dense id of s, assigning the next one on first sight. Once
// the table is frozen, an unknown s gets -1 and nothing is assigned.
func (ids *IDs) ID(s string) int64 {
	if id, ok := ids.index[s]; ok {
		return id
	}
	if ids.frozen {
		return -1
	}
	return ids.add(s)
}

// idBytes is ID without allocating for names already known.
func (ids *IDs) idBytes(b []byte) int64 {
	if id, ok := ids.index[string(b)]; ok {
		return id
	}
	if ids.frozen {
		return -1
	}
	return ids.add(string(b))
}

func (ids *IDs) add(s string) int64 {
	if ids.index == nil {
		ids.index = make(map[string]int64)
	}
	id := int64(len(ids.names))
	ids.index[s] = id
	ids.names = append(ids.names, s)
	return id
}

// Lookup returns the dense id of s, if it has one; it never assigns.
func (ids *IDs) Lookup(s string) (int64, bool) {
	id, ok := ids.index[s]
	return id, ok
}

// Len returns the number of ids assigned: every id is in [0, Len()).
func (ids *IDs) Len() int64 { return int64(len(ids.names)) }

// Name returns the name of id, or "" if id is not in [0, Len()).
func (ids *IDs) Name(id int64) string {
	if id < 0 || id >= int64(len(ids.names)) {
		return ""
	}
	return ids.names[id]
}

// Freeze stops the table from growing: afterwards ID returns -1 for unknown
// names, and Parse reports them as errors. Use it after parsing the training
// edges and before parsing the validation and test edges with the same tables.
func (ids *IDs) Freeze() { ids.frozen = true }

// Frozen reports whether Freeze has been called.
func (ids *IDs) Frozen() bool { return ids.frozen }

// WriteTSV writes one "id\tname" line per id, in id order. It fails, writing
// nothing, if a name contains a tab, CR or LF (impossible for names that came
// from Parse), since the line could not be read back.
func (ids *IDs) WriteTSV(w io.Writer) error {
	for id, s := range ids.names {
		if strings.ContainsAny(s, "\t\r\n") {
			return fmt.Errorf("graph: id %d: name %s contains a tab or line break", id, quoteShort(s))
		}
	}
	bw := bufio.NewWriter(w)
	for id, s := range ids.names {
		if _, err := fmt.Fprintf(bw, "%d\t%s\n", id, s); err != nil {
			return fmt.Errorf("graph: writing ids: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("graph: writing ids: %w", err)
	}
	return nil
}

// Parse reads an edge list from r and calls emit for every edge, in file
// order, with dense ids from nodes and rels. It returns the number of columns
// of the file (2 or 3).
//
// Format: one edge per line, "src dst" or "src rel dst". Fields are separated
// by runs of spaces, tabs or commas (so "a, b" has two fields). A line whose
// first field starts with '#' is a comment (SNAP headers); blank lines are
// skipped; CRLF line ends and a leading UTF-8 byte order mark are accepted; the
// last line need not end in a newline. Every edge line must have the same
// number of fields. Ids are arbitrary strings (integers included: "007" and
// "7" are different nodes), mapped to dense ids in first-seen order: src
// before dst, node and relation ids in separate tables. With 2 columns rel is
// always 0 and rels is not touched.
//
// If a table is frozen (see IDs.Freeze), a name it does not know is an error:
// use this for validation and test files parsed with the training tables.
//
// Errors are one line, "NAME:LINE: problem", with name the name given here:
// "want 2 or 3 fields, got 4", "2 fields, but earlier lines have 3", "not a
// text edge list" (a NUL byte or invalid UTF-8), "line longer than 1 MiB",
// `unknown node id "x" (not in the training edges)`; or "NAME: no edges" for
// a file without edge lines. An error from emit stops the parse and is
// returned wrapped as "NAME:LINE: err" (errors.Is/As see it). On error the
// returned column count is 0. Parse never panics on any input.
func Parse(r io.Reader, name string, nodes, rels *IDs, emit func(src, rel, dst int64) error) (columns int, err error) {
	if r == nil || nodes == nil || rels == nil || emit == nil {
		return 0, fmt.Errorf("%s: graph.Parse: nil reader, IDs table or emit function", name)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes+2) // + CR LF
	line, edges := 0, int64(0)
	var f [3][]byte
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\uFEFF"))
		}
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
		if len(b) > MaxLineBytes {
			return 0, fmt.Errorf("%s:%d: line longer than 1 MiB", name, line)
		}
		if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
			return 0, fmt.Errorf("%s:%d: not a text edge list", name, line)
		}
		nf := splitFields(b, &f)
		if nf == 0 || f[0][0] == '#' {
			continue
		}
		if nf != 2 && nf != 3 {
			return 0, fmt.Errorf("%s:%d: want 2 or 3 fields, got %d", name, line, nf)
		}
		if columns == 0 {
			columns = nf
		} else if nf != columns {
			return 0, fmt.Errorf("%s:%d: %d fields, but earlier lines have %d", name, line, nf, columns)
		}
		srcName, dstName := f[0], f[nf-1]
		src := nodes.idBytes(srcName)
		if src < 0 {
			return 0, unknown(name, line, "node", srcName)
		}
		rel := int64(0)
		if nf == 3 {
			if rel = rels.idBytes(f[1]); rel < 0 {
				return 0, unknown(name, line, "relation", f[1])
			}
		}
		dst := nodes.idBytes(dstName)
		if dst < 0 {
			return 0, unknown(name, line, "node", dstName)
		}
		if err := emit(src, rel, dst); err != nil {
			return 0, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		edges++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return 0, fmt.Errorf("%s:%d: line longer than 1 MiB", name, line+1)
		}
		return 0, fmt.Errorf("%s:%d: read: %w", name, line+1, err)
	}
	if edges == 0 {
		return 0, fmt.Errorf("%s: no edges", name)
	}
	return columns, nil
}

func unknown(name string, line int, kind string, id []byte) error {
	return fmt.Errorf("%s:%d: unknown %s id %s (not in the training edges)", name, line, kind, quoteShort(string(id)))
}

// quoteShort quotes s, cut to at most 64 bytes (at a rune boundary) so that an
// error stays one readable line.
func quoteShort(s string) string {
	const limit = 64
	if len(s) <= limit {
		return fmt.Sprintf("%q", s)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q…", s[:cut])
}

func isSep(c byte) bool {
	return c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\v' || c == '\f'
}

// splitFields stores the first three fields of b in f and returns how many
// fields b has in all.
func splitFields(b []byte, f *[3][]byte) int {
	n := 0
	for i := 0; i < len(b); {
		for i < len(b) && isSep(b[i]) {
			i++
		}
		if i == len(b) {
			break
		}
		j := i
		for j < len(b) && !isSep(b[j]) {
			j++
		}
		if n < len(f) {
			f[n] = b[i:j]
		}
		n++
		i = j
	}
	return n
}

package graph

import (
	"bufio"
	"bytes"
	"encoding/csv"
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
// names, and Parse leaves out or refuses their edges (Format.Unseen). Use
// it after parsing the training edges and before parsing the validation
// and test edges with the same tables.
func (ids *IDs) Freeze() { ids.frozen = true }

// Frozen reports whether Freeze has been called.
func (ids *IDs) Frozen() bool { return ids.frozen }

// WriteTSV writes one "id\tname" line per id, in id order. It fails, writing
// nothing, if a name contains a tab, CR or LF (impossible for names that came
// from Parse), since the line could not be read back.
func (ids *IDs) WriteTSV(w io.Writer) error {
	for id, s := range ids.names {
		if strings.ContainsAny(s, "\t\r\n") {
			return fmt.Errorf("graph: id %d: name %s contains a tab or line break", id, QuoteShort(s))
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

// Info is what Parse found in an edge file: how it was read and what it
// held.
type Info struct {
	// Delimiter is how the fields were split: tab, comma or space.
	Delimiter string
	// Header is the header line's fields; nil when the file has none.
	Header []string
	// Fields is the number of fields of every line.
	Fields int
	// Src, Rel and Dst are the columns read (counted from 0); Rel is -1
	// when the edges have no relation.
	Src, Rel, Dst int
	// Edges is the number of edges passed to emit.
	Edges int64
	// UnseenNode and UnseenRelation count the edges left out because a
	// node, or else their relation, is not in a frozen table (Format.Unseen
	// "skip").
	UnseenNode, UnseenRelation int64
}

// HasRelations reports whether the edges carry a relation column.
func (i Info) HasRelations() bool { return i.Rel >= 0 }

// Skipped is the number of edges left out for unseen ids.
func (i Info) Skipped() int64 { return i.UnseenNode + i.UnseenRelation }

// Parse reads an edge list from r, as f says, and calls emit for every
// edge, in file order, with dense ids from nodes and rels; it returns what
// it found (Info).
//
// Format: one edge per line, "src dst" or "src rel dst", or any columns
// picked with f.Columns (the others are ignored). The delimiter (f.Delimiter
// "auto") is chosen by the first edge line: with a tab in it, fields are
// separated by single tabs, so ids may hold spaces and commas ("New
// York\tlocated in\tUSA"); else with a comma, the file is CSV (RFC 4180:
// a quoted field may hold commas, a doubled quote stands for one, "\"a,
// b\",r,c"); else fields are separated by runs of blanks. Blanks around a
// field are never part of it, and an empty src, rel or dst is an error
// (two tabs in a row make an empty field; Delimiter "space" reads such a
// file as before). Every line must have as many fields as the first. Ids
// are arbitrary strings (integers included: "007" and "7" are different
// nodes) without tabs or line breaks (refused, since ids.tsv could not
// hold them), mapped to dense ids in first-seen order: src before dst,
// node and relation ids in separate tables. Without a relation column rel
// is always 0 and rels is not touched.
//
// A line whose first field starts with '#' is a comment (SNAP headers);
// blank lines are skipped; CRLF line ends and a leading UTF-8 byte order
// mark are accepted; the last line need not end in a newline. The first
// edge line is a header (f.Header "auto") when each of its fields is a
// well-known column name (src, source, head, from, subject, rel, relation,
// predicate, type, dst, target, tail, to, object, weight, …; any case,
// "_id" and punctuation ignored) or, when f.Columns names columns, when it
// holds all those names; a header is never read as an edge, and its
// well-known names place src, rel and dst when f.Columns is not given
// ("tail,relation,head", or "from,to,weight" for a graph without
// relations).
//
// If a table is frozen (see IDs.Freeze), a name it does not know leaves
// its edge out, counted in Info (f.Unseen "skip"), or is an error
// (f.Unseen "error"): use this for validation and test files parsed with
// the training tables.
//
// Errors are one line, "NAME:LINE: problem", with name the name given
// here: "want 2 or 3 fields, got 4", "2 fields, but earlier lines have 3",
// "not a text edge list" (a NUL byte or invalid UTF-8), "line longer than
// 1 MiB", a CSV quoting error, `unknown node id "x" (not in the training
// edges; …)`; or "NAME: no edges" for a file without edge lines. An error
// from emit stops the parse and is returned wrapped as "NAME:LINE: err"
// (errors.Is/As see it). On error the returned Info is zero. Parse never
// panics on any input.
func Parse(r io.Reader, name string, f Format, nodes, rels *IDs, emit func(src, rel, dst int64) error) (Info, error) {
	if nodes == nil || rels == nil {
		return Info{}, fmt.Errorf("%s: graph.Parse: nil IDs table", name)
	}
	return parse(r, name, f, nodes, rels, nil, emit)
}

func parse(r io.Reader, name string, f Format, nodes, rels *IDs, types *Types, emit func(src, rel, dst int64) error) (Info, error) {
	if r == nil || emit == nil {
		return Info{}, fmt.Errorf("%s: graph.Parse: nil reader or emit function", name)
	}
	p, err := newParser(name, f)
	if err != nil {
		return Info{}, err
	}
	p.nodes, p.rels, p.types, p.emit = nodes, rels, types, emit
	if err := p.run(r); err != nil {
		return Info{}, err
	}
	switch {
	case p.info.Edges > 0:
		return p.info, nil
	case p.info.Skipped() > 0:
		return Info{}, fmt.Errorf("%s: none of its %d edges is left: each has a node or relation not in the training edges", name, p.info.Skipped())
	}
	return Info{}, fmt.Errorf("%s: no edges", name)
}

// Sniff reads r as Parse would up to its first edge line (or its header)
// and returns the layout Parse would read it with: the delimiter, the
// header and the columns (no counts). It is an error if there is no edge
// or header line.
func Sniff(r io.Reader, name string, f Format) (Info, error) {
	if r == nil {
		return Info{}, fmt.Errorf("%s: graph.Sniff: nil reader", name)
	}
	p, err := newParser(name, f)
	if err != nil {
		return Info{}, err
	}
	p.sniff = true
	if err := p.run(r); err != errSniffed {
		if err == nil {
			err = fmt.Errorf("%s: no edges", name)
		}
		return Info{}, err
	}
	return p.info, nil
}

var errSniffed = errors.New("layout known")

// parser is one Parse of one file.
type parser struct {
	name        string
	f           Format
	cols        colSpec
	nodes, rels *IDs
	types       *Types // typed: ParseTyped (nodes and rels unused)
	emit        func(src, rel, dst int64) error
	sniff       bool // stop once the layout is known
	started     bool // the first line, header or edge, has set the layout
	positional  bool // src [rel] dst by position: 2 or 3 fields
	info        Info
	fields      [][]byte
	buf         []byte
}

func newParser(name string, f Format) (*parser, error) {
	if err := f.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f = f.normal()
	cols, _ := parseColumns(f.Columns)
	return &parser{name: name, f: f, cols: cols, info: Info{Rel: -1}}, nil
}

var bom = []byte("\uFEFF")

const blanks = " \t\r\v\f"

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }

// run reads the lines of r up to the first edge line, which chooses the
// delimiter, then every record.
func (p *parser) run(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for line := 1; ; line++ {
		b, err := readLine(br, &long)
		if err == io.EOF {
			return nil
		}
		if errors.Is(err, ErrLineTooLong) {
			return fmt.Errorf("%s:%d: line longer than 1 MiB", p.name, line)
		} else if err != nil {
			return fmt.Errorf("%s:%d: read: %w", p.name, line, err)
		}
		if line == 1 {
			b = bytes.TrimPrefix(b, bom)
		}
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
		if len(b) > MaxLineBytes {
			return fmt.Errorf("%s:%d: line longer than 1 MiB", p.name, line)
		}
		if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
			return fmt.Errorf("%s:%d: not a text edge list", p.name, line)
		}
		if p.info.Delimiter == "" {
			if t := bytes.TrimLeft(b, blanks); len(t) == 0 || t[0] == '#' {
				continue
			}
			p.info.Delimiter = p.delimiterFor(b)
			if p.info.Delimiter == DelimComma {
				first := append(append([]byte(nil), b...), '\n')
				return p.runCSV(io.MultiReader(bytes.NewReader(first), br), line)
			}
		}
		if err := p.record(p.split(b), line); err != nil {
			return err
		}
	}
}

// ErrLineTooLong is ReadLine's error for a line over its limit.
var ErrLineTooLong = errors.New("line too long")

// readLine is ReadLine with this package's limit, MaxLineBytes.
func readLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	return ReadLine(br, long, MaxLineBytes)
}

// ReadLine returns the next line of br without its LF (valid until the
// next call), io.EOF after the last; a line over max+2 bytes is
// ErrLineTooLong, read no further. long is the caller's buffer for lines
// longer than br's. The one line rule of the text readers (edge files
// here, realrun/gnn/data's node-classification files).
func ReadLine(br *bufio.Reader, long *[]byte, max int) ([]byte, error) {
	b, err := br.ReadSlice('\n')
	switch {
	case err == nil:
		return b[:len(b)-1], nil
	case err == io.EOF && len(b) > 0:
		return b, nil
	case err != bufio.ErrBufferFull:
		return nil, err
	}
	*long = append((*long)[:0], b...)
	for {
		b, err = br.ReadSlice('\n')
		*long = append(*long, b...)
		if len(*long) > max+2 {
			return nil, ErrLineTooLong
		}
		switch err {
		case nil:
			return (*long)[:len(*long)-1], nil
		case io.EOF:
			return *long, nil
		case bufio.ErrBufferFull:
		default:
			return nil, err
		}
	}
}

// delimiterFor is the delimiter of a file whose first edge line is b.
func (p *parser) delimiterFor(b []byte) string {
	switch {
	case p.f.Delimiter != DelimAuto:
		return p.f.Delimiter
	case bytes.IndexByte(b, '\t') >= 0:
		return DelimTab
	case bytes.IndexByte(b, ',') >= 0:
		return DelimComma
	}
	return DelimSpace
}

// split cuts a line of a tab- or blank-separated file into its fields.
func (p *parser) split(b []byte) [][]byte {
	f := p.fields[:0]
	if p.info.Delimiter == DelimTab {
		for {
			i := bytes.IndexByte(b, '\t')
			if i < 0 {
				f = append(f, trimSpaces(b))
				break
			}
			f = append(f, trimSpaces(b[:i]))
			b = b[i+1:]
		}
	} else {
		for i := 0; i < len(b); {
			for i < len(b) && isBlank(b[i]) {
				i++
			}
			if i == len(b) {
				break
			}
			j := i
			for j < len(b) && !isBlank(b[j]) {
				j++
			}
			f = append(f, b[i:j])
			i = j
		}
	}
	p.fields = f
	return f
}

// trimSpaces is b without the spaces (and vertical tabs and form feeds)
// around it.
func trimSpaces(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\v' || b[0] == '\f') {
		b = b[1:]
	}
	for n := len(b); n > 0 && (b[n-1] == ' ' || b[n-1] == '\v' || b[n-1] == '\f'); n-- {
		b = b[:n-1]
	}
	return b
}

// maxRecordBytes bounds what a CSV record may span (quoted line breaks
// and the comment lines before it included), so that an unclosed quote
// cannot read a whole file into memory.
const maxRecordBytes = 16 << 20

// runCSV reads the rest of a CSV file, r starting at line first.
func (p *parser) runCSV(r io.Reader, first int) error {
	lim := &limiter{r: r, line: first}
	cr := csv.NewReader(lim)
	cr.Comment, cr.TrimLeadingSpace, cr.FieldsPerRecord, cr.ReuseRecord = '#', true, -1, true
	for {
		lim.record = 0
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		var pe *csv.ParseError
		var le *limitError
		switch {
		case errors.As(err, &le):
			return fmt.Errorf("%s:%d: %s", p.name, le.line, le.what)
		case errors.As(err, &pe):
			return fmt.Errorf("%s:%d: CSV: %v (quote a field holding quotes whole, its quotes doubled: \"5\"\" disk\")", p.name, first-1+pe.Line, pe.Err)
		case err != nil:
			return fmt.Errorf("%s:%d: read: %w", p.name, lim.line, err)
		}
		at, _ := cr.FieldPos(0)
		line := first - 1 + at
		p.buf = p.buf[:0]
		for _, s := range rec {
			if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
				return fmt.Errorf("%s:%d: not a text edge list", p.name, line)
			}
			p.buf = append(p.buf, s...)
		}
		f, off := p.fields[:0], 0
		for _, s := range rec {
			f = append(f, bytes.TrimRight(p.buf[off:off+len(s)], blanks))
			off += len(s)
		}
		p.fields = f
		if err := p.record(f, line); err != nil {
			return err
		}
	}
}

// limiter counts the lines read through it and fails a line over
// MaxLineBytes or a record over maxRecordBytes.
type limiter struct {
	r              io.Reader
	line           int // the line being read, counted in the file
	inLine, record int // bytes of the line and of the record so far
	err            error
}

type limitError struct {
	line int
	what string
}

func (e *limitError) Error() string { return e.what }

func (l *limiter) Read(b []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(b)
	for rest := b[:n]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			l.inLine += len(rest)
			break
		}
		l.inLine += i
		if l.inLine > MaxLineBytes+1 { // + CR
			break
		}
		l.line++
		l.inLine = 0
		rest = rest[i+1:]
	}
	l.record += n
	switch {
	case l.inLine > MaxLineBytes+1:
		l.err = &limitError{l.line, "line longer than 1 MiB"}
	case l.record > maxRecordBytes:
		l.err = &limitError{l.line, "a record runs on over 16 MiB (an unclosed quote?)"}
	default:
		return n, err
	}
	return 0, l.err
}

// record reads one line's fields: a blank or comment line is skipped, the
// first of the others sets the layout (and may be the header), every
// further one is an edge.
func (p *parser) record(fields [][]byte, line int) error {
	blank := true
	for _, f := range fields {
		if len(f) > 0 {
			blank = false
			break
		}
	}
	if blank || len(fields[0]) > 0 && fields[0][0] == '#' {
		return nil
	}
	if !p.started {
		p.started = true
		if err := p.layout(fields, line); err != nil {
			return err
		}
		if p.sniff {
			return errSniffed
		}
		if p.types != nil && p.info.Rel < 0 && len(p.types.Schema.Relations) != 1 {
			return fmt.Errorf("%s:%d: the edges have no relation column, so the schema must have exactly one relation (it has %d: %s)",
				p.name, line, len(p.types.Schema.Relations), p.types.relationList())
		}
		if p.info.Header != nil {
			return nil
		}
	}
	if len(fields) != p.info.Fields {
		return p.widthError(len(fields), line, false)
	}
	var names [3][]byte
	for k, c := range [3]int{p.info.Src, p.info.Rel, p.info.Dst} {
		if c < 0 {
			continue
		}
		b := fields[c]
		switch {
		case len(b) == 0:
			return fmt.Errorf("%s:%d: %s (column %d) is empty", p.name, line, roleNames[k], c+1)
		case p.info.Delimiter == DelimTab && bytes.IndexByte(b, '\r') >= 0, p.info.Delimiter == DelimComma && bytes.ContainsAny(b, "\t\r\n"):
			return fmt.Errorf("%s:%d: %s id %s holds a tab or line break, which ids.tsv could not hold", p.name, line, roleNames[k], QuoteShort(string(b)))
		}
		names[k] = b
	}
	var src, rel, dst int64
	if p.types != nil {
		var err error
		if src, rel, dst, err = p.typedIDs(names, line); err != nil {
			return err
		}
	} else {
		src = p.nodes.idBytes(names[0])
		if p.info.Rel >= 0 {
			rel = p.rels.idBytes(names[1])
		}
		dst = p.nodes.idBytes(names[2])
	}
	switch {
	case src < 0 || dst < 0:
		if p.f.Unseen == UnseenError {
			kinds := [2]string{"node", "node"}
			if p.types != nil { // "user node"
				lhs, rhs := p.types.Sides(rel)
				kinds = [2]string{p.types.Schema.Types[lhs].Name + " node", p.types.Schema.Types[rhs].Name + " node"}
			}
			if src < 0 {
				return unknown(p.name, line, kinds[0], names[0])
			}
			return unknown(p.name, line, kinds[1], names[2])
		}
		p.info.UnseenNode++
		return nil
	case rel < 0:
		if p.f.Unseen == UnseenError {
			return unknown(p.name, line, "relation", names[1])
		}
		p.info.UnseenRelation++
		return nil
	}
	if err := p.emit(src, rel, dst); err != nil {
		return fmt.Errorf("%s:%d: %w", p.name, line, err)
	}
	p.info.Edges++
	return nil
}

var roleNames = [3]string{"src", "rel", "dst"}

// layout reads the first line: whether it is a header, and which columns
// hold src, rel and dst.
func (p *parser) layout(fields [][]byte, line int) error {
	strs := make([]string, len(fields))
	for i, f := range fields {
		strs[i] = string(f)
	}
	header := p.f.Header == HeaderYes || p.f.Header == HeaderAuto && looksLikeHeader(strs, p.cols)
	in := &p.info
	in.Fields = len(fields)
	if header {
		in.Header = strs
	}
	set := func(cols []int) {
		in.Src, in.Rel, in.Dst = cols[0], -1, cols[len(cols)-1]
		if len(cols) == 3 {
			in.Rel = cols[1]
		}
	}
	switch {
	case p.cols.names != nil:
		if !header {
			return fmt.Errorf("%s:%d: {Columns} %s names columns, but the first line, %s, is not a header naming them ({Header} yes if it is one)",
				p.name, line, flagValue(p.f.Columns), QuoteShort(p.join(strs)))
		}
		var cols []int
		for _, n := range p.cols.names {
			switch i := headerIndex(strs, n); i {
			case -1:
				return fmt.Errorf("%s:%d: {Columns}: the header has no column %q (it has %s)", p.name, line, n, QuoteShort(p.join(strs)))
			case -2:
				return fmt.Errorf("%s:%d: {Columns}: the header names %q twice", p.name, line, n)
			default:
				cols = append(cols, i)
			}
		}
		set(cols)
	case p.cols.index != nil:
		for _, i := range p.cols.index {
			if i >= len(fields) {
				return fmt.Errorf("%s:%d: {Columns} %s: the line has only %d fields", p.name, line, flagValue(p.f.Columns), len(fields))
			}
		}
		set(p.cols.index)
	default:
		if header {
			if s, r, d, ok := headerLayout(strs); ok {
				in.Src, in.Rel, in.Dst = s, r, d
				return nil
			}
		}
		if n := len(fields); n != 2 && n != 3 {
			return p.widthError(n, line, true)
		}
		p.positional = true
		set([]int{0, 1, 2}[:len(fields)])
		if len(fields) == 2 {
			in.Dst = 1
		}
	}
	return nil
}

// widthError says that a line has n fields where the layout wants others.
func (p *parser) widthError(n, line int, first bool) error {
	var msg string
	if first || p.positional && n != 2 && n != 3 {
		msg = fmt.Sprintf("want 2 or 3 fields, got %d", n)
		if n > 3 && first {
			msg += " ({Columns} picks src, rel and dst from wider files)"
		}
	} else {
		msg = fmt.Sprintf("%d fields, but earlier lines have %d", n, p.info.Fields)
	}
	if p.info.Delimiter == DelimSpace && n > 1 {
		msg += "; blank-separated, so an id with spaces needs a tab-separated or CSV file"
	}
	return fmt.Errorf("%s:%d: %s", p.name, line, msg)
}

// join is a line's fields as the file has them.
func (p *parser) join(fields []string) string {
	sep := map[string]string{DelimTab: "\t", DelimComma: ","}[p.info.Delimiter]
	if sep == "" {
		sep = " "
	}
	return strings.Join(fields, sep)
}

func unknown(name string, line int, kind string, id []byte) error {
	return fmt.Errorf("%s:%d: unknown %s id %s (not in the training edges; {Unseen} skip leaves such edges out)", name, line, kind, QuoteShort(string(id)))
}

// QuoteShort quotes s for an error message, cut to at most 64 bytes (at a rune boundary) so that an
// error stays one readable line.
func QuoteShort(s string) string {
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

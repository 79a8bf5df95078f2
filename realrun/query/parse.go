package query

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/tierflow/tierflow/internal/inputerr"
)

// Unknown is the field of a query that asks for the answer: "?".
const Unknown = "?"

// Question is one line of a query file: head, relation and tail by their
// input names, one of head and tail Unknown for "rank the candidates of
// that side", neither for "score this triple". Relation is "" on a
// two-column line (a graph without relations).
type Question struct {
	Head, Relation, Tail string
	// File and Line locate the question in its file (for errors).
	File string `json:"-"`
	Line int    `json:"-"`
}

// Kind is what a question asks.
type Kind int

// The kinds of question.
const (
	// Tails ranks candidate tails of (head, relation, ?).
	Tails Kind = iota
	// Heads ranks candidate heads of (?, relation, tail).
	Heads
	// Triple scores (head, relation, tail) and ranks the tail among all
	// candidate tails.
	Triple
)

// Kind says what q asks.
func (q Question) Kind() Kind {
	switch {
	case q.Tail == Unknown:
		return Tails
	case q.Head == Unknown:
		return Heads
	}
	return Triple
}

// String is the question as written, fields separated by spaces, or by
// " | " where a field holds a blank itself (names such as "New York").
func (q Question) String() string {
	fields := []string{q.Head, q.Relation, q.Tail}
	if q.Relation == "" {
		fields = []string{q.Head, q.Tail}
	}
	sep := " "
	for _, f := range fields {
		if strings.ContainsAny(f, " \t") {
			sep = " | "
		}
	}
	return strings.Join(fields, sep)
}

// where is "FILE:LINE: " for the question's errors ("" without a file).
func (q Question) where() string {
	if q.File == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d: ", q.File, q.Line)
}

// maxLine is the longest query line read.
const maxLine = 1 << 20

// ParseQueries reads a query file: one question a line, "head relation
// tail" (three fields) or "head tail" (two, for a graph without
// relations), one of head and tail "?" to rank that side's candidates,
// neither to score the triple. Fields are split on tabs when the line has
// one, else on spaces, as the edge readers do; blank lines and lines
// whose first field starts with '#' are skipped, and a CR before the line
// end is dropped. A malformed line is an input error "FILE:LINE: problem";
// a file without a question is one too.
func ParseQueries(r io.Reader, file string) ([]Question, error) {
	br := bufio.NewReader(r)
	var out []Question
	for line := 1; ; line++ {
		b, err := readLine(br)
		if err == io.EOF && b == nil {
			break
		}
		if err != nil && err != io.EOF {
			if err == errLong {
				return nil, inputerr.Errorf("%s:%d: line longer than %d bytes", file, line, maxLine)
			}
			return nil, fmt.Errorf("%s:%d: %w", file, line, err)
		}
		q, ok, perr := parseLine(b)
		if perr != nil {
			return nil, inputerr.Errorf("%s:%d: %s", file, line, perr)
		}
		if ok {
			q.File, q.Line = file, line
			out = append(out, q)
		}
		if err == io.EOF {
			break
		}
	}
	if len(out) == 0 {
		return nil, inputerr.Errorf("%s: no query (want lines head<TAB>relation<TAB>? , ?<TAB>relation<TAB>tail or head<TAB>relation<TAB>tail)", file)
	}
	return out, nil
}

var errLong = fmt.Errorf("line too long")

// readLine reads one line without its line end (nil, io.EOF at the end;
// the last line may lack its newline).
func readLine(br *bufio.Reader) ([]byte, error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > maxLine {
			return nil, errLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(b) == 0 {
			return nil, io.EOF
		}
		b = bytes.TrimSuffix(b, []byte("\n"))
		b = bytes.TrimSuffix(b, []byte("\r"))
		if b == nil {
			b = []byte{}
		}
		return b, err
	}
}

// parseLine reads one line's question; ok is false for a blank or
// comment line.
func parseLine(b []byte) (q Question, ok bool, err error) {
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return q, false, fmt.Errorf("not UTF-8 text")
	}
	s := string(b)
	if strings.TrimSpace(s) == "" {
		return q, false, nil
	}
	var fields []string
	if strings.Contains(s, "\t") {
		fields = strings.Split(s, "\t")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
	} else {
		fields = strings.Fields(s)
	}
	if strings.HasPrefix(fields[0], "#") {
		return q, false, nil
	}
	for i, f := range fields {
		if f == "" {
			return q, false, fmt.Errorf("field %d is empty", i+1)
		}
	}
	switch len(fields) {
	case 2:
		q.Head, q.Tail = fields[0], fields[1]
	case 3:
		q.Head, q.Relation, q.Tail = fields[0], fields[1], fields[2]
		if q.Relation == Unknown {
			return q, false, fmt.Errorf("the relation is %q: ask for a head or a tail, not a relation", Unknown)
		}
	default:
		return q, false, fmt.Errorf("%d fields %s: want head relation tail (or head tail without relations), one of head and tail %q to rank it",
			len(fields), quote(s), Unknown)
	}
	if q.Head == Unknown && q.Tail == Unknown {
		return q, false, fmt.Errorf("both head and tail are %q: name one of them", Unknown)
	}
	return q, true, nil
}

// quote is s quoted, cut to 60 bytes.
func quote(s string) string {
	if len(s) > 60 {
		cut := 60
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return fmt.Sprintf("%q", s)
}

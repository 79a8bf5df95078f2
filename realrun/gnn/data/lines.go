package data

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/tierflow/tierflow/realrun/graph"
)

// MaxLineBytes is the longest line the text readers of this package
// accept (a feature row of many values is one line).
const MaxLineBytes = 64 << 20

// lineReader yields the lines of a text file without their line ends (LF
// or CRLF), a leading UTF-8 byte order mark removed, refusing NUL bytes,
// invalid UTF-8 and lines over MaxLineBytes with "NAME:LINE: problem".
type lineReader struct {
	name string
	br   *bufio.Reader
	line int
	long []byte
	max  int
}

func newLineReader(r io.Reader, name string) *lineReader {
	return &lineReader{name: name, br: bufio.NewReaderSize(r, 64<<10), max: MaxLineBytes}
}

var errLong = errors.New("line too long")

// next returns the next line (valid until the next call) and its number,
// or io.EOF after the last.
func (lr *lineReader) next() ([]byte, error) {
	b, err := lr.read()
	if err == io.EOF {
		return nil, io.EOF
	}
	lr.line++
	if errors.Is(err, errLong) {
		return nil, lr.errorf("line longer than %d MiB", lr.max>>20)
	} else if err != nil {
		return nil, lr.errorf("read: %w", err)
	}
	if lr.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\uFEFF"))
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return nil, lr.errorf("not a text file (a NUL byte or invalid UTF-8)")
	}
	return b, nil
}

func (lr *lineReader) read() ([]byte, error) {
	b, err := graph.ReadLine(lr.br, &lr.long, lr.max)
	if errors.Is(err, graph.ErrLineTooLong) {
		return nil, errLong
	}
	return b, err
}

// errorf is an error "NAME:LINE: …" at the current line.
func (lr *lineReader) errorf(format string, a ...any) error {
	return fmt.Errorf("%s:%d: %s", lr.name, lr.line, fmt.Errorf(format, a...))
}

// trimName is s without the blanks around it, as graph.Parse trims the
// fields of a tab-separated edge file.
func trimName(s string) string { return strings.Trim(s, " \t\v\f\r") }

// quote is s quoted for an error message, cut to 64 bytes.
var quote = graph.QuoteShort

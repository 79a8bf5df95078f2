package data

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// npyHeader is the header of an .npy file (NumPy's format, versions 1–3).
type npyHeader struct {
	descr   string
	fortran bool
	shape   []int64
	offset  int64 // where the data start
}

const npyMagic = "\x93NUMPY"

// maxNPYHeader bounds the header's length (NumPy writes a few hundred bytes).
const maxNPYHeader = 1 << 16

// readNPYHeader reads an .npy header from r, leaving r at the data. Its
// errors name no file (the caller adds it).
func readNPYHeader(r io.Reader) (npyHeader, error) {
	var h npyHeader
	var pre [12]byte
	if _, err := io.ReadFull(r, pre[:8]); err != nil || string(pre[:6]) != npyMagic {
		return h, errors.New("not an .npy file (no \\x93NUMPY magic)")
	}
	var n int64
	switch pre[6] {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return h, errors.New("truncated .npy header")
		}
		n, h.offset = int64(binary.LittleEndian.Uint16(pre[8:10])), 10
	case 2, 3:
		if _, err := io.ReadFull(r, pre[8:12]); err != nil {
			return h, errors.New("truncated .npy header")
		}
		n, h.offset = int64(binary.LittleEndian.Uint32(pre[8:12])), 12
	default:
		return h, fmt.Errorf(".npy format version %d.%d (want 1, 2 or 3)", pre[6], pre[7])
	}
	if n > maxNPYHeader {
		return h, fmt.Errorf(".npy header of %d bytes (at most %d)", n, maxNPYHeader)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return h, errors.New("truncated .npy header")
	}
	h.offset += n
	var err error
	h.descr, h.fortran, h.shape, err = parseNPYDict(string(hdr))
	if err != nil {
		return h, fmt.Errorf(".npy header: %w", err)
	}
	return h, nil
}

// parseNPYDict parses the Python dict literal of an .npy header:
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } followed by
// blank padding. Every key must be present exactly once, and no other.
func parseNPYDict(s string) (descr string, fortran bool, shape []int64, err error) {
	p := &dictParser{s: s}
	p.skip()
	if !p.eat('{') {
		return "", false, nil, errors.New("want a dict ('{')")
	}
	seen := map[string]bool{}
	for {
		p.skip()
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return "", false, nil, fmt.Errorf("key: %w", err)
		}
		if seen[key] {
			return "", false, nil, fmt.Errorf("key %s twice", quote(key))
		}
		seen[key] = true
		p.skip()
		if !p.eat(':') {
			return "", false, nil, fmt.Errorf("no ':' after key %s", quote(key))
		}
		p.skip()
		switch key {
		case "descr":
			if descr, err = p.str(); err != nil {
				return "", false, nil, fmt.Errorf("descr: %w", err)
			}
		case "fortran_order":
			switch {
			case strings.HasPrefix(p.s[p.i:], "True"):
				fortran, p.i = true, p.i+4
			case strings.HasPrefix(p.s[p.i:], "False"):
				fortran, p.i = false, p.i+5
			default:
				return "", false, nil, errors.New("fortran_order is neither True nor False")
			}
		case "shape":
			if shape, err = p.tuple(); err != nil {
				return "", false, nil, fmt.Errorf("shape: %w", err)
			}
		default:
			return "", false, nil, fmt.Errorf("unknown key %s", quote(key))
		}
		p.skip()
		if p.eat(',') {
			continue
		}
		p.skip()
		if !p.eat('}') {
			return "", false, nil, errors.New("want ',' or '}' after a value")
		}
		break
	}
	if strings.TrimRight(p.s[p.i:], " \t\r\n\x00") != "" {
		return "", false, nil, errors.New("text after the dict")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return "", false, nil, fmt.Errorf("no %s", k)
		}
	}
	return descr, fortran, shape, nil
}

type dictParser struct {
	s string
	i int
}

func (p *dictParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *dictParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a quoted string without escapes.
func (p *dictParser) str() (string, error) {
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", errors.New("want a quoted string")
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.IndexByte(v, '\\') >= 0 {
		return "", errors.New("escapes in a string")
	}
	p.i += end + 2
	return v, nil
}

// tuple reads a tuple of non-negative integers: (), (5,), (3, 4).
func (p *dictParser) tuple() ([]int64, error) {
	if !p.eat('(') {
		return nil, errors.New("want a tuple")
	}
	out := []int64{}
	for {
		p.skip()
		if p.eat(')') {
			return out, nil
		}
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j == p.i {
			return nil, errors.New("want a non-negative integer")
		}
		v, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s is out of range", p.s[p.i:j])
		}
		p.i = j
		p.eat('L') // Python 2 long
		out = append(out, v)
		if len(out) > 32 {
			return nil, errors.New("more than 32 dimensions")
		}
		p.skip()
		if p.eat(',') {
			continue
		}
		p.skip()
		if !p.eat(')') {
			return nil, errors.New("want ',' or ')' in a tuple")
		}
		return out, nil
	}
}

// matrixShape checks that h describes a 2-D little-endian float32 C-order
// array and returns its shape.
func (h npyHeader) matrixShape() (rows, cols int64, err error) {
	switch {
	case h.descr != "<f4" && h.descr != "=f4":
		return 0, 0, fmt.Errorf("an .npy array of %s, want little-endian float32 ('<f4')", quote(h.descr))
	case h.fortran:
		return 0, 0, errors.New("a Fortran-order .npy array, want C order")
	case len(h.shape) != 2:
		return 0, 0, fmt.Errorf("a %d-D .npy array, want 2-D (nodes × features)", len(h.shape))
	}
	rows, cols = h.shape[0], h.shape[1]
	if rows > math.MaxInt32 || cols > 1<<24 || (cols > 0 && rows > (1<<40)/cols) {
		return 0, 0, fmt.Errorf("an .npy array of shape (%d, %d): too large", rows, cols)
	}
	return rows, cols, nil
}

// readNPYMatrix reads the data of a rows×cols float32 array from r into a
// new slice. The caller has checked the file's size, so a short read is
// an error, not a huge allocation.
func readNPYMatrix(r io.Reader, rows, cols int64) ([]float32, error) {
	x := make([]float32, rows*cols)
	br := bufio.NewReaderSize(r, 1<<16)
	var buf [4096]byte
	for i := 0; i < len(x); {
		n := min(len(buf)/4, len(x)-i)
		if _, err := io.ReadFull(br, buf[:4*n]); err != nil {
			return nil, fmt.Errorf("data ends after %d of %d values", i, len(x))
		}
		for k := 0; k < n; k++ {
			x[i+k] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*k:]))
		}
		i += n
	}
	return x, nil
}

// writeNPY writes a rows×cols float32 matrix as a version-1 .npy file.
func writeNPY(w io.Writer, x []float32, rows, cols int) error {
	dict := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols)
	// The header (magic, version, length, dict, padding, '\n') is a
	// multiple of 64 bytes, as NumPy writes it.
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	hdr := dict + strings.Repeat(" ", pad) + "\n"
	if len(hdr) > math.MaxUint16 {
		return errors.New(".npy header too long")
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(npyMagic)
	bw.Write([]byte{1, 0, byte(len(hdr)), byte(len(hdr) >> 8)})
	bw.WriteString(hdr)
	buf := make([]byte, 0, 1<<16)
	for _, v := range x[:rows*cols] {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		if len(buf) == cap(buf) {
			bw.Write(buf)
			buf = buf[:0]
		}
	}
	bw.Write(buf)
	return bw.Flush()
}

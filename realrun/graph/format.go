package graph

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/tierflow/tierflow/internal/inputerr"
)

// Format says how Parse reads an edge file; the zero value reads every
// file as its first edge line suggests (see Parse). Its errors name its
// fields ({Columns}).
type Format struct {
	// Delimiter is "auto" (or ""), "tab", "comma" or "space".
	Delimiter string
	// Header is "auto" (or ""), "yes" or "no": whether each file's first
	// edge line names the columns instead of holding an edge.
	Header string
	// Columns picks the columns holding src, rel and dst ("src,dst" for
	// a graph without relations): header names, or column numbers
	// counted from 1 as cut -f counts them ("1,3,2"). "" takes src dst
	// or src rel dst by position, or by the header's names when it has
	// well-known ones (head, relation, tail, …).
	Columns string
	// Unseen is what becomes of a validation or test edge whose node or
	// relation is not in the training edges (a frozen IDs table):
	// "skip" (or "") leaves it out and counts it, "error" refuses the file.
	Unseen string
}

// Delimiters, headers and unseen-edge modes Format accepts.
const (
	DelimAuto, DelimTab, DelimComma, DelimSpace = "auto", "tab", "comma", "space"
	HeaderAuto, HeaderYes, HeaderNo             = "auto", "yes", "no"
	UnseenSkip, UnseenError                     = "skip", "error"
)

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// normal is f with every default spelt out.
func (f Format) normal() Format {
	f.Delimiter = orDefault(f.Delimiter, DelimAuto)
	f.Header = orDefault(f.Header, HeaderAuto)
	f.Unseen = orDefault(f.Unseen, UnseenSkip)
	f.Columns = strings.TrimSpace(f.Columns)
	return f
}

// Check reports the first bad value of f as one line naming its field.
func (f Format) Check() error {
	f = f.normal()
	for _, c := range []struct {
		field, v string
		ok       []string
	}{
		{"Delimiter", f.Delimiter, []string{DelimAuto, DelimTab, DelimComma, DelimSpace}},
		{"Header", f.Header, []string{HeaderAuto, HeaderYes, HeaderNo}},
		{"Unseen", f.Unseen, []string{UnseenSkip, UnseenError}},
	} {
		if !contains(c.ok, c.v) {
			return fmt.Errorf("%s %q: want %s", inputerr.Field(c.field), c.v, orList(c.ok))
		}
	}
	cols, err := parseColumns(f.Columns)
	if err != nil {
		return err
	}
	if cols.names != nil && f.Header == HeaderNo {
		return fmt.Errorf("{Columns} %s names header columns, but {Header} no says the files have no header line (give column numbers, counted from 1)", flagValue(f.Columns))
	}
	return nil
}

// Flags are f's values by key, every one spelt out ("--delimiter":
// "auto", …; "--columns": "" when not given): what a work directory
// built with f records. A value's key is its field's name in lower case
// after "--" (formatKey), as a work directory has always recorded it.
func (f Format) Flags() map[string]string {
	f = f.normal()
	return map[string]string{formatKey("Delimiter"): f.Delimiter, formatKey("Header"): f.Header, formatKey("Columns"): f.Columns, formatKey("Unseen"): f.Unseen}
}

// formatKey is the key of a Format field's value in Flags.
func formatKey(field string) string { return "--" + strings.ToLower(field) }

// NonDefault are the values of f that differ from the zero Format's, by
// key (Flags).
func (f Format) NonDefault() map[string]string {
	out := f.Flags()
	for k, v := range (Format{}).Flags() {
		if out[k] == v {
			delete(out, k)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func orList(list []string) string {
	return strings.Join(list[:len(list)-1], ", ") + " or " + list[len(list)-1]
}

// flagValue is a flag's value as an error shows it: as given, or quoted
// (and cut) when it holds anything but printable characters.
func flagValue(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) || len(s) > 64 {
			return QuoteShort(s)
		}
	}
	return s
}

// colSpec is a parsed Format.Columns: src, [rel,] dst as header names or
// as 0-based column indices; both nil when none was given.
type colSpec struct {
	names []string
	index []int
}

func (c colSpec) given() bool { return c.names != nil || c.index != nil }

// parseColumns parses Format.Columns: two or three entries, all column numbers
// (counted from 1) or all header names.
func parseColumns(s string) (colSpec, error) {
	var c colSpec
	if s == "" {
		return c, nil
	}
	q := flagValue(s)
	parts := strings.Split(s, ",")
	if len(parts) != 2 && len(parts) != 3 {
		return c, fmt.Errorf("{Columns} %s: want src,dst or src,rel,dst (%d entries given)", q, len(parts))
	}
	numbers := true
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
		if parts[i] == "" {
			return c, fmt.Errorf("{Columns} %s: entry %d is empty", q, i+1)
		}
		if _, err := strconv.Atoi(parts[i]); err != nil {
			numbers = false
		}
	}
	seen := map[string]bool{}
	for _, p := range parts {
		key := strings.ToLower(p)
		if seen[key] {
			return c, fmt.Errorf("{Columns} %s: names column %s twice", q, flagValue(p))
		}
		seen[key] = true
	}
	if !numbers {
		c.names = parts
		return c, nil
	}
	for _, p := range parts {
		n, _ := strconv.Atoi(p)
		if n < 1 {
			return c, fmt.Errorf("{Columns} %s: columns are numbered from 1, as cut -f numbers them", q)
		}
		c.index = append(c.index, n-1)
	}
	return c, nil
}

// Column roles a header name may have.
const (
	roleNone = iota
	roleSrc
	roleRel
	roleDst
)

// headerNames are the well-known column names (normalised: lower case,
// letters and digits only, a trailing "id" dropped) and their roles: the
// names of PyTorch-BigGraph's, DGL-KE's, PyKEEN's, Neo4j's and SNAP's
// files and of RDF triples. A first line made only of such names is a
// header (Format.Header "auto").
var headerNames = map[string]int{
	"src": roleSrc, "source": roleSrc, "sourcenode": roleSrc, "srcnode": roleSrc, "head": roleSrc, "from": roleSrc,
	"fromnode": roleSrc, "subject": roleSrc, "subj": roleSrc, "start": roleSrc, "node1": roleSrc, "lhs": roleSrc,
	"rel": roleRel, "relation": roleRel, "relationship": roleRel, "reltype": roleRel, "relationtype": roleRel,
	"predicate": roleRel, "pred": roleRel, "type": roleRel, "edgetype": roleRel, "label": roleRel, "edgelabel": roleRel,
	"dst": roleDst, "dest": roleDst, "destination": roleDst, "target": roleDst, "targetnode": roleDst, "dstnode": roleDst,
	"tail": roleDst, "to": roleDst, "tonode": roleDst, "object": roleDst, "obj": roleDst, "end": roleDst, "node2": roleDst, "rhs": roleDst,
	// Columns that are not src, rel or dst but are common in edge files.
	"id": roleNone, "edge": roleNone, "weight": roleNone, "time": roleNone, "timestamp": roleNone, "date": roleNone,
	"sign": roleNone, "score": roleNone, "confidence": roleNone, "count": roleNone, "split": roleNone,
}

// headerRole is the role of a header field and whether the name is a
// well-known one.
func headerRole(field string) (int, bool) {
	var b strings.Builder
	for _, r := range strings.ToLower(field) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	s := b.String()
	if len(s) > 2 && strings.HasSuffix(s, "id") {
		s = strings.TrimSuffix(s, "id")
	}
	role, ok := headerNames[s]
	return role, ok
}

// looksLikeHeader reports whether a first line with these fields is a
// header: every field a well-known column name, or, when Columns names
// columns, every one of those names among the fields.
func looksLikeHeader(fields []string, cols colSpec) bool {
	if cols.names != nil {
		for _, n := range cols.names {
			if headerIndex(fields, n) < 0 {
				return false
			}
		}
		return true
	}
	if len(fields) < 2 {
		return false
	}
	for _, f := range fields {
		if _, ok := headerRole(f); !ok {
			return false
		}
	}
	return true
}

// headerIndex is the index of the header field named name (any case), -1
// when there is none and -2 when there are several.
func headerIndex(header []string, name string) int {
	at := -1
	for i, h := range header {
		if strings.EqualFold(strings.TrimSpace(h), name) {
			if at >= 0 {
				return -2
			}
			at = i
		}
	}
	return at
}

// headerLayout is the src, rel and dst columns a header's well-known names
// give (rel -1: none), if they give exactly one src and one dst column and
// at most one relation column.
func headerLayout(header []string) (src, rel, dst int, ok bool) {
	src, rel, dst = -1, -1, -1
	for i, h := range header {
		role, _ := headerRole(h)
		p := map[int]*int{roleSrc: &src, roleRel: &rel, roleDst: &dst}[role]
		if p == nil {
			continue
		}
		if *p >= 0 {
			return 0, 0, 0, false
		}
		*p = i
	}
	return src, rel, dst, src >= 0 && dst >= 0
}

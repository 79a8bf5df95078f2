package inputerr

import (
	"regexp"
	"strings"
	"unicode"
)

// A library names the field of its specification that a message is about
// as {Name} — a Go identifier starting with a capital, dotted for a nested
// field ({Disk.Read}) — and never by a command-line flag: the command that
// set the field renders the message with its flag's name (Render), and a
// Go caller reads the field.
var fieldRE = regexp.MustCompile(`\{([A-Z][A-Za-z0-9]*(?:\.[A-Z][A-Za-z0-9]*)*)\}`)

// Field returns the marker that names field in a message: {field}.
func Field(field string) string { return "{" + field + "}" }

// Render replaces every field marker in s that name knows with its name
// (a command's flag); a marker name does not know stays as it is.
func Render(s string, name func(field string) (string, bool)) string {
	if !strings.Contains(s, "{") {
		return s
	}
	return fieldRE.ReplaceAllStringFunc(s, func(m string) string {
		if n, ok := name(m[1 : len(m)-1]); ok {
			return n
		}
		return m
	})
}

// Fields returns the fields s names, in order, repeats included.
func Fields(s string) []string {
	var out []string
	for _, m := range fieldRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// Kebab writes a field's name in a flag's words: lower case, words joined
// by "-", an acronym one word (MicroBatches: micro-batches, P: p, LR: lr,
// GPUMemory: gpu-memory, TF32: tf32). The commands' flags and a work
// directory's setting keys follow it.
func Kebab(field string) string {
	var b strings.Builder
	rs := []rune(field)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

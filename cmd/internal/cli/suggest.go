package cli

import (
	"flag"
	"fmt"
	"sort"
	"strings"
)

// Suggest returns the name among names that the mistyped name most
// likely meant, or "" when none is close: the only one it is a prefix
// of, else the nearest by edit distance (insertions, deletions,
// substitutions and swaps of two neighbours) when that is at most 1 for
// names of 3 or 4 letters and 2 for longer ones (none for shorter). Ties go to the first
// name in sorted order. The flag names and --config keys of every command
// are checked with it.
func Suggest(name string, names []string) string {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	var prefixed []string
	for _, n := range sorted {
		if n != name && strings.HasPrefix(n, name) {
			prefixed = append(prefixed, n)
		}
	}
	if len(prefixed) == 1 && len(name) >= 2 {
		return prefixed[0]
	}
	limit := 2
	switch n := len([]rune(name)); {
	case n <= 2:
		limit = 0 // one or two letters: any other name is as near
	case n <= 4:
		limit = 1
	}
	best, bestD := "", limit+1
	for _, n := range sorted {
		if d := editDistance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of two
// neighbouring letters each count 1.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// flagNames are the names of fs's flags.
func flagNames(fs *flag.FlagSet) []string {
	var out []string
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f.Name) })
	return out
}

// didYouMean is "; did you mean --NAME?" for the flag of fs closest to
// the unknown name, or alt when none is close.
func didYouMean(fs *flag.FlagSet, name, alt string) string {
	if s := Suggest(name, flagNames(fs)); s != "" {
		return fmt.Sprintf("; did you mean --%s?", s)
	}
	return alt
}

// unknownFlag turns the flag package's "flag provided but not defined:
// -name" into one line naming the flag with two dashes and the flag
// meant; other errors are returned as they are, with two dashes.
func unknownFlag(fs *flag.FlagSet, err error) *UsageError {
	const undefined = "flag provided but not defined: "
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, undefined); ok {
		name := strings.TrimLeft(rest, "-")
		return &UsageError{Msg: "unknown flag --" + name + didYouMean(fs, name, fmt.Sprintf(" (%s --help lists them)", fs.Name()))}
	}
	return &UsageError{Msg: strings.Replace(msg, "flag -", "flag --", 1)}
}

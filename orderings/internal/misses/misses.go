// Package misses reads testdata/tierflow_prefetch_misses.txt, orderings'
// pinned list of the (p, c) where tierflow misses PrefetchTarget.
package misses

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Path is the list's path from the orderings directory.
const Path = "testdata/tierflow_prefetch_misses.txt"

// Miss is one line of the list: "p c swaps prefetchable share".
type Miss struct {
	P, C int
	Line string
}

// Read returns the lines of the list at path, in order, without its
// comments (lines starting with #) and blank lines.
func Read(path string) ([]Miss, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Miss
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := Miss{Line: line}
		if _, err := fmt.Sscan(line, &m.P, &m.C); err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, line, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

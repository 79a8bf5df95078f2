package graph

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ReadNames reads an id table as IDs.WriteTSV writes it (a work
// directory's ids.tsv or relations.tsv: "id<TAB>name" lines, or a typed
// directory's "id<TAB>type<TAB>name", Types.WriteTSV) into names by id, n
// of them; an id the table lacks (or a missing table) is named
// by its decimal id.
func ReadNames(path string, n int64) ([]string, error) {
	names := make([]string, n)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		for i := range names {
			names[i] = strconv.Itoa(i)
		}
		return names, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		id, name, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		if k := strings.LastIndexByte(name, '\t'); k >= 0 {
			name = name[k+1:] // a typed table's "id\ttype\tname"
		}
		if i, err := strconv.ParseInt(id, 10, 64); err == nil && i >= 0 && i < n {
			names[i] = name
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, s := range names {
		if s == "" {
			names[i] = strconv.Itoa(i)
		}
	}
	return names, nil
}

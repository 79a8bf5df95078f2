package query

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/store"
)

// The work directory's ids.tsv ("id<TAB>name", one line per node in input
// id order) is read front to back, once to find the named nodes and once
// to name the answers, rather than held: a graph's names can outweigh the
// memory budget. Without ids.tsv (a generated graph) nodes are named by
// their input id.

// lookupNodes sets want[name] to the input id of every name in it that
// ids.tsv holds (the others keep their value).
func lookupNodes(st *store.Store, want map[string]int64) error {
	return eachName(st, func(id int64, name string) {
		if _, ok := want[name]; ok {
			want[name] = id
		}
	}, func() {
		for name := range want {
			if id, err := strconv.ParseInt(name, 10, 64); err == nil && id >= 0 && id < st.M.Nodes {
				want[name] = id
			}
		}
	})
}

// nameNodes sets ids[id] to the name of every input id in it.
func nameNodes(st *store.Store, ids map[int64]string) error {
	if len(ids) == 0 {
		return nil
	}
	return eachName(st, func(id int64, name string) {
		if _, ok := ids[id]; ok {
			ids[id] = name
		}
	}, func() {
		for id := range ids {
			ids[id] = strconv.FormatInt(id, 10)
		}
	})
}

// eachName calls fn with every line of ids.tsv, or calls none when the
// work directory has no ids.tsv.
func eachName(st *store.Store, fn func(id int64, name string), none func()) error {
	path := idsPath(st)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		none()
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(bufio.NewReaderSize(f, 1<<16))
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for line := 1; sc.Scan(); line++ {
		id, name, ok := strings.Cut(sc.Text(), "\t")
		n, err := strconv.ParseInt(id, 10, 64)
		if !ok || err != nil || n < 0 || n >= st.M.Nodes {
			return fmt.Errorf("%s:%d: not \"id<TAB>name\" of one of %d nodes", path, line, st.M.Nodes)
		}
		fn(n, name)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// relationNames are the relations' names by id (relations.tsv; numbers
// without it).
func relationNames(st *store.Store) ([]string, error) {
	return graph.ReadNames(relationsPath(st), int64(st.M.Relations))
}

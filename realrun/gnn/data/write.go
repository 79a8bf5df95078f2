package data

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/realrun/graph"
)

// The files of a graph directory (WriteFiles, DirFiles).
const (
	EdgesFile    = "edges.tsv"
	NodesFile    = "nodes.txt"
	FeaturesFile = "features.npy"
	LabelsFile   = "labels.tsv"
	TrainFile    = "train.txt"
	ValidFile    = "valid.txt"
	TestFile     = "test.txt"
)

// DirFiles returns the Files of a directory WriteFiles wrote (the edge
// file read as tab-separated without a header line).
func DirFiles(dir string) Files {
	p := func(name string) string { return filepath.Join(dir, name) }
	return Files{
		Edges:        p(EdgesFile),
		Format:       graph.Format{Delimiter: graph.DelimTab, Header: graph.HeaderNo},
		Features:     p(FeaturesFile),
		FeatureNames: p(NodesFile),
		Labels:       p(LabelsFile),
		TrainNodes:   p(TrainFile),
		ValidNodes:   p(ValidFile),
		TestNodes:    p(TestFile),
	}
}

// WriteFiles writes g into dir (created if missing) as Load reads it
// (DirFiles): edges.tsv (src<TAB>dst names: each edge once, src < dst, when
// g's neighbour lists are symmetric; else one line per in-edge, to be read
// with Files.Directed), nodes.txt (the names in id order, the rows of
// features.npy), features.npy (float32 N×F, '<f4', C order), labels.tsv
// (node<TAB>label for the labelled nodes), train.txt, valid.txt and
// test.txt (one name a line). Each file is written atomically. Load of
// DirFiles(dir) returns a Graph equal to g when g's Classes are sorted and
// each labels some node, as Load and Generate make them.
func WriteFiles(g *Graph, dir string) error {
	if err := check(g); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("data: %w", err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	sym := symmetric(g)
	err := atomicfile.Write(p(EdgesFile), func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		for v := int32(0); int(v) < g.N(); v++ {
			for _, u := range g.Neighbors(v) {
				if sym && u < v {
					continue
				}
				if sym {
					bw.WriteString(g.Names[v])
					bw.WriteByte('\t')
					bw.WriteString(g.Names[u])
				} else { // u → v
					bw.WriteString(g.Names[u])
					bw.WriteByte('\t')
					bw.WriteString(g.Names[v])
				}
				bw.WriteByte('\n')
			}
		}
		return bw.Flush()
	})
	if err != nil {
		return err
	}
	if err := writeLines(p(NodesFile), g.Names); err != nil {
		return err
	}
	if err := atomicfile.Write(p(FeaturesFile), func(w io.Writer) error { return writeNPY(w, g.X, g.N(), g.F) }); err != nil {
		return err
	}
	var labels []string
	for v, c := range g.Y {
		if c >= 0 {
			labels = append(labels, g.Names[v]+"\t"+g.Classes[c])
		}
	}
	if err := writeLines(p(LabelsFile), labels); err != nil {
		return err
	}
	for _, s := range []struct {
		file  string
		nodes []int32
	}{{TrainFile, g.Train}, {ValidFile, g.Valid}, {TestFile, g.Test}} {
		names := make([]string, len(s.nodes))
		for i, v := range s.nodes {
			names[i] = g.Names[v]
		}
		if err := writeLines(p(s.file), names); err != nil {
			return err
		}
	}
	return nil
}

func writeLines(path string, lines []string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		for _, s := range lines {
			bw.WriteString(s)
			bw.WriteByte('\n')
		}
		return bw.Flush()
	})
}

// check reports the first inconsistency of g that would make its files
// unreadable or different.
func check(g *Graph) error {
	n := g.N()
	switch {
	case n == 0:
		return fmt.Errorf("data: a graph without nodes")
	case len(g.Ptr) != n+1 || g.Ptr[0] != 0 || g.Ptr[n] != int64(len(g.Nbr)):
		return fmt.Errorf("data: neighbour pointers do not fit %d nodes and %d neighbours", n, len(g.Nbr))
	case g.F <= 0 || len(g.X) != n*g.F:
		return fmt.Errorf("data: %d feature values for %d nodes × %d features", len(g.X), n, g.F)
	case len(g.Y) != n:
		return fmt.Errorf("data: %d labels for %d nodes", len(g.Y), n)
	}
	seen := make(map[string]bool, n)
	for _, s := range g.Names {
		switch {
		case s == "" || trimName(s) != s:
			return fmt.Errorf("data: node name %s is empty or has blanks around it", quote(s))
		case strings.ContainsAny(s, "\t\n\r"):
			return fmt.Errorf("data: node name %s holds a tab or line break", quote(s))
		case s[0] == '#':
			return fmt.Errorf("data: node name %s starts with '#' (an edge file's comment)", quote(s))
		case seen[s]:
			return fmt.Errorf("data: node name %s twice", quote(s))
		}
		seen[s] = true
	}
	for v := 0; v < n; v++ {
		if g.Ptr[v] > g.Ptr[v+1] {
			return fmt.Errorf("data: neighbour pointers decrease at node %d", v)
		}
	}
	for _, u := range g.Nbr {
		if u < 0 || int(u) >= n {
			return fmt.Errorf("data: neighbour id %d out of range", u)
		}
	}
	for _, c := range g.Classes {
		if c == "" || trimName(c) != c || strings.ContainsAny(c, "\t\n\r") {
			return fmt.Errorf("data: class name %s is empty, has blanks around it or holds a tab or line break", quote(c))
		}
	}
	for _, c := range g.Y {
		if c < -1 || int(c) >= len(g.Classes) {
			return fmt.Errorf("data: class id %d out of range", c)
		}
	}
	for _, s := range [][]int32{g.Train, g.Valid, g.Test} {
		for _, v := range s {
			if v < 0 || int(v) >= n {
				return fmt.Errorf("data: split node id %d out of range", v)
			}
		}
	}
	return nil
}

// symmetric reports whether every neighbour list entry has its reverse.
func symmetric(g *Graph) bool {
	for v := int32(0); int(v) < g.N(); v++ {
		for _, u := range g.Neighbors(v) {
			if _, ok := slices.BinarySearch(g.Neighbors(u), v); !ok {
				return false
			}
		}
	}
	return true
}

package data

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/realrun/graph"
)

// Files names a node-classification graph's input files.
type Files struct {
	// Edges is the edge file (src dst, or src rel dst with the relation
	// ignored), read as Format says, like realrun's --edges.
	Edges  string
	Format graph.Format
	// Directed keeps messages along the edges' direction only (dst reads
	// src); by default they flow both ways.
	Directed bool
	// Features is node<TAB>v1 v2 … (.tsv) or a float32 N×F .npy whose
	// rows follow FeatureNames (one node name a line).
	Features, FeatureNames string
	// Labels is node<TAB>label, labels being arbitrary strings.
	Labels string
	// TrainNodes, ValidNodes, TestNodes list one node name a line.
	TrainNodes, ValidNodes, TestNodes string
	// Skip counts and leaves out bad records (see Stats.Skipped) instead
	// of refusing the input.
	Skip bool
}

// Stats is what Load read.
type Stats struct {
	Nodes, Features, Classes int
	// Edges are the input's edge lines kept (before symmetrising).
	Edges              int64
	Train, Valid, Test int
	// Skipped counts the records left out with Skip, by reason (the
	// Skip… constants).
	Skipped map[string]int64
}

// Reasons for leaving a record out with Files.Skip: the keys of
// Stats.Skipped.
const (
	// SkipNoFeatures counts the nodes of the edge file without a feature
	// row, left out with their edges.
	SkipNoFeatures = "node of the edges without features"
	// SkipEdgeLeftOut counts the edges left out because a node of theirs
	// was (no features, or non-finite ones).
	SkipEdgeLeftOut = "edge of a left-out node"
	// SkipDupFeatures counts feature rows of a node that already had one
	// (the first is kept).
	SkipDupFeatures = "duplicate feature row"
	// SkipNonFinite counts the nodes left out for a NaN or infinite
	// feature.
	SkipNonFinite = "node with NaN or infinite features"
	// SkipDupLabel counts label lines of a node already labelled (the
	// first is kept).
	SkipDupLabel = "duplicate label"
	// SkipUnknownLabel counts label lines naming no node of the graph.
	SkipUnknownLabel = "label of an unknown node"
	// SkipDupSplit counts repeated lines of a split file (the first is
	// kept).
	SkipDupSplit = "duplicate node in a split"
	// SkipUnknownSplit counts split lines naming no node of the graph.
	SkipUnknownSplit = "unknown node in a split"
	// SkipUnlabelled counts split nodes without a label, left out of the
	// split.
	SkipUnlabelled = "split node without a label"
)

// Load reads a graph from files: the nodes are those of the feature file,
// in its row order (a .npy's names file's order); every node of the edge
// file must have features. Class ids are the label names sorted. Errors
// are one line, "FILE:LINE: problem" (or "FILE: problem"); with f.Skip
// the records Stats.Skipped lists are counted and left out instead, but a
// node in two splits, an empty training split, ragged feature rows, a
// .npy whose rows are not its names', a label line without a tab and an
// unreadable file are always refused. Load never panics on any input.
func Load(f Files) (*Graph, Stats, error) {
	for _, c := range []struct{ what, path string }{
		{"edge", f.Edges}, {"feature", f.Features}, {"label", f.Labels}, {"training split", f.TrainNodes},
	} {
		if c.path == "" {
			return nil, Stats{}, fmt.Errorf("data: no %s file given", c.what)
		}
	}
	if isNPY(f.Features) && f.FeatureNames == "" {
		return nil, Stats{}, fmt.Errorf("%s: a .npy feature file needs a file of its rows' node names", f.Features)
	}
	l := &loader{f: f, ids: graph.NewIDs(), skipped: map[string]int64{}}
	if err := l.features(); err != nil {
		return nil, Stats{}, err
	}
	if err := l.edges(); err != nil {
		return nil, Stats{}, err
	}
	l.compact()
	if err := l.labels(); err != nil {
		return nil, Stats{}, err
	}
	if err := l.splits(); err != nil {
		return nil, Stats{}, err
	}
	g := l.g
	st := Stats{
		Nodes: g.N(), Features: g.F, Classes: len(g.Classes), Edges: l.edgesKept,
		Train: len(g.Train), Valid: len(g.Valid), Test: len(g.Test), Skipped: l.skipped,
	}
	return g, st, nil
}

func isNPY(path string) bool { return strings.EqualFold(filepath.Ext(path), ".npy") }

// loader is one Load.
type loader struct {
	f       Files
	skipped map[string]int64
	ids     *graph.IDs // names → ids: the feature rows' nodes first, 0 … nFeat-1
	nFeat   int
	width   int
	x       []float32 // nFeat × width
	bad     []bool    // per feature row: left out for non-finite values
	src     []int32   // the edges kept, ids < nFeat
	dst     []int32
	newID   []int32 // feature-row id → graph id, -1 if left out
	g       *Graph

	edgesKept int64
}

func (l *loader) skip(reason string) { l.skipped[reason]++ }

func (l *loader) open(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	return f, nil
}

// features reads the feature file into l.ids, l.x and l.bad.
func (l *loader) features() error {
	if isNPY(l.f.Features) {
		return l.featuresNPY()
	}
	fh, err := l.open(l.f.Features)
	if err != nil {
		return err
	}
	defer fh.Close()
	return l.featuresTSV(fh, l.f.Features)
}

// featuresTSV reads node<TAB>v1 v2 … lines (values separated by blanks).
func (l *loader) featuresTSV(r io.Reader, name string) error {
	lr := newLineReader(r, name)
	var first []int // the line of each row's first appearance
	for {
		b, err := lr.next()
		if err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		line := string(b)
		if strings.TrimSpace(line) == "" {
			continue
		}
		tab := strings.IndexByte(line, '\t')
		if tab < 0 {
			return lr.errorf("no tab after the node name (want node<TAB>v1 v2 …)")
		}
		node := trimName(line[:tab])
		if node == "" {
			return lr.errorf("empty node name")
		}
		start := len(l.x)
		bad, err := appendValues(&l.x, line[tab+1:])
		if err != nil {
			l.x = l.x[:start]
			return lr.errorf("node %s: %w", quote(node), err)
		}
		n := len(l.x) - start
		switch {
		case n == 0:
			return lr.errorf("node %s has no feature values", quote(node))
		case l.width == 0:
			l.width = n
		case n != l.width:
			return lr.errorf("node %s has %d feature values, but earlier rows have %d", quote(node), n, l.width)
		}
		if n > 1<<24 {
			return lr.errorf("%d feature values (at most %d)", n, 1<<24)
		}
		id := l.ids.ID(node)
		if int(id) < l.nFeat {
			l.x = l.x[:start]
			if !l.f.Skip {
				return lr.errorf("duplicate node %s (first on line %d)", quote(node), first[id])
			}
			l.skip(SkipDupFeatures)
			continue
		}
		if l.nFeat == math.MaxInt32 {
			return lr.errorf("more than %d nodes", math.MaxInt32)
		}
		l.nFeat++
		first = append(first, lr.line)
		l.bad = append(l.bad, false)
		if bad >= 0 {
			if !l.f.Skip {
				return lr.errorf("node %s: feature %d is %v", quote(node), bad+1, l.x[start+bad])
			}
			l.bad[id] = true
			l.skip(SkipNonFinite)
		}
	}
	if l.nFeat == 0 {
		return fmt.Errorf("%s: no feature rows", name)
	}
	return nil
}

// appendValues parses the blank-separated numbers of s onto x, returning
// the index of the first non-finite one (-1 if none).
func appendValues(x *[]float32, s string) (bad int, err error) {
	bad = -1
	for i, n := 0, 0; i < len(s); {
		for i < len(s) && isBlank(s[i]) {
			i++
		}
		if i == len(s) {
			break
		}
		j := i
		for j < len(s) && !isBlank(s[j]) {
			j++
		}
		v, err := strconv.ParseFloat(s[i:j], 32)
		if err != nil && !(errors.Is(err, strconv.ErrRange) && math.IsInf(v, 0)) {
			return -1, fmt.Errorf("feature %d, %s, is not a number", n+1, quote(s[i:j]))
		}
		f := float32(v)
		if bad < 0 && (math.IsNaN(v) || math.IsInf(float64(f), 0)) {
			bad = n
		}
		*x = append(*x, f)
		n++
		i = j
	}
	return bad, nil
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' }

// featuresNPY reads the names file, then the .npy rows in its order.
func (l *loader) featuresNPY() error {
	rows, err := l.featureNames()
	if err != nil {
		return err
	}
	path := l.f.Features
	fh, err := l.open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	h, err := readNPYHeader(fh)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	nr, nc, err := h.matrixShape()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case nr != int64(len(rows)):
		return fmt.Errorf("%s: %d rows, but %s has %d node names", path, nr, l.f.FeatureNames, len(rows))
	case nc == 0:
		return fmt.Errorf("%s: no feature columns", path)
	}
	fi, err := fh.Stat()
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if want := h.offset + 4*nr*nc; fi.Size() != want {
		return fmt.Errorf("%s: %d bytes, but a %d × %d float32 array takes %d", path, fi.Size(), nr, nc, want)
	}
	x, err := readNPYMatrix(fh, nr, nc)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	l.width = int(nc)
	l.x = x
	// Rows of duplicate names (kept out with Skip) are dropped.
	w := 0
	for i, id := range rows {
		if id < 0 {
			continue
		}
		row := x[i*l.width : (i+1)*l.width]
		copy(x[w*l.width:], row)
		bad := false
		for j, v := range row {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				if !l.f.Skip {
					return fmt.Errorf("%s: row %d (node %s): feature %d is %v", path, i+1, quote(l.ids.Name(int64(id))), j+1, v)
				}
				bad = true
				l.skip(SkipNonFinite)
				break
			}
		}
		l.bad = append(l.bad, bad)
		w++
	}
	l.x = x[:w*l.width]
	return nil
}

// featureNames reads the names of a .npy's rows into l.ids; it returns
// each row's id, -1 for a duplicate left out.
func (l *loader) featureNames() ([]int32, error) {
	name := l.f.FeatureNames
	fh, err := l.open(name)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	lr := newLineReader(fh, name)
	var rows []int32
	var first []int
	for {
		b, err := lr.next()
		if err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		node := trimName(string(b))
		if node == "" {
			continue
		}
		if strings.IndexByte(node, '\t') >= 0 {
			return nil, lr.errorf("a tab in node name %s (want one name a line)", quote(node))
		}
		id := l.ids.ID(node)
		if int(id) < l.nFeat {
			if !l.f.Skip {
				return nil, lr.errorf("duplicate node %s (first on line %d)", quote(node), first[id])
			}
			l.skip(SkipDupFeatures)
			rows = append(rows, -1)
			continue
		}
		if l.nFeat == math.MaxInt32 {
			return nil, lr.errorf("more than %d nodes", math.MaxInt32)
		}
		l.nFeat++
		first = append(first, lr.line)
		rows = append(rows, int32(id))
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no node names", name)
	}
	return rows, nil
}

// edges reads the edge file; a node without a feature row is an error, or
// with Skip, left out with its edges.
func (l *loader) edges() error {
	fh, err := l.open(l.f.Edges)
	if err != nil {
		return err
	}
	defer fh.Close()
	nFeat := int64(l.nFeat)
	emit := func(s, _, d int64) error {
		if s >= nFeat || d >= nFeat {
			if !l.f.Skip {
				n := s
				if n < nFeat {
					n = d
				}
				return fmt.Errorf("node %s has no features (not in %s)", quote(l.ids.Name(n)), l.f.Features)
			}
			l.skip(SkipEdgeLeftOut)
			return nil
		}
		l.src = append(l.src, int32(s))
		l.dst = append(l.dst, int32(d))
		return nil
	}
	if _, err := graph.Parse(fh, l.f.Edges, l.f.Format, l.ids, graph.NewIDs(), emit); err != nil {
		return err
	}
	if n := l.ids.Len() - nFeat; n > 0 {
		l.skipped[SkipNoFeatures] += n
	}
	return nil
}

// compact drops the nodes left out (non-finite features) and their
// edges, and builds the graph's names, features and neighbours.
func (l *loader) compact() {
	g := &Graph{F: l.width}
	l.newID = make([]int32, l.nFeat)
	n := int32(0)
	for v := 0; v < l.nFeat; v++ {
		if l.bad[v] {
			l.newID[v] = -1
			continue
		}
		l.newID[v] = n
		g.Names = append(g.Names, l.ids.Name(int64(v)))
		if int(n) != v {
			copy(l.x[int(n)*l.width:(int(n)+1)*l.width], l.x[v*l.width:(v+1)*l.width])
		}
		n++
	}
	g.X = l.x[:int(n)*l.width]
	k := 0
	for i := range l.src {
		s, d := l.newID[l.src[i]], l.newID[l.dst[i]]
		if s < 0 || d < 0 {
			l.skip(SkipEdgeLeftOut)
			continue
		}
		l.src[k], l.dst[k] = s, d
		k++
	}
	l.src, l.dst = l.src[:k], l.dst[:k]
	l.edgesKept = int64(k)
	g.Ptr, g.Nbr = buildCSR(int(n), l.src, l.dst, l.f.Directed)
	l.src, l.dst = nil, nil
	g.Y = make([]int32, n)
	for i := range g.Y {
		g.Y[i] = -1
	}
	l.g = g
}

// node returns the graph id of a name, or -1 when it is no node of the
// graph.
func (l *loader) node(name string) int32 {
	id, ok := l.ids.Lookup(name)
	if !ok || id >= int64(l.nFeat) {
		return -1
	}
	return l.newID[id]
}

// labels reads node<TAB>label lines; class ids are the labels sorted.
func (l *loader) labels() error {
	name := l.f.Labels
	fh, err := l.open(name)
	if err != nil {
		return err
	}
	defer fh.Close()
	return l.readLabels(fh, name)
}

// readLabels reads node<TAB>label lines from r.
func (l *loader) readLabels(r io.Reader, name string) error {
	lr := newLineReader(r, name)
	g := l.g
	first := make([]int32, g.N())
	raw := make([]int32, g.N()) // index into names, first-seen order
	for i := range raw {
		raw[i] = -1
	}
	index := map[string]int32{}
	var names []string
	lines := 0
	for {
		b, err := lr.next()
		if err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		line := string(b)
		if strings.TrimSpace(line) == "" {
			continue
		}
		lines++
		node, label, err := parseLabelLine(line)
		if err != nil {
			return lr.errorf("%w", err)
		}
		v := l.node(node)
		if v < 0 {
			if !l.f.Skip {
				return lr.errorf("unknown node %s (not in %s)", quote(node), l.f.Features)
			}
			l.skip(SkipUnknownLabel)
			continue
		}
		if raw[v] >= 0 {
			if !l.f.Skip {
				return lr.errorf("duplicate node %s (first on line %d)", quote(node), first[v])
			}
			l.skip(SkipDupLabel)
			continue
		}
		c, ok := index[label]
		if !ok {
			c = int32(len(names))
			index[label] = c
			names = append(names, label)
		}
		raw[v], first[v] = c, int32(lr.line)
	}
	if lines == 0 {
		return fmt.Errorf("%s: no labels", name)
	}
	if len(names) == 0 {
		return fmt.Errorf("%s: none of its %d labels names a node of the graph", name, lines)
	}
	g.Classes = slices.Clone(names)
	slices.Sort(g.Classes)
	byName := make([]int32, len(names))
	for c, s := range names {
		i, _ := slices.BinarySearch(g.Classes, s)
		byName[c] = int32(i)
	}
	for v, c := range raw {
		if c >= 0 {
			g.Y[v] = byName[c]
		}
	}
	return nil
}

// parseLabelLine splits node<TAB>label.
func parseLabelLine(line string) (node, label string, err error) {
	tab := strings.IndexByte(line, '\t')
	if tab < 0 {
		return "", "", errors.New("no tab between node and label (want node<TAB>label)")
	}
	node, label = trimName(line[:tab]), trimName(line[tab+1:])
	switch {
	case node == "":
		return "", "", errors.New("empty node name")
	case label == "":
		return "", "", fmt.Errorf("node %s: empty label", quote(node))
	case strings.IndexByte(label, '\t') >= 0:
		return "", "", fmt.Errorf("node %s: more than two tab-separated fields (want node<TAB>label)", quote(node))
	}
	return node, label, nil
}

// splits reads the train, valid and test node lists.
func (l *loader) splits() error {
	g := l.g
	in := make([]int8, g.N()) // 1 + the split a node is in, 0 for none
	at := make([]int32, g.N())
	files := []string{l.f.TrainNodes, l.f.ValidNodes, l.f.TestNodes}
	out := []*[]int32{&g.Train, &g.Valid, &g.Test}
	for k, name := range files {
		if name == "" {
			continue
		}
		fh, err := l.open(name)
		if err != nil {
			return err
		}
		err = l.split(fh, name, int8(k+1), in, at, files, out[k])
		fh.Close()
		if err != nil {
			return err
		}
	}
	if len(g.Train) == 0 {
		if l.f.Skip {
			return fmt.Errorf("%s: no training nodes left (the others were left out as unknown, repeated or unlabelled)", l.f.TrainNodes)
		}
		return fmt.Errorf("%s: no training nodes", l.f.TrainNodes)
	}
	return nil
}

func (l *loader) split(r io.Reader, name string, k int8, in []int8, at []int32, files []string, out *[]int32) error {
	lr := newLineReader(r, name)
	for {
		b, err := lr.next()
		if err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		node := trimName(string(b))
		if node == "" {
			continue
		}
		if strings.IndexByte(node, '\t') >= 0 {
			return lr.errorf("a tab in node name %s (want one node name a line)", quote(node))
		}
		v := l.node(node)
		switch {
		case v < 0:
			if !l.f.Skip {
				return lr.errorf("unknown node %s (not in %s)", quote(node), l.f.Features)
			}
			l.skip(SkipUnknownSplit)
			continue
		case in[v] == k:
			if !l.f.Skip {
				return lr.errorf("duplicate node %s (first on line %d)", quote(node), at[v])
			}
			l.skip(SkipDupSplit)
			continue
		case in[v] != 0:
			return lr.errorf("node %s is also in %s (line %d): the splits must be disjoint", quote(node), files[in[v]-1], at[v])
		}
		in[v], at[v] = k, int32(lr.line)
		if l.g.Y[v] < 0 {
			if !l.f.Skip {
				return lr.errorf("node %s has no label (not in %s)", quote(node), l.f.Labels)
			}
			l.skip(SkipUnlabelled)
			continue
		}
		*out = append(*out, v)
	}
}

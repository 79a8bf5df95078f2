package docs

// The package diagram of design.md against the imports of the module's
// non-test Go files, and the one-way rules design.md states.
//
// Every identifier here starts with "design" so that the package's other
// tests can name their own helpers freely.

import (
	"bufio"
	"cmp"
	"fmt"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const designDoc = "design.md"

// designFile is one non-test Go file: its imports and its build
// constraint (nil without one).
type designFile struct {
	name       string
	imports    []string
	constraint constraint.Expr
}

// designPkg is one package of the module: Path relative to the module
// root ("realrun/cpu"), its non-test files, whether it is a command.
type designPkg struct {
	path  string
	main  bool
	files []designFile
}

// designModule is the module's packages, keyed by path relative to the
// module root.
type designModule struct {
	path string // the module path from go.mod
	pkgs map[string]*designPkg
}

// local returns the module-relative path of an import path of ours and
// true, or false for the standard library and other modules.
func (m *designModule) local(imp string) (string, bool) {
	if imp == m.path {
		return ".", true
	}
	rel, ok := strings.CutPrefix(imp, m.path+"/")
	return rel, ok
}

// imports returns every import path a package's non-test files name, in
// any build configuration.
func (p *designPkg) imports() []string {
	var all []string
	for _, f := range p.files {
		all = append(all, f.imports...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// localImports returns the module-relative paths of the packages of ours
// that p imports.
func (m *designModule) localImports(p *designPkg) []string {
	var out []string
	for _, imp := range p.imports() {
		if rel, ok := m.local(imp); ok {
			out = append(out, rel)
		}
	}
	return out
}

// designLoadModule parses the package clause and imports of every non-test
// Go file of the module rooted at root. Files of every build configuration
// count (cuda, hdf5, nodist, purego, other systems), except those marked
// //go:build ignore; directories the go command skips (testdata, names
// starting with . or _, other modules) are skipped too.
func designLoadModule(root string) (*designModule, error) {
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("module root %s: %w", root, err)
	}
	mm := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(gomod)
	if mm == nil {
		return nil, fmt.Errorf("%s: no module line", filepath.Join(root, "go.mod"))
	}
	m := &designModule{path: string(mm[1]), pkgs: map[string]*designPkg{}}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path == root {
				return nil
			}
			if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return fmt.Errorf("parse imports: %w", err)
		}
		df := designFile{name: name}
		for _, cg := range f.Comments {
			if cg.Pos() >= f.Package {
				break
			}
			for _, c := range cg.List {
				if constraint.IsGoBuild(c.Text) {
					if df.constraint, err = constraint.Parse(c.Text); err != nil {
						return fmt.Errorf("%s: %w", path, err)
					}
				}
			}
		}
		if tag, ok := df.constraint.(*constraint.TagExpr); ok && tag.Tag == "ignore" {
			return nil
		}
		for _, is := range f.Imports {
			imp, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: import %s: %w", path, is.Path.Value, err)
			}
			df.imports = append(df.imports, imp)
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		p := m.pkgs[rel]
		if p == nil {
			p = &designPkg{path: rel}
			m.pkgs[rel] = p
		}
		p.main = p.main || f.Name.Name == "main"
		p.files = append(p.files, df)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the module at %s: %w", root, err)
	}
	return m, nil
}

// designDiagram is design.md's package diagram: nodes by label (a folder
// relative to the module root) and the drawn edges between labels.
type designDiagram struct {
	ids   map[string]string // mermaid id → label
	nodes []string          // labels, in the order drawn
	edges map[[2]string]bool
}

var (
	designHeaderRE = regexp.MustCompile(`^(graph|flowchart) (TD|TB|BT|LR|RL)$`)
	designNodeRE   = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]*)\["([^"]+)"\]$`)
	designEdgeRE   = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]*) --> ([A-Za-z][A-Za-z0-9_]*(?: & [A-Za-z][A-Za-z0-9_]*)*)$`)
)

// designParseDiagram reads the one ```mermaid block of a document: a
// header line (graph TD), then lines that declare a node (id["folder"]),
// draw edges from one node (a --> b & c & d) or comment (%% …). Every
// other line is an error, so that the diagram stays in a form this test
// reads exactly.
func designParseDiagram(doc string) (*designDiagram, error) {
	var block []string
	var start, blocks int
	in := false
	sc := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case !in && strings.TrimSpace(line) == "```mermaid":
			in, start = true, n
			blocks++
		case in && strings.TrimSpace(line) == "```":
			in = false
		case in && blocks == 1:
			block = append(block, line)
		}
	}
	if blocks != 1 {
		return nil, fmt.Errorf("want exactly one ```mermaid block (the package diagram), found %d", blocks)
	}
	if in {
		return nil, fmt.Errorf("line %d: the ```mermaid block is not closed", start)
	}
	d := &designDiagram{ids: map[string]string{}, edges: map[[2]string]bool{}}
	labels := map[string]bool{}
	header := false
	type edge struct {
		from, to string
		line     int
	}
	var edges []edge
	for i, raw := range block {
		n := start + 1 + i
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "%%") {
			continue
		}
		if !header {
			if !designHeaderRE.MatchString(line) {
				return nil, fmt.Errorf("line %d: want the diagram's header (graph TD), got %q", n, line)
			}
			header = true
			continue
		}
		if m := designNodeRE.FindStringSubmatch(line); m != nil {
			id, label := m[1], m[2]
			if _, dup := d.ids[id]; dup {
				return nil, fmt.Errorf("line %d: node id %s declared twice", n, id)
			}
			if labels[label] {
				return nil, fmt.Errorf("line %d: node %q declared twice", n, label)
			}
			d.ids[id], labels[label] = label, true
			d.nodes = append(d.nodes, label)
			continue
		}
		if m := designEdgeRE.FindStringSubmatch(line); m != nil {
			for _, to := range strings.Split(m[2], " & ") {
				edges = append(edges, edge{m[1], to, n})
			}
			continue
		}
		return nil, fmt.Errorf("line %d: %q is none of: a node (id[\"folder\"]), edges (a --> b & c), a comment (%%%% …)", n, line)
	}
	if !header {
		return nil, fmt.Errorf("line %d: the ```mermaid block is empty", start)
	}
	for _, e := range edges {
		from, ok := d.ids[e.from]
		if !ok {
			return nil, fmt.Errorf("line %d: edge from undeclared node id %s", e.line, e.from)
		}
		to, ok := d.ids[e.to]
		if !ok {
			return nil, fmt.Errorf("line %d: edge to undeclared node id %s", e.line, e.to)
		}
		if from == to {
			return nil, fmt.Errorf("line %d: edge from %s to itself", e.line, from)
		}
		if d.edges[[2]string{from, to}] {
			return nil, fmt.Errorf("line %d: edge %s --> %s drawn twice", e.line, from, to)
		}
		d.edges[[2]string{from, to}] = true
	}
	return d, nil
}

// node returns the node a package belongs to: the label that is the
// longest prefix of its path, counted in whole path elements.
func (d *designDiagram) node(pkg string) (string, bool) {
	best := ""
	for _, n := range d.nodes {
		if (pkg == n || strings.HasPrefix(pkg, n+"/")) && len(n) > len(best) {
			best = n
		}
	}
	return best, best != ""
}

// id returns the mermaid id of a node label.
func (d *designDiagram) id(label string) string {
	for id, l := range d.ids {
		if l == label {
			return id
		}
	}
	return "?"
}

// designNodeGraph aggregates the module's imports to the diagram's nodes:
// for each edge between two nodes, one package import that makes it.
func designNodeGraph(m *designModule, d *designDiagram) (edges map[[2]string]string, homeless []string) {
	edges = map[[2]string]string{}
	for _, path := range slices.Sorted(maps.Keys(m.pkgs)) {
		p := m.pkgs[path]
		from, ok := d.node(path)
		if !ok {
			homeless = append(homeless, path)
			continue
		}
		for _, imp := range m.localImports(p) {
			to, ok := d.node(imp)
			if !ok || to == from {
				continue
			}
			if _, seen := edges[[2]string{from, to}]; !seen {
				edges[[2]string{from, to}] = path + " imports " + imp
			}
		}
	}
	return edges, homeless
}

func designLoad(t *testing.T) (*designModule, *designDiagram, string) {
	t.Helper()
	doc, err := os.ReadFile(designDoc)
	require.NoError(t, err)
	d, err := designParseDiagram(string(doc))
	require.NoError(t, err, "%s: the package diagram", designDoc)
	m, err := designLoadModule("..")
	require.NoError(t, err)
	return m, d, string(doc)
}

// TestDesignDiagram checks design.md's package diagram against the
// imports: every package belongs to a node, every node holds a package,
// every drawn edge is an import and every import between two nodes is
// drawn.
func TestDesignDiagram(t *testing.T) {
	m, d, _ := designLoad(t)
	imported, homeless := designNodeGraph(m, d)

	for _, p := range homeless {
		t.Errorf("%s: package %s belongs to no node of the diagram: declare a node for it or for a folder above it", designDoc, p)
	}
	for _, n := range d.nodes {
		held := false
		for p := range m.pkgs {
			if home, _ := d.node(p); home == n {
				held = true
				break
			}
		}
		if !held {
			t.Errorf("%s: node %s holds no package (no non-test Go file under it belongs to it)", designDoc, n)
		}
	}
	for _, e := range designSortedEdges(d.edges) {
		if _, ok := imported[e]; !ok {
			t.Errorf("%s: edge %s --> %s is drawn, but no package of %s imports a package of %s: remove the edge",
				designDoc, e[0], e[1], e[0], e[1])
		}
	}
	for _, e := range designSortedEdges(imported) {
		if !d.edges[e] {
			t.Errorf("%s: edge %s --> %s is not drawn, but %s: add %s --> %s",
				designDoc, e[0], e[1], imported[e], d.id(e[0]), d.id(e[1]))
		}
	}
}

// TestDesignPackages checks design.md's table of packages: one row per
// package of the module, each in the node that holds it (a blank node
// cell repeats the row above), no row for a package that does not exist.
func TestDesignPackages(t *testing.T) {
	m, d, doc := designLoad(t)
	_, section, found := strings.Cut(doc, "\n## Packages\n")
	require.True(t, found, "%s: no ## Packages section", designDoc)
	section, _, _ = strings.Cut(section, "\n## ")
	cell := regexp.MustCompile("^`([^`]+)`$")
	listed := map[string]bool{}
	node := ""
	for line := range strings.Lines(section) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "| node |") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(line, "|")
		require.GreaterOrEqual(t, len(cells), 4, "%s: row %q: want | node | package | what it is for |", designDoc, line)
		if n := strings.TrimSpace(cells[1]); n != "" {
			c := cell.FindStringSubmatch(n)
			require.NotNil(t, c, "%s: row %q: the node cell is not one `folder`", designDoc, line)
			node = c[1]
		}
		c := cell.FindStringSubmatch(strings.TrimSpace(cells[2]))
		require.NotNil(t, c, "%s: row %q: the package cell is not one `path`", designDoc, line)
		pkg := c[1]
		assert.False(t, listed[pkg], "%s: package %s is listed twice", designDoc, pkg)
		listed[pkg] = true
		if _, ok := m.pkgs[pkg]; !ok {
			t.Errorf("%s: the table lists %s, which is no package of the module: remove its row", designDoc, pkg)
			continue
		}
		if home, _ := d.node(pkg); home != node {
			t.Errorf("%s: the table puts %s in node %s, but it belongs to node %q", designDoc, pkg, node, home)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(m.pkgs)) {
		if !listed[p] {
			t.Errorf("%s: package %s is not in the table of packages: add a row with what its doc comment says it is for", designDoc, p)
		}
	}
}

func designSortedEdges[V any](m map[[2]string]V) [][2]string {
	return designSortEdges(slices.Collect(maps.Keys(m)))
}

// designSortEdges sorts edges by their start, then their end.
func designSortEdges(edges [][2]string) [][2]string {
	slices.SortFunc(edges, func(a, b [2]string) int {
		return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]))
	})
	return edges
}

// TestDesignOneWay checks that the imports between the diagram's nodes
// point one way: no cycle, so that every node can be read knowing only
// the nodes below it.
func TestDesignOneWay(t *testing.T) {
	m, d, _ := designLoad(t)
	imported, _ := designNodeGraph(m, d)
	if c := designCycle(slices.Collect(maps.Keys(imported))); c != nil {
		var why []string
		for i := 0; i+1 < len(c); i++ {
			why = append(why, imported[[2]string{c[i], c[i+1]}])
		}
		t.Errorf("the nodes' imports form a cycle %s (%s)", strings.Join(c, " --> "), strings.Join(why, "; "))
	}
}

// designCycle returns a cycle of the directed graph of edges, as the path
// a → … → a, or nil when there is none.
func designCycle(edges [][2]string) []string {
	next := map[string][]string{}
	var nodes []string
	for _, e := range designSortEdges(slices.Clone(edges)) {
		next[e[0]] = append(next[e[0]], e[1])
		nodes = append(nodes, e[0])
	}
	// Depth-first search; a grey node met again closes a cycle.
	const white, grey, black = 0, 1, 2
	colour := map[string]int{}
	var stack []string
	var visit func(n string) []string
	visit = func(n string) []string {
		colour[n] = grey
		stack = append(stack, n)
		for _, to := range next[n] {
			switch colour[to] {
			case grey:
				i := slices.Index(stack, to)
				return append(slices.Clone(stack[i:]), to)
			case white:
				if c := visit(to); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		colour[n] = black
		return nil
	}
	for _, n := range nodes {
		if colour[n] == white {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}

func TestDesignCycle(t *testing.T) {
	tests := []struct {
		name  string
		edges [][2]string
		want  []string
	}{
		{name: "none", edges: nil},
		{name: "a chain", edges: [][2]string{{"a", "b"}, {"b", "c"}, {"a", "c"}}},
		{name: "two nodes", edges: [][2]string{{"a", "b"}, {"b", "a"}}, want: []string{"a", "b", "a"}},
		{name: "below the top", edges: [][2]string{{"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "b"}}, want: []string{"b", "c", "d", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, designCycle(tt.edges))
		})
	}
}

// designUnder reports whether a module-relative path is one of the
// folders or lies beneath one of them.
func designUnder(path string, folders ...string) bool {
	for _, f := range folders {
		if path == f || strings.HasPrefix(path, f+"/") {
			return true
		}
	}
	return false
}

// designBuilds reports whether a file can be part of a build in which tag
// is set (on) or not: with every other tag set, or with none set. Good
// enough for the constraints of this module, which combine a few tags
// with && and !.
func designBuilds(f designFile, tag string, on bool) bool {
	if f.constraint == nil {
		return true
	}
	for _, others := range []bool{true, false} {
		if f.constraint.Eval(func(t string) bool {
			if t == tag {
				return on
			}
			return others
		}) {
			return true
		}
	}
	return false
}

// designRule is one rule of design.md about imports: check lists what
// breaks it, one line each ("a imports b"). Gaps are the lines design.md
// lists as known gaps: the rule is intended but not kept there yet. A gap
// that no longer occurs fails too, so that the list stays true.
type designRule struct {
	name  string
	check func(m *designModule) []string
	gaps  []string
}

// designNoImport is a rule that no package whose path satisfies from
// imports a package (of ours, or any import path for std/external names)
// that satisfies to.
func designNoImport(from func(p *designPkg) bool, to func(m *designModule, imp string) bool) func(m *designModule) []string {
	return func(m *designModule) []string {
		var out []string
		for _, path := range slices.Sorted(maps.Keys(m.pkgs)) {
			p := m.pkgs[path]
			if !from(p) {
				continue
			}
			for _, imp := range p.imports() {
				if to(m, imp) {
					rel, ok := m.local(imp)
					if !ok {
						rel = imp
					}
					out = append(out, path+" imports "+rel)
				}
			}
		}
		return out
	}
}

// designOurs matches imports of packages of ours in or under folders.
func designOurs(folders ...string) func(m *designModule, imp string) bool {
	return func(m *designModule, imp string) bool {
		rel, ok := m.local(imp)
		return ok && designUnder(rel, folders...)
	}
}

// designOursDepending matches imports of packages of ours that lie in or
// under folder or depend on a package there, directly or through others.
func designOursDepending(folder string) func(m *designModule, imp string) bool {
	return func(m *designModule, imp string) bool {
		rel, ok := m.local(imp)
		if !ok {
			return false
		}
		return designUnder(rel, folder) || slices.ContainsFunc(designDeps(m, rel), func(dep string) bool { return designUnder(dep, folder) })
	}
}

// designOursBut matches imports of packages of ours outside folders.
func designOursBut(folders ...string) func(m *designModule, imp string) bool {
	return func(m *designModule, imp string) bool {
		rel, ok := m.local(imp)
		return ok && !designUnder(rel, folders...)
	}
}

// designIn matches packages in or under folders.
func designIn(folders ...string) func(p *designPkg) bool {
	return func(p *designPkg) bool { return designUnder(p.path, folders...) }
}

// designOutside matches packages outside folders.
func designOutside(folders ...string) func(p *designPkg) bool {
	return func(p *designPkg) bool { return !designUnder(p.path, folders...) }
}

// designExternal matches imports of other modules' packages whose path
// starts with one of prefixes.
func designExternal(prefixes ...string) func(m *designModule, imp string) bool {
	return func(m *designModule, imp string) bool {
		for _, p := range prefixes {
			if imp == p || strings.HasPrefix(imp, strings.TrimSuffix(p, "/")+"/") {
				return true
			}
		}
		return false
	}
}

// designTagged lists the files that import a package matching imp and
// can be built on the wrong side of tag: set when on is false, unset when
// on is true.
func designTagged(imp func(m *designModule, imp string) bool, tag string, on bool, in func(p *designPkg) bool) func(m *designModule) []string {
	return func(m *designModule) []string {
		var out []string
		for _, path := range slices.Sorted(maps.Keys(m.pkgs)) {
			p := m.pkgs[path]
			if !in(p) {
				continue
			}
			for _, f := range p.files {
				for _, i := range f.imports {
					if imp(m, i) && designBuilds(f, tag, !on) {
						out = append(out, fmt.Sprintf("%s/%s imports %s", path, f.name, i))
					}
				}
			}
		}
		return out
	}
}

// designRules are the rules design.md states under "Rules the imports keep"
// and, with gaps, under "Known gaps".
var designRules = []designRule{
	{
		name:  "orderings imports nothing of ours outside orderings/",
		check: designNoImport(designIn("orderings"), designOursBut("orderings")),
	},
	{
		name:  "workload imports nothing of ours",
		check: designNoImport(designIn("workload"), designOursBut("workload")),
	},
	{
		name:  "devices imports only workload of ours",
		check: designNoImport(designIn("devices"), designOursBut("devices", "workload")),
	},
	{
		name:  "report imports only orderings of ours",
		check: designNoImport(designIn("report"), designOursBut("report", "orderings")),
	},
	{
		name:  "sim does not depend on the engines, the bridge, experiments, plots or cmd, directly or through another package",
		check: designNoDep(designIn("sim"), "realrun", "validate", "experiments", "plots", "cmd"),
	},
	{
		name: "the executor, the CPU engine and the data they read (realrun, realrun/cpu, realrun/store, realrun/graph) do not depend on sim or validate, directly or through another package",
		check: designNoDep(func(p *designPkg) bool {
			return slices.Contains([]string{"realrun", "realrun/cpu", "realrun/store", "realrun/graph"}, p.path)
		}, "sim", "validate"),
	},
	{
		name:  "no engine package (realrun/...) imports the simulator or the bridge",
		check: designNoImport(designIn("realrun"), designOurs("sim", "validate")),
	},
	{
		name: "only the bridge (validate) imports both the simulator (sim/...) and the engines (realrun/...), the commands included",
		check: func(m *designModule) []string {
			var out []string
			for _, path := range slices.Sorted(maps.Keys(m.pkgs)) {
				if path == "validate" {
					continue
				}
				imps := m.localImports(m.pkgs[path])
				sim := slices.ContainsFunc(imps, func(i string) bool { return designUnder(i, "sim") })
				eng := slices.ContainsFunc(imps, func(i string) bool { return designUnder(i, "realrun") })
				if sim && eng {
					out = append(out, path+" imports sim and realrun")
				}
			}
			return out
		},
	},
	{
		name:  "nothing outside cmd/ imports a package of cmd/",
		check: designNoImport(designOutside("cmd"), designOurs("cmd")),
	},
	{
		name: "library packages parse no flags: only cmd/ and package main import the standard flag package",
		check: designNoImport(func(p *designPkg) bool { return !p.main && !designUnder(p.path, "cmd") },
			func(m *designModule, imp string) bool { return imp == "flag" }),
	},
	{
		name:  "only cmd/ imports experiments",
		check: designNoImport(designOutside("cmd", "experiments"), designOurs("experiments")),
	},
	{
		name:  "only cmd/ and experiments import plots",
		check: designNoImport(designOutside("cmd", "experiments", "plots"), designOurs("plots")),
	},
	{
		name:  "plots imports nothing of ours but internal/",
		check: designNoImport(designIn("plots"), designOursBut("plots", "internal")),
	},
	{
		name:  "internal/ imports none of sim, realrun, validate, experiments, plots, cmd",
		check: designNoImport(designIn("internal"), designOurs("sim", "realrun", "validate", "experiments", "plots", "cmd")),
	},
	{
		name:  "only plots links the chart and table libraries",
		check: designNoImport(designOutside("plots"), designExternal("gonum.org/v1/plot", "github.com/olekukonko/tablewriter")),
	},
	{
		name:  "only realrun/dist links etcd",
		check: designNoImport(designOutside("realrun/dist"), designExternal("go.etcd.io/")),
	},
	{
		name:  "cmd/realrun links realrun/dist (directly or through another package) only in files a -tags nodist build leaves out",
		check: designTagged(designOursDepending("realrun/dist"), "nodist", false, designIn("cmd/realrun")),
	},
	{
		name:  "gorgonia.org/cu is imported only in files built with -tags cuda",
		check: designTagged(designExternal("gorgonia.org/cu"), "cuda", true, func(*designPkg) bool { return true }),
	},
	{
		name:  "gonum.org/v1/hdf5 (cgo) is imported only in files built with -tags hdf5",
		check: designTagged(designExternal("gonum.org/v1/hdf5"), "hdf5", true, func(*designPkg) bool { return true }),
	},
	{
		name:  "only realrun/dist/internal/memobjects links the in-memory object store (gofakes3), --objects' one-machine default",
		check: designNoImport(designOutside("realrun/dist/internal/memobjects"), designExternal("github.com/johannesboyne/gofakes3")),
	},
	{
		name: "one executor: sim and realrun import orderings/executor (validate's TestOneExecutor checks that they carry out the same actions)",
		check: func(m *designModule) []string {
			var out []string
			for _, path := range []string{"sim", "realrun"} {
				if p := m.pkgs[path]; p == nil || !slices.Contains(m.localImports(p), "orderings/executor") {
					out = append(out, path+" does not import orderings/executor")
				}
			}
			return out
		},
	},
}

// designNoDep is a rule that no package whose path satisfies from
// depends, directly or through other packages of ours, on a package in or
// under folders.
func designNoDep(from func(p *designPkg) bool, folders ...string) func(m *designModule) []string {
	return func(m *designModule) []string {
		var out []string
		for _, path := range slices.Sorted(maps.Keys(m.pkgs)) {
			if !from(m.pkgs[path]) {
				continue
			}
			for _, dep := range designDeps(m, path) {
				if designUnder(dep, folders...) {
					out = append(out, path+" depends on "+dep)
				}
			}
		}
		return out
	}
}

// designDeps returns every package of ours that path depends on, directly
// or through other packages of ours.
func designDeps(m *designModule, path string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		pkg := m.pkgs[p]
		if pkg == nil {
			return
		}
		for _, imp := range m.localImports(pkg) {
			if !seen[imp] {
				seen[imp] = true
				walk(imp)
			}
		}
	}
	walk(path)
	return slices.Sorted(maps.Keys(seen))
}

// TestDesignRules checks the import rules design.md states, and that its
// known gaps are exactly the places that break them.
func TestDesignRules(t *testing.T) {
	m, _, doc := designLoad(t)
	_, gapsText, _ := strings.Cut(doc, "\n## Known gaps\n")
	gapsText, _, _ = strings.Cut(gapsText, "\n## ")
	for _, r := range designRules {
		t.Run(r.name, func(t *testing.T) {
			got := r.check(m)
			for _, v := range got {
				if !slices.Contains(r.gaps, v) {
					t.Errorf("%s: broken: %s", r.name, v)
				}
			}
			for _, g := range r.gaps {
				if !slices.Contains(got, g) {
					t.Errorf("%s: the known gap %q no longer occurs: remove it from designRules and from %s's Known gaps", r.name, g, designDoc)
				}
				from, _, _ := strings.Cut(g, " ")
				assert.Contains(t, gapsText, "`"+from+"`", "%s: the known gap %q is not described under ## Known gaps", designDoc, g)
			}
		})
	}
}

// TestDesignParseDiagram checks the diagram parser on small documents.
func TestDesignParseDiagram(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		nodes   []string
		edges   [][2]string
		wantErr string
	}{
		{
			name:  "nodes and edges",
			doc:   "x\n```mermaid\ngraph TD\n  %% a comment\n  a[\"cmd/a\"]\n  b[\"b\"]\n  c[\"b/c\"]\n  a --> b & c\n  c --> b\n```\n",
			nodes: []string{"cmd/a", "b", "b/c"},
			edges: [][2]string{{"b/c", "b"}, {"cmd/a", "b"}, {"cmd/a", "b/c"}},
		},
		{name: "no diagram", doc: "text\n", wantErr: "found 0"},
		{name: "two diagrams", doc: "```mermaid\ngraph TD\n```\n```mermaid\ngraph TD\n```\n", wantErr: "found 2"},
		{name: "no header", doc: "```mermaid\na[\"a\"]\n```\n", wantErr: "line 2: want the diagram's header"},
		{name: "unknown line", doc: "```mermaid\ngraph LR\na[\"a\"]\na --- a\n```\n", wantErr: "line 4"},
		{name: "undeclared node", doc: "```mermaid\ngraph LR\na[\"a\"]\na --> b\n```\n", wantErr: "undeclared node id b"},
		{name: "self edge", doc: "```mermaid\ngraph LR\na[\"a\"]\na --> a\n```\n", wantErr: "to itself"},
		{name: "edge twice", doc: "```mermaid\ngraph LR\na[\"a\"]\nb[\"b\"]\na --> b\na --> b\n```\n", wantErr: "drawn twice"},
		{name: "label twice", doc: "```mermaid\ngraph LR\na[\"a\"]\nb[\"a\"]\n```\n", wantErr: "declared twice"},
		{name: "not closed", doc: "```mermaid\ngraph LR\n", wantErr: "not closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := designParseDiagram(tt.doc)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.nodes, d.nodes)
			assert.Equal(t, tt.edges, designSortedEdges(d.edges))
			home, ok := d.node("b/c/d")
			assert.True(t, ok)
			assert.Equal(t, "b/c", home, "longest prefix")
			_, ok = d.node("bc")
			assert.False(t, ok, "whole path elements only")
		})
	}
}

func TestDesignBuilds(t *testing.T) {
	tests := []struct {
		line     string // "" for no constraint
		tag      string
		on, want bool
	}{
		{line: "", tag: "cuda", on: false, want: true},
		{line: "//go:build cuda", tag: "cuda", on: false, want: false},
		{line: "//go:build cuda", tag: "cuda", on: true, want: true},
		{line: "//go:build !nodist", tag: "nodist", on: true, want: false},
		{line: "//go:build !nodist && !cuda", tag: "nodist", on: false, want: true},
		{line: "//go:build !nodist && !cuda", tag: "cuda", on: true, want: false},
		{line: "//go:build !amd64 || purego", tag: "purego", on: false, want: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s=%v", tt.line, tt.tag, tt.on), func(t *testing.T) {
			f := designFile{name: "x.go"}
			if tt.line != "" {
				var err error
				f.constraint, err = constraint.Parse(tt.line)
				require.NoError(t, err)
			}
			assert.Equal(t, tt.want, designBuilds(f, tt.tag, tt.on))
		})
	}
}

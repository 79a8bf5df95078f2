package cli

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
)

// root is the module's root, from this package's directory.
const root = "../../.."

// commandFlags returns every flag of every command, from the reference
// generated from their own help (docs/reference, kept true by the
// commands' TestReference).
func commandFlags(t *testing.T) map[string]bool {
	t.Helper()
	refs, err := filepath.Glob(filepath.Join(root, "docs", "reference", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, refs)
	def := regexp.MustCompile(`(?m)^\s+--([a-z][a-z0-9-]*)`)
	flags := map[string]bool{}
	for _, r := range refs {
		b, err := os.ReadFile(r)
		require.NoError(t, err)
		for _, m := range def.FindAllStringSubmatch(string(b), -1) {
			flags[m[1]] = true
		}
	}
	require.Greater(t, len(flags), 100, "the reference lists the commands' flags")
	return flags
}

// libraryString is a string literal of a library package (outside cmd/,
// tests and testdata).
type libraryString struct {
	pos  string // file:line
	file string // slash-separated from the root
	fn   string // the enclosing function or method ("": none)
	dir  string // the package's directory, slash-separated from the root
	s    string
}

func libraryStrings(t *testing.T) []libraryString {
	t.Helper()
	var out []libraryString
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "cmd" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." || rel == "results" || rel == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			var fn string
			if d, ok := decl.(*ast.FuncDecl); ok {
				fn = d.Name.Name
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				p := fset.Position(lit.Pos())
				out = append(out, libraryString{pos: rel + ":" + strconv.Itoa(p.Line), file: rel, fn: fn, dir: filepath.ToSlash(filepath.Dir(rel)), s: s})
				return true
			})
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, out)
	return out
}

// notYet lists the library packages that still name flags in their
// strings, with why; each entry must still hold one (the list only
// shrinks).
var notYet = map[string]string{}

// otherPrograms are the places that write another program's flags whose
// names one of ours shares ("FILE FUNC --flag"), with the program.
var otherPrograms = map[string]string{
	"experiments/models_pbg.go PBGArgs":                  "scripts/pbg_side.py (PyTorch-BigGraph's side of models-pbg)",
	"experiments/models_types.go runPBG":                 "scripts/pbg_side.py --schema",
	"experiments/models_types.go RunModelsTypes --seed":  "cmd/internal/useritem, the graph's generator (its flags are in no reference)",
	"experiments/readme.go CommittedProvenance --format": "git log",
}

// No library names a command's flag: it names the field ({Field}) and
// the command renders the flag (Render). Another program's flags (etcd's,
// git's) are not ours and do not count: most share no name with ours,
// and those that do are listed in otherPrograms.
func TestLibrariesNameNoFlag(t *testing.T) {
	flags := commandFlags(t)
	flagRE := regexp.MustCompile(`(^|[^A-Za-z0-9-])--([a-z][a-z0-9-]*)`)
	found := map[string][]string{}
	used := map[string]bool{}
	for _, ls := range libraryStrings(t) {
		for _, m := range flagRE.FindAllStringSubmatch(ls.s, -1) {
			where := ls.file + " " + ls.fn
			if _, ok := otherPrograms[where]; ok {
				used[where] = true
				continue
			}
			if _, ok := otherPrograms[where+" --"+m[2]]; ok {
				used[where+" --"+m[2]] = true
				continue
			}
			if flags[m[2]] {
				found[ls.dir] = append(found[ls.dir], ls.pos+": --"+m[2])
			}
		}
	}
	var bad []string
	for dir, at := range found {
		if _, ok := notYet[dir]; !ok {
			bad = append(bad, at...)
		}
	}
	sort.Strings(bad)
	assert.Empty(t, bad, "library strings naming a command's flag: name the field as {Field} (inputerr.Render) and map it in fieldFlags")
	for dir := range notYet {
		assert.NotEmpty(t, found[dir], "%s names no flag any more: take it off notYet", dir)
	}
	for where := range otherPrograms {
		assert.True(t, used[where], "otherPrograms: %s writes no such flag any more: take it off", where)
	}
}

// Every field a library names in a message has a flag of a command to
// render it with.
func TestFieldsHaveFlags(t *testing.T) {
	flags := commandFlags(t)
	used := map[string]bool{}
	var missing []string
	for _, ls := range libraryStrings(t) {
		for _, f := range inputerr.Fields(ls.s) {
			used[f] = true
			if flag, ok := FlagOf(f); !ok || !flags[strings.TrimPrefix(flag, "--")] {
				missing = append(missing, fmt.Sprintf("%s: {%s} (%s)", ls.pos, f, flag))
			}
		}
	}
	assert.Empty(t, missing, "fields named in library messages without a command's flag (give the flag in fieldFlags)")
	var unused []string
	for f := range fieldFlags {
		if !used[f] {
			unused = append(unused, f)
		}
	}
	slices.Sort(unused)
	assert.Empty(t, unused, "fieldFlags entries no library names")
}

func TestRenderFields(t *testing.T) {
	for _, tc := range []struct{ field, flag string }{
		{"P", "--p"}, {"MicroBatchMemory", "--micro-batch-memory"}, {"Dim", "--dim"},
		{"GPUMemory", "--gpu-memory"}, {"TF32", "--tf32"}, {"LR", "--lr"},
	} {
		assert.Equal(t, tc.flag+" 3", Render(inputerr.Field(tc.field)+" 3"))
	}
	for f, flag := range fieldFlags {
		assert.Equal(t, flag+" 3", Render(inputerr.Field(f)+" 3"))
		assert.True(t, strings.HasPrefix(flag, "--"), f)
	}
	assert.Equal(t, "{A.B} 3", Render("{A.B} 3"), "a nested field without a flag stays")
}

// The notices a library writes to the log name fields; the user reads
// flags.
func TestRenderWriter(t *testing.T) {
	var b bytes.Buffer
	w := RenderWriter(&b)
	n, err := fmt.Fprintf(w, "nothing left to train: %s is trained through epoch %d, the {Epochs} asked for\n", "/w", 2)
	require.NoError(t, err)
	assert.Equal(t, len("nothing left to train: /w is trained through epoch 2, the {Epochs} asked for\n"), n, "the bytes given are the bytes written")
	fmt.Fprintln(w, "resuming after epoch 1 (checkpoint verified)")
	assert.Equal(t, "nothing left to train: /w is trained through epoch 2, the --epochs asked for\nresuming after epoch 1 (checkpoint verified)\n", b.String())
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/store"
)

// inputFiles writes a small knowledge graph as the issue describes it: a
// header line, ids with spaces, and a test file with edges whose node or
// relation the training edges lack.
func inputFiles(t *testing.T, dir string) (train, test string) {
	var b strings.Builder
	b.WriteString("subject\tpredicate\tobject\n")
	cities := []string{"New York", "Rio de Janeiro", "Hong Kong", "Cape Town"}
	for i := 0; i < 400; i++ {
		b.WriteString("person " + itoa(i%60) + "\tlives in\t" + cities[i%len(cities)] + "\n")
		b.WriteString("person " + itoa(i%60) + "\tknows\tperson " + itoa((i*7+1)%60) + "\n")
	}
	train = filepath.Join(dir, "train.tsv")
	require.NoError(t, os.WriteFile(train, []byte(b.String()), 0o644))
	test = filepath.Join(dir, "test.tsv")
	require.NoError(t, os.WriteFile(test, []byte("subject\tpredicate\tobject\n"+
		"person 1\tlives in\tNew York\n"+
		"person 2\tknows\tperson 3\n"+
		"person 99\tlives in\tHong Kong\n"+ // unseen node
		"person 4\tlives in\tAtlantis\n"+ // unseen node
		"person 5\tmarried to\tperson 6\n"), 0o644)) // unseen relation
	return train, test
}

// TestInputEndToEnd: a header is never trained, ids keep their spaces,
// unseen test edges are left out and counted — on stderr, in --json, in
// the manifest — and --unseen error refuses them in one line.
func TestInputEndToEnd(t *testing.T) {
	dir := t.TempDir()
	train, test := inputFiles(t, dir)
	work := filepath.Join(dir, "work")
	args := []string{"--edges", train, "--test", test, "--p", "2", "--c", "2", "--dim", "8", "--workers", "1",
		"--workdir", work, "--progress", "none", "--json"}
	out, errOut, code := runCmd(args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, train+`: first line read as a header, not an edge: src "subject", rel "predicate", dst "object" (--header no reads it as an edge)`)
	assert.Contains(t, errOut, test+": 3 of 5 test edges left out, not in the training graph: 2 with an unseen node, 1 with an unseen relation (--unseen error refuses them)")
	assert.Contains(t, errOut, "model complex:", "the relation column picks ComplEx")
	assert.Contains(t, errOut, "model complex: train.tsv has relations (--model to choose another)")
	assert.NotRegexp(t, `\{[A-Z]`, errOut, "the notes name flags, not fields")

	var got struct {
		Nodes      int64             `json:"nodes"`
		TrainEdges int64             `json:"train_edges"`
		InputFiles []store.InputFile `json:"input_files"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, int64(64), got.Nodes, "60 people and 4 cities; no header names")
	assert.Equal(t, int64(800), got.TrainEdges, "the header is no edge")
	require.Len(t, got.InputFiles, 2)
	assert.Equal(t, store.InputFile{Path: test, Split: "test", Delimiter: "tab", Header: []string{"subject", "predicate", "object"}, Columns: []int{1, 2, 3},
		Edges: 2, SkippedUnseenNode: 2, SkippedUnseenRelation: 1}, got.InputFiles[1])

	st, err := store.Open(work)
	require.NoError(t, err)
	assert.Equal(t, got.InputFiles, st.M.InputFiles, "the manifest keeps the counts for later runs")
	assert.Equal(t, int64(2), st.M.Test)
	ids, err := os.ReadFile(filepath.Join(work, "ids.tsv"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(ids), "0\tperson 0\n1\tNew York\n"), string(ids[:40]))
	rels, err := os.ReadFile(filepath.Join(work, "relations.tsv"))
	require.NoError(t, err)
	assert.Equal(t, "0\tlives in\n1\tknows\n", string(rels))

	// A later run on the same directory reports the counts from it.
	_, errOut, code = runCmd(append(args, "--overwrite")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "3 of 5 test edges left out")

	// Resumed with no more epochs than it has, it says so, naming the flag.
	_, errOut, code = runCmd(append(args, "--resume")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "is trained through epoch 1, the --epochs asked for (it counts the total: ask for more to train on)")
	assert.NotRegexp(t, `\{[A-Z]`, errOut, "the notes name flags, not fields")

	_, errOut, code = runCmd(append(args, "--unseen", "error", "--workdir", filepath.Join(dir, "strict"))...)
	assert.Equal(t, 2, code)
	assert.Equal(t, "realrun: "+test+`:4: unknown node id "person 99" (not in the training edges; --unseen skip leaves such edges out)`, strings.TrimSpace(lastLine(errOut)))
}

// TestInputFlagsIdentity: the input flags are part of the work directory's
// identity: a checkpoint built with another --header is named, not reused.
func TestInputFlagsIdentity(t *testing.T) {
	dir := t.TempDir()
	train, _ := inputFiles(t, dir)
	work := filepath.Join(dir, "work")
	args := []string{"--edges", train, "--p", "2", "--c", "2", "--dim", "8", "--workers", "1", "--eval", "none", "--workdir", work, "--progress", "none"}
	_, errOut, code := runCmd(args...)
	require.Equal(t, 0, code, errOut)
	_, errOut, code = runCmd(append(args, "--header", "no", "--resume")...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "trained with other settings: --header (none) (now no)")
	_, errOut, code = runCmd(append(args, "--header", "no", "--overwrite", "--json")...)
	require.Equal(t, 0, code, errOut)
	st, err := store.Open(work)
	require.NoError(t, err)
	assert.Equal(t, int64(66), st.M.Nodes, "--header no: the directory was rebuilt with the header as an edge")
	assert.Nil(t, st.M.InputFiles[0].Header)
	assert.Equal(t, "no", st.M.InputFormat["--header"])
}

func TestInputFlagErrors(t *testing.T) {
	dir := t.TempDir()
	train, _ := inputFiles(t, dir)
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"bad delimiter", []string{"--edges", train, "--delimiter", "pipe"}, `--delimiter "pipe": want auto, tab, comma or space`},
		{"columns from 0", []string{"--edges", train, "--columns", "0,1,2"}, "--columns 0,1,2: columns are numbered from 1, as cut -f numbers them"},
		{"columns by name not in the header", []string{"--edges", train, "--columns", "s,p,o"}, "--columns s,p,o names columns, but the first line, "},
		{"header without edges", []string{"--header", "yes"}, "--header: goes with --edges"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--progress", "none", "--p", "2", "--c", "2", "--workdir", filepath.Join(dir, "w")}, tt.args...)
			_, errOut, code := runCmd(args...)
			assert.Equal(t, 2, code, errOut)
			assert.Contains(t, errOut, tt.msg)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
		})
	}
}

package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/realrun/gnn/data"
)

func TestGenerate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cora")
	var out bytes.Buffer
	require.NoError(t, run([]string{"generate", "cora", dir, "--scale", "0.1", "--seed", "3"}, &out))
	assert.Contains(t, out.String(), "271 nodes")
	assert.Contains(t, out.String(), "1433 features, 7 classes")
	assert.Equal(t, 1, strings.Count(out.String(), "\n"))
	g, _, err := data.Load(data.DirFiles(dir))
	require.NoError(t, err)
	want, err := data.Generate("cora", 0.1, 3)
	require.NoError(t, err)
	assert.Equal(t, want, g)
}

func TestWordNet(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run([]string{"wordnet", "--wordnet", "../../../realrun/gnn/data/testdata/wordnet", dir}, &out))
	assert.Contains(t, out.String(), "7 nodes, 4 undirected edges (8 neighbour entries), 512 features, 4 classes, train/valid/test 1/1/5")
}

func TestHelp(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"generate", "--help"}, &out)
	assert.Equal(t, 0, cli.Exit(&bytes.Buffer{}, "gnngraph", err))
	assert.Contains(t, out.String(), "usage: gnngraph")
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string
	}{
		{nil, "usage: gnngraph"},
		{[]string{"draw"}, `unknown subcommand "draw"`},
		{[]string{"generate", "cora"}, "usage: gnngraph"},
		{[]string{"generate", "orkut", "d"}, `unknown dataset "orkut"`},
		{[]string{"generate", "cora", "d", "--scale", "2"}, "--scale 2: want 0 < F ≤ 1"},
		{[]string{"generate", "cora", "d", "--scale", "x"}, `invalid value "x" for flag --scale`},
		{[]string{"generate", "cora", "d", "--scale", "0.001"}, "leaves 3 nodes"},
		{[]string{"generate", "cora", "d", "--seed", "-1"}, `invalid value "-1" for flag --seed`},
		{[]string{"generate", "cora", "d", "--bogus"}, "unknown flag --bogus"},
		{[]string{"wordnet"}, "usage: gnngraph"},
		{[]string{"wordnet", "--wordnet", "/nonexistent", "d"}, "/nonexistent/data.noun"},
	} {
		err := run(c.args, &bytes.Buffer{})
		require.Error(t, err, c.args)
		assert.Contains(t, err.Error(), c.err)
		var stderr bytes.Buffer
		assert.Equal(t, cli.ExitUsage, cli.Exit(&stderr, "gnngraph", err), c.args)
		assert.Equal(t, 1, strings.Count(stderr.String(), "\n"))
	}
}

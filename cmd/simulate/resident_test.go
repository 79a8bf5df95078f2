package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResidentNodes: --resident-nodes takes N of the dataset's nodes out
// of the partitions into a resident table held beside the buffer: the
// JSON carries it (resident_nodes, resident_bytes, every result's
// resident_bytes, in its read and write bytes), the table says it in a
// line, the CSV has its column; without it nothing changes.
func TestResidentNodes(t *testing.T) {
	args := []string{"--p", "16", "--c", "4", "--orderings", "beta"}
	out, errOut, code := runCmd(append(args, "--json")...)
	require.Equal(t, 0, code, errOut)
	var plain Output
	require.NoError(t, json.Unmarshal([]byte(out), &plain))
	assert.Zero(t, plain.ResidentNodes)
	assert.NotContains(t, out, "resident_bytes")

	typedArgs := append(args, "--resident-nodes", "20000000")
	out, errOut, code = runCmd(append(typedArgs, "--json")...)
	require.Equal(t, 0, code, errOut)
	var typed Output
	require.NoError(t, json.Unmarshal([]byte(out), &typed))
	const table = 20_000_000 * 100 * 4 * 2
	assert.EqualValues(t, 20_000_000, typed.ResidentNodes)
	assert.EqualValues(t, table, typed.ResidentBytes)
	assert.EqualValues(t, (66_100_000+15)/16*100*8, typed.PartitionBytes, "partitions of the 66.1M partitioned nodes")
	r, p := typed.Results[0], plain.Results[0]
	assert.EqualValues(t, table, r.ResidentBytes)
	assert.Equal(t, p.Counts, r.Counts)
	parts := int64(r.Loads) * r.PartitionBytes
	assert.Equal(t, parts+table, r.ReadBytes)

	out, errOut, code = runCmd(typedArgs...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "ceil(66100000 partitioned nodes / 16)")
	assert.Contains(t, out, "resident: 20000000 nodes held in CPU memory beside the buffer: 16.000 GB")
	out, errOut, code = runCmd(args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "ceil(86100000 nodes / 16)")
	assert.NotContains(t, out, "resident")

	out, errOut, code = runCmd(append(typedArgs, "--csv")...)
	require.Equal(t, 0, code, errOut)
	assert.True(t, strings.HasSuffix(strings.SplitN(out, "\n", 2)[0], ",resident_bytes"))
	assert.Contains(t, strings.Split(out, "\n")[1], ",16000000000")
	out, _, _ = runCmd(append(args, "--csv")...)
	assert.NotContains(t, out, "resident")

	// A GPU buffer keeps the table in GPU memory.
	out, errOut, code = runCmd("--system", "ge2", "--device", "ge2-paper", "--p", "8", "--dataset", "fb15k", "--resident-nodes", "5000")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "resident: 5000 nodes held in GPU memory beside the buffer: 4.000 MB")
}

// TestResidentHistogram: a histogram file of a typed graph (the store's
// histogram.json records resident_nodes) describes its resident table.
func TestResidentHistogram(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "hist.json")
	require.NoError(t, os.WriteFile(hist, []byte(`{"p": 2, "edges": [[1, 2], [3, 4]], "nodes": 50, "resident_nodes": 10}`), 0o644))
	out, errOut, code := runCmd("--edges", hist, "--c", "2", "--orderings", "beta", "--dim", "10", "--json")
	require.Equal(t, 0, code, errOut)
	var got Output
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.EqualValues(t, 10, got.ResidentNodes)
	assert.EqualValues(t, 10*10*8, got.ResidentBytes)
	assert.EqualValues(t, 20*10*8, got.PartitionBytes, "40 partitioned nodes in 2 partitions")
}

func TestResidentBadInput(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "hist.json")
	require.NoError(t, os.WriteFile(hist, []byte(`{"p": 2, "edges": [[1, 2], [3, 4]], "nodes": 50, "resident_nodes": 60}`), 0o644))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--resident-nodes", "-1"}, "--resident-nodes"},
		{[]string{"--resident-nodes", "x"}, "--resident-nodes"},
		{[]string{"--resident-nodes", "86100000"}, "--resident-nodes"},
		{[]string{"--resident-nodes", "86099990", "--p", "32"}, "leaves 10 partitioned nodes of freebase86m for p = 32"},
		{[]string{"--edges", hist}, "60 resident nodes of 50"},
		{[]string{"sweep", "--resident-nodes", "-5"}, "--resident-nodes"},
	} {
		out, errOut, code := runCmd(tt.args...)
		assert.Equal(t, 2, code, "%v", tt.args)
		assert.Empty(t, out, "%v", tt.args)
		assert.Contains(t, errOut, tt.want, "%v", tt.args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%v: one line: %q", tt.args, errOut)
	}
	st := tinyWorkdir(t)
	_, errOut, code := runCmd("--graph", st.Dir, "--resident-nodes", "10")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--graph and --resident-nodes")
}

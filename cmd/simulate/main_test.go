package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func runCmd(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return o.String(), e.String(), code
}

func TestJSONShape(t *testing.T) {
	out, errOut, code := runCmd("--p", "32", "--c", "8", "--json")
	require.Equal(t, 0, code, errOut)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.EqualValues(t, 32, got["p"])
	assert.EqualValues(t, 8, got["c"])
	assert.EqualValues(t, 67, got["lower_bound_swaps"])
	results := got["results"].([]any)
	require.NotEmpty(t, results)
	beta := results[0].(map[string]any)
	for _, k := range []string{"ordering", "swaps", "loads", "writes", "final_writes", "read_bytes", "write_bytes", "prefetchable_swaps"} {
		assert.Contains(t, beta, k)
	}
	assert.Equal(t, "beta", beta["ordering"])
	assert.EqualValues(t, 78, beta["swaps"])
	assert.EqualValues(t, 86, beta["loads"])
	assert.EqualValues(t, 78, beta["writes"])
	assert.EqualValues(t, 8, beta["final_writes"])
	skipped := got["skipped"].([]any)
	names := []string{}
	for _, s := range skipped {
		names = append(names, s.(map[string]any)["ordering"].(string))
		assert.NotEmpty(t, s.(map[string]any)["reason"])
	}
	assert.ElementsMatch(t, []string{"cover", "legend"}, names)
}

func TestGoldenJSON(t *testing.T) {
	out, errOut, code := runCmd("--p", "16", "--c", "4", "--dataset", "twitter", "--json")
	require.Equal(t, 0, code, errOut)
	golden := filepath.Join("testdata", "p16_c4_twitter.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), out, "go test ./cmd/simulate -update regenerates")
}

func TestTableAndCSV(t *testing.T) {
	out, _, code := runCmd("--p", "16", "--c", "4")
	require.Equal(t, 0, code)
	for _, s := range []string{"beta", "hilbert-symmetric", "cover", "÷ lower bound", "lower bound 38 swaps", "not valid here: legend"} {
		assert.Contains(t, out, s)
	}
	out, _, code = runCmd("--p", "16", "--c", "4", "--csv", "--orderings", "beta,hilbert")
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3)
	assert.True(t, strings.HasPrefix(lines[0], "ordering,swaps,swaps_over_lower_bound,loads"))
	assert.True(t, strings.HasPrefix(lines[1], "beta,42,"))
}

func TestPlanFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	_, errOut, code := runCmd("--p", "8", "--c", "3", "--orderings", "legend", "--plan", path)
	require.Equal(t, 0, code, errOut)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	pl, err := orderings.ReadJSON(f)
	require.NoError(t, err)
	assert.Equal(t, "legend", pl.Ordering)
	assert.Len(t, pl.Buckets, 64)
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"c below 2", []string{"--c", "1"}, "--c 1"},
		{"c above p", []string{"--p", "4", "--c", "5"}, "exceeds p"},
		{"negative p", []string{"--p", "-3"}, "p must be at least 2"},
		{"huge p", []string{"--p", "100000", "--c", "2"}, "the limit is p"},
		{"non-numeric p", []string{"--p", "x"}, `invalid value "x" for flag --p`},
		{"non-numeric seed", []string{"--seed", "1.5"}, "flag --seed"},
		{"unknown ordering", []string{"--orderings", "beta,zigzag"}, `unknown ordering "zigzag"`},
		{"unknown policy", []string{"--policy", "mru"}, `unknown policy "mru"`},
		{"unknown dataset", []string{"--dataset", "orkut"}, `unknown dataset "orkut"`},
		{"zero dim", []string{"--dim", "0"}, "--dim 0"},
		{"json and csv", []string{"--json", "--csv"}, "mutually exclusive"},
		{"plan with several orderings", []string{"--plan", filepath.Join(dir, "x.json")}, "exactly one ordering"},
		{"plan into missing dir", []string{"--orderings", "beta", "--plan", filepath.Join(dir, "no", "x.json")}, "--plan"},
		{"stray argument", []string{"extra"}, "unexpected argument"},
		{"unknown flag", []string{"--q", "3"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCmd(tt.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "exactly one line: %q", errOut)
			assert.True(t, strings.HasPrefix(errOut, "simulate: "))
			assert.Contains(t, errOut, tt.msg)
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no output file may be left behind")
}

func TestHelp(t *testing.T) {
	out, _, code := runCmd("--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "-orderings")
}

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/internal/chrometrace"

	"github.com/tierflow/tierflow/orderings"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestMain lets a test run this binary as the simulate command: with
// TIERFLOW_AS_SIMULATE=1 it runs main on the arguments after "--".
func TestMain(m *testing.M) {
	cli.ChildMain("TIERFLOW_AS_SIMULATE", run)
	os.Exit(m.Run())
}

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
	for _, k := range []string{"epoch_seconds", "stall_seconds", "compute_seconds", "gpu_utilization", "bound_seconds"} {
		assert.Contains(t, beta, k)
	}
	assert.GreaterOrEqual(t, beta["epoch_seconds"].(float64), beta["bound_seconds"].(float64))
}

// TestDeterministicAcrossGOMAXPROCS runs the real command in a child
// process with different GOMAXPROCS and compares the JSON byte for byte.
func TestDeterministicAcrossGOMAXPROCS(t *testing.T) {
	var outs []string
	for _, procs := range []string{"1", "2", "8"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "--p", "16", "--c", "4", "--dataset", "twitter", "--edges", "skewed", "--json")
		cmd.Env = append(os.Environ(), "TIERFLOW_AS_SIMULATE=1", "GOMAXPROCS="+procs)
		out, err := cmd.Output()
		require.NoError(t, err)
		outs = append(outs, string(out))
	}
	assert.Equal(t, outs[0], outs[1])
	assert.Equal(t, outs[0], outs[2])
	assert.Contains(t, outs[0], `"epoch_seconds"`)
}

func TestSystemsAndPlot(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--system", "legend", "--device", "legend-a100", "--p", "16", "--dataset", "twitter"},
		{"--system", "ge2", "--device", "legend-a100", "--p", "16", "--orderings", "cover"},
		{"--system", "pbg", "--p", "8", "--orderings", "inside-out"},
		{"--system", "dglke", "--dataset", "livejournal"},
		{"--system", "in-gpu", "--dataset", "fb15k", "--device", "h100-nvme"},
		{"--system", "marius-inmem", "--dim", "50"},
		{"--no-prefetch", "--sync-writes", "--staleness", "4", "--batch", "10000", "--negatives", "100", "--model", "dot", "--edges", "skewed", "--skew", "1"},
	} {
		out, errOut, code := runCmd(append(args, "--plot", filepath.Join(dir, "x.png"))...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		assert.Regexp(t, `│ +epoch +│ +stall +│`, out, args)
		assert.NotContains(t, out, " 0.0 min", args)
	}
	st, err := os.Stat(filepath.Join(dir, "x.png"))
	require.NoError(t, err)
	assert.Positive(t, st.Size())
}

func TestHistogramEdges(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hist.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"p": 2, "edges": [[100000, 0], [0, 100000]]}`), 0o644))
	out, errOut, code := runCmd("--p", "2", "--c", "2", "--edges", path, "--orderings", "beta", "--json")
	require.Equal(t, 0, code, errOut)
	var got Output
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got.Results, 1)
	assert.Equal(t, 4, got.Results[0].Batches, "two buckets of 100,000 edges in batches of 50,000")
}

func TestGoldenJSON(t *testing.T) {
	out, errOut, code := runCmd("--p", "16", "--c", "4", "--dataset", "twitter", "--orderings", "beta,cover", "--json")
	require.Equal(t, 0, code, errOut)
	assertGolden(t, filepath.Join("testdata", "p16_c4_twitter.json"), out)
}

// assertGolden compares got with the golden file; -update rewrites it.
func assertGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got, "go test ./cmd/simulate -update regenerates")
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
	assert.Contains(t, errOut, "wrote "+path+" (", "the file written is announced")
}

// TestOrderingSeedPlan: simulate --ordering-seed (and --seed, the same
// flag) writes the Plan that the ordering's name and seed build — the one
// realrun --ordering-seed runs (cmd/realrun TestOrderingSeedAgreesWithSimulate)
// — and every output names the seed.
func TestOrderingSeedPlan(t *testing.T) {
	want, err := orderings.Build("beta", 8, 3, orderings.Belady, 3)
	require.NoError(t, err)
	for _, flag := range []string{"--ordering-seed", "--seed"} {
		path := filepath.Join(t.TempDir(), "plan.json")
		out, errOut, code := runCmd("--p", "8", "--c", "3", "--orderings", "beta", flag, "3", "--plan", path, "--json")
		require.Equal(t, 0, code, errOut)
		f, err := os.Open(path)
		require.NoError(t, err)
		got, err := orderings.ReadJSON(f)
		f.Close()
		require.NoError(t, err)
		assert.Equal(t, want.Buckets, got.Buckets, flag)
		assert.Equal(t, int64(3), got.Seed, flag)
		assert.Contains(t, out, `"ordering_seed": 3`, flag)
	}
	out, _, code := runCmd("--p", "8", "--c", "3", "--orderings", "beta", "--ordering-seed", "3")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "ordering seed 3", "the table's footer names the seed")
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
		{"negative p", []string{"--p", "-3"}, "--p -3: must be at least 1"},
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
		{"unknown system", []string{"--system", "graphvite"}, `unknown system "graphvite"`},
		{"unknown device", []string{"--device", "tpu-v9"}, `unknown device "tpu-v9"`},
		{"c fixed by design", []string{"--system", "legend", "--device", "legend-a100", "--c", "8"}, "buffer of 3 partitions by design"},
		{"no ssd path", []string{"--system", "legend", "--p", "16"}, "no such path"},
		{"negative batch", []string{"--batch", "-5"}, "--batch -5"},
		{"unknown model", []string{"--model", "transd"}, `unknown model "transd"`},
		{"missing histogram", []string{"--edges", filepath.Join(dir, "none.json")}, "--edges"},
		{"negative skew", []string{"--edges", "skewed", "--skew", "-1"}, "--skew"},
		{"plan for resident system", []string{"--system", "dglke", "--plan", filepath.Join(dir, "p.json")}, "has no Plan"},
		{"plot bad extension", []string{"--orderings", "beta", "--plot", filepath.Join(dir, "x.gif")}, "--plot"},
		{"unknown flag", []string{"--q", "3"}, "unknown flag --q (simulate --help lists them)"},
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

// TestTrace: simulate --trace writes one process per ordering that a
// viewer reads (chrometrace.Check), announced on stderr.
func TestTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.json")
	_, errOut, code := runCmd("--p", "8", "--c", "3", "--orderings", "beta,hilbert", "--trace", path)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "wrote "+path+" (")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, chrometrace.Check(data))
	assert.Contains(t, string(data), `"predicted: beta (marius on p3.2xlarge)"`)
	assert.Contains(t, string(data), `"predicted: hilbert (marius on p3.2xlarge)"`)

	// Capped, each process's name says where it was cut and by which flag.
	_, errOut, code = runCmd("--p", "8", "--c", "3", "--orderings", "beta", "--trace", path, "--trace-max-spans", "10")
	require.Equal(t, 0, code, errOut)
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, chrometrace.Check(data))
	assert.Regexp(t, `"predicted: beta \(marius on p3.2xlarge\) \(its first [0-9.]+ s of [0-9.]+ s: --trace-max-spans\)"`, string(data))
}

// TestSystemDescription: a system's description names realrun's flag
// (sim names the field: the command renders it), in simulate's JSON and
// simulate sweep's.
func TestSystemDescription(t *testing.T) {
	out, errOut, code := runCmd("--system", "realrun-cuda", "--p", "8", "--c", "3", "--orderings", "beta", "--json")
	require.Equal(t, 0, code, errOut)
	var got Output
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Contains(t, got.System.Description, "tierflow's CUDA engine, --buffer gpu: ")

	out, errOut, code = runCmd("sweep", "--system", "realrun-cuda-host", "--p", "8", "--c", "3", "--orderings", "beta", "--json")
	require.Equal(t, 0, code, errOut)
	var swept SweepOutput
	require.NoError(t, json.Unmarshal([]byte(out), &swept))
	assert.Contains(t, swept.System.Description, "tierflow's CUDA engine, --buffer host: ")
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/cmd/internal/cli/clitest"
	"github.com/tierflow/tierflow/plots"
)

// TestHelpIsGrouped walks realrun's --help and every subcommand's.
func TestHelpIsGrouped(t *testing.T) {
	walked := clitest.WalkHelp(t, func(args []string) (string, int) {
		out, _, code := runCmd(args...)
		return out, code
	})
	assert.Equal(t, [][]string{nil, {"calibrate"}, {"trainer"}, {"etcd-member"}, {"gnn"}, {"eval"}, {"export"}, {"neighbors"}, {"predict"}}, walked)
}

// TestExampleConfigs: every realrun configuration under configs/ is
// accepted by job.Configure (--print-config checks it); an edge file's
// paths are given on the command line, which wins.
func TestExampleConfigs(t *testing.T) {
	files, err := filepath.Glob("../../configs/*.yaml")
	require.NoError(t, err)
	dir := t.TempDir()
	edges := filepath.Join(dir, "e.tsv")
	require.NoError(t, os.WriteFile(edges, []byte("a r b\nb r c\nc r a\n"), 0o644))
	n := 0
	for _, f := range files {
		if base := filepath.Base(f); strings.HasPrefix(base, "simulate-") || strings.HasPrefix(base, "sweep-") {
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			args := []string{"--config", f, "--print-config", "--workdir", filepath.Join(dir, "w")}
			if strings.Contains(f, "edges") {
				args = append(args, "--edges", edges, "--valid", edges, "--test", edges, "--export", filepath.Join(dir, "e.npy"))
			}
			out, errOut, code := runCmd(args...)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, out, "workdir: ")
		})
	}
	assert.Equal(t, 4, n, "twitter, freebase86m, fb15k-complex and my-edges")
}

// TestConfigRoundTrip: a run's flags, written into its work directory as
// run.yaml, repeat it: --config run.yaml gives the same configuration, and
// its settings are the work directory's own (--resume accepts them). The
// narrow table fits 100 columns and shows the loss per edge.
func TestConfigRoundTrip(t *testing.T) {
	dir := t.TempDir()
	wd := filepath.Join(dir, "work")
	args := []string{"--dataset", "twitter", "--scale", "0.0002", "--p", "4", "--c", "2", "--dim", "8", "--lr", "0.05", "--degree-frac", "0.25",
		"--ordering", "hilbert", "--eval-protocol", "sampled", "--eval-edges", "500", "--duplicates", "sum", "--workdir", wd, "--progress", "none"}
	want, errOut, code := runCmd(append(args, "--print-config")...)
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, want, "progress", "how results are shown is not part of the run")
	assert.Contains(t, want, "duplicates: sum")

	out, errOut, code := runCmd(args...)
	require.Equal(t, 0, code, errOut)
	assert.LessOrEqual(t, plots.Width(tableOf(out)), 100, out)
	assert.Contains(t, out, "loss/edge")
	assert.NotContains(t, out, "compute s", "--wide only")
	wide, errOut, code := runCmd(append(args, "--wide", "--overwrite")...)
	require.Equal(t, 0, code, errOut)
	for _, h := range []string{"compute", "loads", "write MB", "Hits@1", "protocol", "eval"} {
		assert.Contains(t, wide, h)
	}

	runYAML := filepath.Join(wd, RunYAML)
	data, err := os.ReadFile(runYAML)
	require.NoError(t, err)
	body := func(s string) string { // the YAML without its comment lines
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "#") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	assert.Equal(t, body(want), body(string(data)), "run.yaml holds what --print-config printed")
	assert.Contains(t, string(data), "workdir: "+wd)
	assert.NotContains(t, body(string(data)), "overwrite", "one-shot actions are left out")

	again, errOut, code := runCmd("--config", runYAML, "--print-config")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, body(want), body(again), "flags → run.yaml → --config gives the same flags")

	// The work directory accepts run.yaml's settings as its own: resumed,
	// not refused for other settings; flags given win over the file.
	out, errOut, code = runCmd("--config", runYAML, "--resume", "--epochs", "2", "--progress", "none")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "hilbert order")
	assert.Equal(t, 1, strings.Count(tableOf(out), "\n│     2 │"), "only epoch 2 was trained")
	data, err = os.ReadFile(runYAML)
	require.NoError(t, err)
	assert.Contains(t, string(data), "epochs: 2", "run.yaml follows the last run")
	assert.NotContains(t, body(string(data)), "resume")

	// Another setting in the file is refused by the work directory.
	changed := filepath.Join(dir, "changed.yaml")
	require.NoError(t, os.WriteFile(changed, []byte(strings.Replace(string(data), "lr: 0.05", "lr: 0.07", 1)), 0o644))
	_, errOut, code = runCmd("--config", changed, "--resume", "--epochs", "3")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--lr")
}

// tableOf is the boxed table at the start of out.
func tableOf(out string) string {
	end := strings.Index(out, "┘")
	if end < 0 {
		return ""
	}
	return out[:end+len("┘")]
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, file, msg string }{
		{"unknown key", "dataset: twitter\npartitions: 8\n", `unknown key "partitions": realrun has no flag --partitions`},
		{"bad value", "p: many\n", `key p: bad value "many"`},
		{"bad duration", "lease: soon\n", `key lease: bad value "soon"`},
		{"a value the run refuses", "p: 4\nc: 9\n", "--p 4 --c 9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o644))
			out, errOut, code := runCmd("--config", path, "--print-config")
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, tc.msg)
		})
	}
}

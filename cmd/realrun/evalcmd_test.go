package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun"
)

// TestEvalAndExportWorkdir: a trained work directory evaluates without
// training to the MRR training's last evaluation measured, within a
// budget of one partition too, and exports what training's --export
// wrote; bad input is one line and exit status 2.
func TestEvalAndExportWorkdir(t *testing.T) {
	dir := t.TempDir()
	work, npy := filepath.Join(dir, "work"), filepath.Join(dir, "train.npy")
	out, errOut, code := runCmd("--dataset", "fb15k", "--scale", "0.05", "--model", "complex", "--p", "3", "--c", "2", "--dim", "8",
		"--epochs", "2", "--workers", "1", "--workdir", work, "--progress", "lines", "--export", npy, "--json")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "evaluating valid after epoch 1: ranking 3/3 partitions")
	assert.Contains(t, errOut, "evaluating test after epoch 2: ranking 3/3 partitions")
	var trained Output
	require.NoError(t, json.Unmarshal([]byte(out), &trained))
	require.Len(t, trained.Epochs, 2)
	assert.Nil(t, trained.Epochs[0].Test)
	require.NotNil(t, trained.Epochs[1].Test)
	require.NotNil(t, trained.Epochs[1].Valid)

	// One partition's budget (plus the small working set) is enough.
	for _, budget := range []string{"", "700kB"} {
		args := []string{"eval", work, "--json", "--progress", "none"}
		if budget != "" {
			args = append(args, "--eval-memory", budget)
		}
		out, errOut, code = runCmd(args...)
		require.Equal(t, 0, code, errOut)
		var ev struct {
			Checkpoint string
			Quality    realrun.Quality
		}
		require.NoError(t, json.Unmarshal([]byte(out), &ev))
		assert.Equal(t, "epoch 2", ev.Checkpoint)
		assert.Equal(t, "test", ev.Quality.Split)
		assert.Equal(t, trained.Epochs[1].Test.MRR, ev.Quality.MRR, "budget %q", budget)
	}
	out, errOut, code = runCmd("eval", work, "--split", "valid", "--csv", "--progress", "none")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, "checkpoint,split,protocol,edges,mrr,hits_at_1,hits_at_3,hits_at_10,random_mrr,eval_seconds", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "epoch 2,valid,filtered,"), lines[1])
	out, _, code = runCmd("eval", work, "--progress", "none")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "Hits@10")
	assert.Contains(t, out, "filtered ranking of")

	// Export: npy equal to training's --export; tsv and relations.
	again := filepath.Join(dir, "again.npy")
	_, errOut, code = runCmd("export", work, "--out", again, "--relations", filepath.Join(dir, "rel.npy"), "--format", "npy")
	require.Equal(t, 0, code, errOut)
	a, err := os.ReadFile(npy)
	require.NoError(t, err)
	b, err := os.ReadFile(again)
	require.NoError(t, err)
	assert.Equal(t, a, b, "realrun export writes what training's --export wrote")
	tsv := filepath.Join(dir, "emb.tsv")
	out, errOut, code = runCmd("export", work, "--out", tsv, "--relations", filepath.Join(dir, "rel.tsv"), "--json")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"format": "tsv"`)
	data, err := os.ReadFile(tsv)
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSpace(string(data)), "\n")
	assert.Len(t, rows, int(trained.Nodes))
	assert.True(t, strings.HasPrefix(rows[0], "0\t"), "a generated graph's nodes are named by number, in id order")
	assert.Len(t, strings.Fields(strings.SplitN(rows[5], "\t", 2)[1]), 8)
	rel, err := os.ReadFile(filepath.Join(dir, "rel.tsv"))
	require.NoError(t, err)
	assert.Equal(t, 8, len(strings.Fields(strings.SplitN(strings.Split(string(rel), "\n")[0], "\t", 2)[1])))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), "."), "temporary %s left behind", e.Name())
	}

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"not a work directory", []string{"eval", dir}, "not a work directory"},
		{"missing", []string{"eval", filepath.Join(dir, "nope")}, "not a work directory"},
		{"no directory", []string{"eval", "--json"}, "give the work directory first"},
		{"bad split", []string{"eval", work, "--split", "train"}, "--split: split \"train\": want test or valid"},
		{"budget too small", []string{"eval", work, "--eval-memory", "1kB"}, "raise --eval-memory to at least"},
		{"bad budget", []string{"eval", work, "--eval-memory", "lots"}, "--eval-memory"},
		{"export without --out", []string{"export", work}, "--out FILE is required"},
		{"export bad format", []string{"export", work, "--out", filepath.Join(dir, "x.bin"), "--format", "parquet"}, "--format \"parquet\""},
	} {
		_, errOut, code := runCmd(tt.args...)
		assert.Equal(t, 2, code, tt.name)
		assert.Contains(t, errOut, tt.want, tt.name)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%s: one line: %s", tt.name, errOut)
	}
}

// TestSkippedEvaluationIsADash: an epoch not evaluated prints "—" in the
// table, an empty CSV cell and JSON null, never 0.000.
func TestSkippedEvaluationIsADash(t *testing.T) {
	epochs := []realrun.Epoch{{Epoch: 1, LossPerEdge: 1.5}, {Epoch: 2, LossPerEdge: 1.25, Test: &realrun.Quality{MRR: 0.25, Split: "test", Mode: "filtered"}, EvalProtocol: "filtered"}}
	var human, csv strings.Builder
	require.NoError(t, epochColumns.Human(epochs).Render(&human))
	require.NoError(t, epochColumns.CSV(epochs).CSV(&csv))
	lines := strings.Split(human.String(), "\n")
	var first, second string
	for _, l := range lines {
		f := strings.Fields(strings.Trim(l, "│| "))
		if len(f) > 0 && f[0] == "1" {
			first = l
		}
		if len(f) > 0 && f[0] == "2" {
			second = l
		}
	}
	assert.Contains(t, first, "—")
	assert.NotContains(t, first, "0.000")
	assert.Contains(t, second, "0.250")
	rows := strings.Split(strings.TrimSpace(csv.String()), "\n")
	header := strings.Split(rows[0], ",")
	cells := strings.Split(rows[1], ",")
	for i, h := range header {
		if strings.HasPrefix(h, "valid_") || strings.HasPrefix(h, "test_") {
			assert.Empty(t, cells[i], h)
		}
	}
	data, err := json.Marshal(epochs[0])
	require.NoError(t, err)
	assert.Contains(t, string(data), `"valid":null,"test":null`)
}

// TestETA: the estimate is the rate since the epoch's first report times
// the buckets left, and none before a second report.
func TestETA(t *testing.T) {
	now := time.Unix(0, 0)
	e := eta{now: func() time.Time { return now }}
	_, ok := e.left(1, 2, 20)
	assert.False(t, ok)
	now = now.Add(10 * time.Second)
	left, ok := e.left(1, 4, 20)
	require.True(t, ok)
	assert.Equal(t, 80*time.Second, left)
	assert.Equal(t, "1m20s", formatETA(left, ok))
	_, ok = e.left(2, 1, 20)
	assert.False(t, ok, "a new epoch starts a new estimate")
	assert.Equal(t, "—", formatETA(0, false))
	assert.Equal(t, "2h05m", formatETA(125*time.Minute, true))
}

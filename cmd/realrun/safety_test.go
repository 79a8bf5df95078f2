package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/store"
)

// writeGraph writes a small graph's edges to path: n lines "src dst" over
// 150 nodes, shifted by off.
func writeGraph(t *testing.T, path string, n, off int) {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(itoa((i+off)%150) + " " + itoa((i*11+5+off)%150) + "\n")
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
}

// checkpointIntact asserts that work's current checkpoint is after epoch
// epochs and that every kept checkpoint verifies.
func checkpointIntact(t *testing.T, work string, epochs int) {
	t.Helper()
	st, err := store.Open(work)
	require.NoError(t, err)
	assert.Equal(t, epochs, st.Current, "the checkpoint is still the current one")
	kept, err := st.Checkpoints()
	require.NoError(t, err)
	require.NotEmpty(t, kept)
	for _, c := range kept {
		assert.NoError(t, st.VerifyCheckpoint(c), c.Dir)
	}
}

// TestRerunWithoutResumeIsRefused: training again on a work directory
// that holds a checkpoint, without --resume, is refused with exit 2 and
// one line naming the ways on, and the checkpoint survives (it used to be
// replaced by a fresh one, exit 0); --resume continues it and --overwrite
// starts over. The two newest checkpoints are kept.
func TestRerunWithoutResumeIsRefused(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	npy := filepath.Join(dir, "emb.npy")
	_, errOut, code := runCmd(smallRun(work, npy, 2)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "wrote "+npy+" (", "every file written is announced")
	assert.DirExists(t, filepath.Join(work, "ckpt-0001"), "the checkpoint before the last is kept")
	assert.DirExists(t, filepath.Join(work, "ckpt-0002"))

	_, errOut, code = runCmd(smallRun(work, npy, 1)...)
	assert.Equal(t, 2, code, errOut)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	assert.Contains(t, errOut, "holds a checkpoint after epoch 2: --resume continues it, --overwrite starts over")
	checkpointIntact(t, work, 2)

	_, errOut, code = runCmd(smallRun(work, npy, 3, "--resume")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "resuming after epoch 2")
	checkpointIntact(t, work, 3)

	_, errOut, code = runCmd(smallRun(work, npy, 1, "--overwrite")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "--overwrite: starting over")
	checkpointIntact(t, work, 1)
}

// TestResumeWithChangedSettingsIsRefused: --resume with any setting the
// checkpoint depends on changed is refused with exit 2, naming the
// setting with its old and new values; it used to retrain from scratch
// over the old checkpoint without a word.
func TestResumeWithChangedSettingsIsRefused(t *testing.T) {
	dir := t.TempDir()
	edges, test, other := filepath.Join(dir, "train.tsv"), filepath.Join(dir, "test.tsv"), filepath.Join(dir, "test2.tsv")
	writeGraph(t, edges, 3000, 0)
	writeGraph(t, test, 100, 7)
	writeGraph(t, other, 100, 9)
	work := filepath.Join(dir, "work")
	base := func(extra ...string) []string {
		return append([]string{"--edges", edges, "--test", test, "--p", "4", "--c", "2", "--dim", "16", "--workers", "1",
			"--progress", "none", "--workdir", work, "--epochs", "2"}, extra...)
	}
	_, errOut, code := runCmd(base()...)
	require.Equal(t, 0, code, errOut)
	for _, tc := range []struct{ flag, value, names string }{
		{"--dim", "32", "--dim 16 (now 32)"},
		{"--p", "8", "--p 4 (now 8)"},
		{"--c", "3", "--c 2 (now 3)"},
		{"--model", "distmult", "--model dot (now distmult)"},
		{"--seed", "2", "--seed 1 (now 2)"},
		{"--test", other, "--test " + test},
		{"--ordering", "hilbert", "--ordering beta (now hilbert)"},
		{"--ordering-seed", "3", "--ordering-seed 0 (now 3)"},
		{"--lr", "0.2", "--lr 0.1 (now 0.2)"},
		{"--negatives", "20", "--negatives 100 (now 20)"},
		{"--duplicates", "sum", "--duplicates (none) (now sum)"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			_, errOut, code := runCmd(append(base("--epochs", "3", "--resume"), tc.flag, tc.value)...)
			assert.Equal(t, 2, code, errOut)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, "--resume: "+work+" holds a checkpoint after epoch 2 trained with other settings: ")
			assert.Contains(t, errOut, tc.names)
			assert.Contains(t, errOut, "start over with --overwrite or another --workdir")
			checkpointIntact(t, work, 2)
		})
	}
	// Changing what may change — epochs, workers, evaluation — resumes.
	_, errOut, code = runCmd(base("--resume", "--epochs", "3", "--workers", "2", "--eval", "none")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "resuming after epoch 2")
}

// TestDefaultWorkdirPerInput: two edge files with the same base name in
// different folders train in different default work directories (they
// used to share /tmp/tierflow-train.tsv, the second wiping the first's
// checkpoint).
func TestDefaultWorkdirPerInput(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(dir, "tmp"))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "tmp"), 0o755))
	x, y := filepath.Join(dir, "X", "train.tsv"), filepath.Join(dir, "Y", "train.tsv")
	writeGraph(t, x, 2000, 0)
	writeGraph(t, y, 2000, 3)
	workdirOf := func(edges string) string {
		out, errOut, code := runCmd("--edges", edges, "--p", "4", "--c", "2", "--dim", "8", "--workers", "1", "--progress", "none", "--json")
		require.Equal(t, 0, code, errOut)
		var got struct {
			Workdir string `json:"workdir"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		return got.Workdir
	}
	wx, wy := workdirOf(x), workdirOf(y)
	assert.NotEqual(t, wx, wy)
	assert.Contains(t, filepath.Base(wx), "train.tsv")
	checkpointIntact(t, wx, 1)
	checkpointIntact(t, wy, 1)
}

// TestOrderingSeedAgreesWithSimulate: the same ordering name and ordering
// seed give the same Plan in simulate and realrun — bucket for bucket —
// and realrun's seed is its own flag (it used to take the data seed: BETA
// with seed 1 against simulate's 0, first bucket (3,0) against (0,0)).
// The JSON names the ordering seed, and the Plan file when one is given.
func TestOrderingSeedAgreesWithSimulate(t *testing.T) {
	dir := t.TempDir()
	for _, seed := range []int64{0, 3} {
		want, err := orderings.Build("beta", 8, 3, orderings.Belady, seed)
		require.NoError(t, err)
		args := []string{"--dataset", "twitter", "--scale", "0.0002", "--p", "8", "--c", "3", "--dim", "8", "--workers", "1",
			"--progress", "none", "--eval", "none", "--workdir", filepath.Join(dir, itoa(int(seed))), "--json"}
		if seed != 0 {
			args = append(args, "--ordering-seed", itoa(int(seed)))
		}
		out, errOut, code := runCmd(args...)
		require.Equal(t, 0, code, errOut)
		var got struct {
			OrderingSeed int64 `json:"ordering_seed"`
			Epochs       []struct {
				OrderingSeed int64 `json:"ordering_seed"`
				Buckets      []struct{ Src, Dst int }
			}
		}
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		assert.Equal(t, seed, got.OrderingSeed)
		require.Len(t, got.Epochs, 1)
		assert.Equal(t, seed, got.Epochs[0].OrderingSeed)
		require.Len(t, got.Epochs[0].Buckets, len(want.Buckets))
		for k, b := range want.Buckets {
			assert.Equal(t, [2]int{b.Src, b.Dst}, [2]int{got.Epochs[0].Buckets[k].Src, got.Epochs[0].Buckets[k].Dst}, "bucket %d, ordering seed %d", k, seed)
		}
	}
}

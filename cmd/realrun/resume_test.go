package main

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// snapshot is every file under dir by path: its mode and content hash.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = fi.Mode().String() + " " + fmt.Sprintf("%x", sha256.Sum256(data))
		return nil
	}))
	return out
}

// TestResumeFewerEpochsIsRefused: --resume with --epochs below the
// epochs the work directory is trained through is one line saying that
// --epochs counts the total, exit 2, and nothing in the directory
// changes (it printed an empty table, exited 0 and rewrote run.yaml).
// Exactly as many resume with nothing to train, saying so (a run stopped
// in its export resumes as it said).
func TestResumeFewerEpochsIsRefused(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	npy := filepath.Join(dir, "emb.npy")
	_, errOut, code := runCmd(smallRun(work, npy, 3, "--eval-every", "2")...)
	require.Equal(t, 0, code, errOut)
	runYAML, err := os.ReadFile(filepath.Join(work, RunYAML))
	require.NoError(t, err)
	before := snapshot(t, work)
	for _, epochs := range []int{1, 2} {
		t.Run(itoa(epochs), func(t *testing.T) {
			out, errOut, code := runCmd(smallRun(work, npy, epochs, "--resume")...)
			assert.Equal(t, 2, code, errOut)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, "--epochs "+itoa(epochs)+": "+work+" is trained through epoch 3; --epochs counts the total, not the epochs to add: ask for more than 3 to continue (--epochs 4 trains one more), or start over with --overwrite")
			after, err := os.ReadFile(filepath.Join(work, RunYAML))
			require.NoError(t, err)
			assert.Equal(t, string(runYAML), string(after), "run.yaml is byte-identical")
			assert.Equal(t, before, snapshot(t, work), "nothing in the work directory changed")
			checkpointIntact(t, work, 3)
		})
	}
	require.NoError(t, os.Remove(npy))
	_, errOut, code = runCmd(smallRun(work, npy, 3, "--resume")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "nothing left to train: "+work+" is trained through epoch 3")
	assert.FileExists(t, npy, "the export is written again")
	checkpointIntact(t, work, 3)
}

// TestResumeKeepsRunYAML: a resumed run rewrites run.yaml with the
// epochs it trains to, and keeps every setting of the run it continues
// that its own command line leaves out (a resume with fewer flags used
// to drop them: --eval-every, --keep-checkpoints, --export, …); a flag
// given again, even at its default, wins.
func TestResumeKeepsRunYAML(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	npy := filepath.Join(dir, "emb.npy")
	_, errOut, code := runCmd(smallRun(work, npy, 1, "--eval-every", "2", "--keep-checkpoints", "3", "--eval-protocol", "sampled")...)
	require.Equal(t, 0, code, errOut)
	first, err := os.ReadFile(filepath.Join(work, RunYAML))
	require.NoError(t, err)
	for _, want := range []string{"eval-every: 2", "keep-checkpoints: 3", "eval-protocol: sampled", "export: " + npy, "workers: 1"} {
		require.Contains(t, string(first), want)
	}
	// The resume names the data and layout, not the rest; --eval-every is
	// given at its default.
	_, errOut, code = runCmd("--dataset", "livejournal", "--scale", "0.0005", "--p", "4", "--c", "2", "--dim", "8", "--workdir", work,
		"--epochs", "2", "--resume", "--progress", "none", "--eval-every", "1")
	require.Equal(t, 0, code, errOut)
	got, err := os.ReadFile(filepath.Join(work, RunYAML))
	require.NoError(t, err)
	assert.Equal(t, strings.NewReplacer("dim: 8\n", "dim: 8\nepochs: 2\n", "eval-every: 2\n", "").Replace(string(first)), string(got))
}

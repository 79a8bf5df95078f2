package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/cpu"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/workload"
)

// smallFS mounts an 8 MB tmpfs for the test, or skips it saying why.
func smallFS(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	require.NoError(t, os.Mkdir(dir, 0o755))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root and mount): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// fill leaves about free bytes on dir's file system.
func fill(t *testing.T, dir string, free int64) string {
	t.Helper()
	var fs syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &fs))
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	n := int64(fs.Bavail)*int64(fs.Bsize) - free
	chunk := make([]byte, 1<<16)
	for ; n > 0; n -= int64(len(chunk)) {
		_, err := f.Write(chunk[:min(n, int64(len(chunk)))])
		require.NoError(t, err)
	}
	return path
}

// TestDiskFull fills a small file system during a partition write-back, a
// checkpoint and an export: each stops the run with one line naming the
// path and the bytes needed, the previous checkpoint stays current and
// verifies, and resuming after freeing space ends with the embeddings of
// an uninterrupted run.
func TestDiskFull(t *testing.T) {
	want := reference(t, t.TempDir(), 3)
	small := smallFS(t)
	work, got := filepath.Join(small, "work"), filepath.Join(small, "got.npy")
	_, errOut, code := runCmd(smallRun(work, got, 1)...)
	require.Equal(t, 0, code, errOut)
	// The resumed runs below would be refused up front (a resumed run
	// checks its free space): the disk fills during them on purpose.
	workdir.CheckSpace = false
	t.Cleanup(func() { workdir.CheckSpace = true })
	st, err := store.Open(work)
	require.NoError(t, err)
	part := st.M.PartitionBytes
	for _, tc := range []struct {
		name  string
		free  int64
		extra []string
		path  string
	}{
		{"partition write-back", part / 2, nil, "part-"},
		// The loader issues a load that a finished bucket frees (and its
		// eviction's write-back) before the checkpoint after that bucket
		// pauses it (orderings/executor), so the checkpoints write the
		// partitions still resident: 1.5 partitions free fill during one.
		{"checkpoint inside an epoch", 3 * part / 2, []string{"--checkpoint-every", "1b"}, "checkpoint inside epoch 2: disk full writing "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			filler := fill(t, small, tc.free)
			before, err := os.ReadFile(filepath.Join(work, "CURRENT"))
			require.NoError(t, err)
			_, errOut, code := runCmd(append(smallRun(work, got, 3, "--resume"), tc.extra...)...)
			assert.Equal(t, 1, code, errOut)
			errOut = lastLine(errOut) // after the "resuming" notice
			assert.Contains(t, errOut, "disk full writing "+small)
			assert.Contains(t, errOut, tc.path)
			assert.Contains(t, errOut, "bytes needed")
			after, err := os.ReadFile(filepath.Join(work, "CURRENT"))
			require.NoError(t, err)
			if tc.extra == nil {
				assert.Equal(t, string(before), string(after), "the previous checkpoint stays current")
			}
			verify(t, work)
			require.NoError(t, os.Remove(filler))
		})
	}
	// The export: training is done, the embeddings do not fit.
	_, errOut, code = runCmd(smallRun(work, got, 3, "--resume")...)
	require.Equal(t, 0, code, errOut)
	require.NoError(t, os.Remove(got))
	filler := fill(t, small, 4096)
	_, errOut, code = runCmd(smallRun(work, got, 3, "--resume")...)
	assert.Equal(t, 1, code, errOut)
	assert.Contains(t, lastLine(errOut), "disk full writing "+got)
	verify(t, work)
	require.NoError(t, os.Remove(filler))
	_, errOut, code = runCmd(smallRun(work, got, 3, "--resume")...)
	require.Equal(t, 0, code, errOut)
	have, err := os.ReadFile(got)
	require.NoError(t, err)
	assert.Equal(t, want, have, "embeddings after disk-full stops and resumes differ from an uninterrupted run")
}

// verify checks every file of the work directory's current checkpoint.
func verify(t *testing.T, work string) {
	t.Helper()
	st, err := store.Open(work)
	require.NoError(t, err)
	deg, err := st.Degrees()
	require.NoError(t, err)
	h := realrun.Hyper{Training: workload.Training{Model: workload.Model(st.M.Model), Dim: st.M.Dim, Batch: 1, Negatives: 1}, Workers: 1}
	_, err = realrun.Resume(st, cpu.New(h, st, deg, 1))
	assert.NoError(t, err, "the current checkpoint verifies")
}

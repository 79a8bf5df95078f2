package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readOnlyParent makes a directory nothing can be created in, holding
// one writable, empty directory "work", and returns both. As root (who
// bypasses permissions) the parent is made immutable (chattr +i: no entry
// may be added, removed or renamed in it, by root too); otherwise it is
// made 0555. It skips the test, saying why, only when neither works.
func readOnlyParent(t *testing.T) (parent, work string) {
	t.Helper()
	parent = filepath.Join(t.TempDir(), "ro")
	work = filepath.Join(parent, "work")
	require.NoError(t, os.MkdirAll(work, 0o755))
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", "+i", parent).CombinedOutput(); err != nil {
			t.Skipf("cannot make a read-only parent as root (chattr +i %s: %v %s)", parent, err, out)
		}
		t.Cleanup(func() { exec.Command("chattr", "-i", parent).Run() })
	} else {
		require.NoError(t, os.Chmod(parent, 0o555))
		t.Cleanup(func() { os.Chmod(parent, 0o755) })
	}
	if f, err := os.Create(filepath.Join(parent, "probe")); err == nil {
		f.Close()
		os.Remove(f.Name())
		t.Skipf("%s is still writable", parent)
	}
	return parent, work
}

// TestWorkdirInReadOnlyParent: a writable work directory in a parent
// nothing can be written to trains, resumes, evaluates and exports, and
// nothing is written beside it (its lock file was: the parent had to be
// writable, and the directory was built under a temporary name there).
func TestWorkdirInReadOnlyParent(t *testing.T) {
	parent, work := readOnlyParent(t)
	npy := filepath.Join(t.TempDir(), "emb.npy")
	_, errOut, code := runCmd(smallRun(work, npy, 1)...)
	require.Equal(t, 0, code, errOut)
	checkpointIntact(t, work, 1)
	_, errOut, code = runCmd(smallRun(work, npy, 2, "--resume")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "resuming after epoch 1")
	checkpointIntact(t, work, 2)
	_, errOut, code = runCmd(smallRun(work, npy, 1, "--overwrite")...)
	require.Equal(t, 0, code, errOut, "a rebuild fills the directory in place")
	checkpointIntact(t, work, 1)
	_, errOut, code = runCmd("eval", work, "--progress", "none")
	require.Equal(t, 0, code, errOut)
	_, errOut, code = runCmd("export", work, "--out", filepath.Join(t.TempDir(), "e.tsv"))
	require.Equal(t, 0, code, errOut)
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing beside the work directory")
	entries, err = os.ReadDir(work)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), "."), "%s left in the work directory", e.Name())
	}
}

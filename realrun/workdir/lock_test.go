package workdir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLockInsideWorkdir: the lock file is inside the work directory; a
// second lock on it is refused naming this process; a directory the lock
// made is gone again after a release when nothing was put in it; a
// folder that is not a work directory is refused untouched.
func TestLockInsideWorkdir(t *testing.T) {
	parent := t.TempDir()
	tests := []struct {
		name    string
		setup   func(dir string)
		err     error
		remains bool // the directory is there after the release
	}{
		{name: "not there yet", setup: func(string) {}, remains: false},
		{name: "empty", setup: func(dir string) { require.NoError(t, os.Mkdir(dir, 0o755)) }, remains: true},
		{name: "a work directory", setup: func(dir string) {
			require.NoError(t, os.Mkdir(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.json"), []byte("{}"), 0o644))
		}, remains: true},
		{name: "an unfinished build", setup: func(dir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ".building-123"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "perm.bin"), nil, 0o644))
		}, remains: true},
		{name: "somebody's folder", setup: func(dir string) {
			require.NoError(t, os.Mkdir(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "thesis.tex"), nil, 0o644))
		}, err: ErrNotWorkdir, remains: true},
		{name: "a file", setup: func(dir string) { require.NoError(t, os.WriteFile(dir, nil, 0o644)) }, err: ErrNotWorkdir, remains: true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(parent, strconv.Itoa(i), "work")
			require.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o755))
			tc.setup(dir)
			before, _ := os.ReadDir(dir)
			unlock, err := LockWorkdir(dir)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				after, _ := os.ReadDir(dir)
				assert.Equal(t, before, after, "nothing written into it")
				return
			}
			require.NoError(t, err)
			data, err := os.ReadFile(filepath.Join(dir, ".lock"))
			require.NoError(t, err, "the lock is inside the work directory")
			assert.Equal(t, strconv.Itoa(os.Getpid())+"\n", string(data))
			beside, err := os.ReadDir(filepath.Dir(dir))
			require.NoError(t, err)
			assert.Len(t, beside, 1, "nothing beside the work directory")
			_, err = LockWorkdir(dir)
			assert.True(t, errors.Is(err, ErrLocked), "a second lock is refused: %v", err)
			assert.ErrorContains(t, err, "used by process "+strconv.Itoa(os.Getpid()))
			unlock()
			assert.NoFileExists(t, filepath.Join(dir, ".lock"))
			if tc.remains {
				assert.DirExists(t, dir)
			} else {
				assert.NoDirExists(t, dir, "the lock's own directory goes with it when empty")
			}
			again, err := LockWorkdir(dir)
			require.NoError(t, err, "free again after the release")
			again()
		})
	}
}

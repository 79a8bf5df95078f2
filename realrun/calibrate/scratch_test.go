package calibrate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A scratch directory goes when it is released, or when RemoveScratch
// (a signal handler's) runs first; either order leaves nothing behind.
func TestScratchRemoved(t *testing.T) {
	parent := t.TempDir()
	a, releaseA, err := scratchDir(parent, ".tierflow-calibrate-*")
	require.NoError(t, err)
	b, releaseB, err := scratchDir(parent, ".tierflow-interference-*")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(a, "part"), make([]byte, 4096), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(b, "part"), make([]byte, 4096), 0o644))

	releaseB()
	assert.NoDirExists(t, b)
	require.DirExists(t, a)

	require.NoError(t, RemoveScratch())
	assert.NoDirExists(t, a)
	releaseA() // after RemoveScratch: nothing left to do, no error
	left, err := os.ReadDir(parent)
	require.NoError(t, err)
	assert.Empty(t, left)
	assert.NoError(t, RemoveScratch(), "none held")

	_, _, err = scratchDir(filepath.Join(parent, "missing"), ".x-*")
	assert.Error(t, err)
}

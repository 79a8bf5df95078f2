package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTooBigIsRefusedUpFront: a run whose work directory cannot fit the
// free space of its file system (an 8 MB tmpfs) is refused before
// anything is written, with both figures — it used to generate the data
// and run the disk full before saying so.
func TestTooBigIsRefusedUpFront(t *testing.T) {
	small := smallFS(t)
	work := filepath.Join(small, "work")
	_, errOut, code := runCmd("--dataset", "twitter", "--scale", "0.001", "--p", "4", "--c", "2", "--dim", "64",
		"--progress", "none", "--workdir", work)
	assert.Equal(t, 2, code, errOut)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	assert.Contains(t, errOut, "--workdir "+work+": this run needs up to 0.08 GB on its file system (data 0.02 GB and")
	assert.Contains(t, errOut, "3 copies of 4 partitions of 5.3 MB")
	assert.Contains(t, errOut, "GB are free")
	entries, err := os.ReadDir(small)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written")
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/store"
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

// TestResumeSpaceIsCheckedUpFront: a resumed run whose next checkpoints,
// or whose export on the same file system, cannot fit the free space is
// refused before anything is written, with both figures, as a first run
// is — it used to train and run the disk full before saying so. One that
// fits is taken.
func TestResumeSpaceIsCheckedUpFront(t *testing.T) {
	small := smallFS(t)
	work, elsewhere, beside := filepath.Join(small, "work"), filepath.Join(t.TempDir(), "emb.npy"), filepath.Join(small, "emb.npy")
	_, errOut, code := runCmd(smallRun(work, elsewhere, 1)...)
	require.Equal(t, 0, code, errOut)
	require.NoError(t, os.Remove(elsewhere))
	st, err := store.Open(work)
	require.NoError(t, err)
	copyBytes := int64(st.M.P) * st.M.PartitionBytes // one more checkpoint
	exportBytes := 4 * st.M.Nodes * int64(st.M.Dim)  // the embeddings as .npy
	tests := []struct {
		name   string
		free   int64
		epochs int
		export string
		want   []string // nil = accepted
	}{
		{"no room for the next checkpoint", copyBytes / 2, 3, elsewhere,
			[]string{"--workdir " + work + ": resuming, this run still needs up to", "(1 more copy of 4 partitions of", "GB are free"}},
		{"room for the next checkpoints", copyBytes + copyBytes/4, 3, elsewhere, nil},
		{"trained: no room for the export", exportBytes / 2, 3, beside,
			[]string{"--export " + beside + ": resuming, this run's export needs about", "GB are free"}},
		{"trained: room for the export", exportBytes + exportBytes/4, 3, beside, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			filler := fill(t, small, tt.free)
			defer os.Remove(filler)
			before, err := os.ReadFile(filepath.Join(work, "CURRENT"))
			require.NoError(t, err)
			entries, err := os.ReadDir(work)
			require.NoError(t, err)
			_, errOut, code := runCmd(smallRun(work, tt.export, tt.epochs, "--resume", "--eval", "none")...)
			if tt.want == nil {
				require.Equal(t, 0, code, errOut)
				assert.FileExists(t, tt.export)
				require.NoError(t, os.Remove(tt.export))
				return
			}
			assert.Equal(t, 2, code, errOut)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
			for _, w := range tt.want {
				assert.Contains(t, errOut, w)
			}
			after, err := os.ReadFile(filepath.Join(work, "CURRENT"))
			require.NoError(t, err)
			assert.Equal(t, string(before), string(after), "the checkpoint is untouched")
			now, err := os.ReadDir(work)
			require.NoError(t, err)
			assert.Equal(t, len(entries), len(now), "nothing was written")
			assert.NoFileExists(t, tt.export)
		})
	}
}

package pbgio

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/workdir"
)

// TestSpillNames: partition p's names come back in row order — row r of
// partition p is the node the relabelling put at store id p·Rows + r —
// holding one partition at a time; a generated graph's nodes are named by
// their decimal input ids, and every spill file is gone afterwards.
func TestSpillNames(t *testing.T) {
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: "fb15k", Scale: 0.02, Seed: 3, P: 5, Dim: 4, Model: "complex", Workdir: t.TempDir() + "/wd"})
	require.NoError(t, err)
	perm, err := st.Permutation()
	require.NoError(t, err)
	dir := t.TempDir()
	names, err := spillNames(dir, st, perm)
	require.NoError(t, err)
	var seen int64
	for p := 0; p < st.M.P; p++ {
		got, err := names(p)
		require.NoError(t, err)
		for r, name := range got {
			orig, err := strconv.Atoi(name)
			require.NoError(t, err)
			assert.Equal(t, int64(p)*st.M.Rows+int64(r), int64(perm[orig]), "partition %d row %d", p, r)
		}
		seen += int64(len(got))
	}
	assert.Equal(t, st.M.Nodes, seen)
	left, err := filepath.Glob(dir + "/.names-*")
	require.NoError(t, err)
	assert.Empty(t, left)
}

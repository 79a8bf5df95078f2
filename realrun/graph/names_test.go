package graph_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/graph"
)

// TestReadNames: ids.tsv and relations.tsv read back by id; an id the
// table lacks, or a missing table, is named by its number.
func TestReadNames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ids.tsv")
	require.NoError(t, os.WriteFile(path, []byte("0\talpha\n2\tgamma ray\n"), 0o644))
	names, err := graph.ReadNames(path, 4)
	require.NoError(t, err)
	assert.Equal(t, []string{"alpha", "1", "gamma ray", "3"}, names)
	names, err = graph.ReadNames(filepath.Join(dir, "none.tsv"), 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"0", "1"}, names)
}

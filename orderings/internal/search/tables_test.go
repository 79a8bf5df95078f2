package search

import (
	"go/ast"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readStored reads one of orderings' table files.
func readStored(t *testing.T, file string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", file))
	require.NoError(t, err)
	return src
}

// TestFormatRoundTrip reads each stored table and writes it again: the
// generators' output format is the stored files' byte for byte.
func TestFormatRoundTrip(t *testing.T) {
	src := readStored(t, StripFile)
	moves := map[[2]int][]int{}
	require.NoError(t, readTable(src, func(pc [2]int, v ast.Expr) error {
		var err error
		moves[pc], err = intSlice(v)
		return err
	}))
	require.NotEmpty(t, moves)
	out, err := FormatStrip(moves)
	require.NoError(t, err)
	assert.Equal(t, string(src), string(out), StripFile)

	for _, tt := range []struct {
		file   string
		format func([]byte) ([]byte, error)
	}{
		{CyclicFile, func(src []byte) ([]byte, error) {
			plans, err := ReadPlans(src)
			require.NoError(t, err)
			require.NotEmpty(t, plans)
			return FormatCyclic(plans)
		}},
		{SplitFile, func(src []byte) ([]byte, error) {
			plans, err := ReadPlans(src)
			require.NoError(t, err)
			require.NotEmpty(t, plans)
			return FormatSplit(plans)
		}},
	} {
		src := readStored(t, tt.file)
		out, err := tt.format(src)
		require.NoError(t, err)
		assert.Equal(t, string(src), string(out), tt.file)
	}
}

// TestSplitTableRegenerates reruns the split search without pattern draws
// at c = 5, p = 35 … 45 (about a second): the stored table comes back
// byte for byte (its entries there are kept, and the search finds none
// for the pairs without one).
func TestSplitTableRegenerates(t *testing.T) {
	src := readStored(t, SplitFile)
	saved, err := ReadPlans(src)
	require.NoError(t, err)
	got, err := SplitTable(saved, SplitOptions{C: 5, PLo: 35, PHi: 45}, t.Logf)
	require.NoError(t, err)
	out, err := FormatSplit(got)
	require.NoError(t, err)
	assert.Equal(t, string(src), string(out))
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReproduceWritesFiles(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	code := run([]string{"--out", dir, "--experiments", "fig7,legend-table6"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	for _, f := range []string{"fig7/fig7.csv", "fig7/fig7.md", "fig7/fig7.png", "fig7/fig7.svg",
		"legend-table6/legend-table6.csv", "legend-table6/legend-table6.png"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.Positive(t, st.Size(), f)
	}
	assert.Contains(t, out.String(), "Marius Figure 7")
	assert.Contains(t, out.String(), "Legend Table 6")
}

func TestReproduceBadInput(t *testing.T) {
	for _, args := range [][]string{{"--experiments", "fig99"}, {"--json", "--csv"}, {"stray"}} {
		var out, errOut bytes.Buffer
		code := run(append([]string{"--out", ""}, args...), &out, &errOut)
		assert.Equal(t, 2, code, args)
		assert.Equal(t, 1, strings.Count(errOut.String(), "\n"), errOut.String())
	}
}

// TestReproduceUnknownFlag: a mistyped flag is one line naming the flag
// meant (it was Go's "flag provided but not defined: -experiment").
func TestReproduceUnknownFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"--experiment", "fig7"}, &out, &errOut)
	assert.Equal(t, 2, code)
	assert.Equal(t, "reproduce: unknown flag --experiment; did you mean --experiments?\n", errOut.String())
	assert.Empty(t, out.String())
}

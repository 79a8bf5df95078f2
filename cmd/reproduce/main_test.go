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

// An experiment's notes and descriptions name fields ({NoPrefetch}); what
// reproduce prints and writes names the flags.
func TestReproduceRendersFields(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	code := run([]string{"--out", dir, "--experiments", "marius-fig13"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	assert.Contains(t, out.String(), "as tierflow's --no-prefetch does (--sync-writes is its own knob)")
	assert.NotRegexp(t, `\{[A-Z][A-Za-z]*\}`, out.String())
	for _, f := range []string{"marius-fig13/marius-fig13.md", "marius-fig13/README.md"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.NotRegexp(t, `\{[A-Z][A-Za-z]*\}`, string(b), f)
	}
	assert.Contains(t, readFile(t, filepath.Join(dir, "marius-fig13/marius-fig13.md")), "--no-prefetch")
	out.Reset()
	require.Equal(t, 0, run([]string{"--help"}, &out, &errOut))
	assert.Contains(t, out.String(), "realrun --schema, CPU engine")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

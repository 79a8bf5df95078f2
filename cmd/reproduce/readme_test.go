package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// section returns the README's text from the heading "## name" to the
// next "## " heading.
func section(readme, name string) string {
	_, s, ok := strings.Cut(readme, "\n## "+name+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(s, "\n## "); i >= 0 {
		s = s[:i]
	}
	return s
}

// TestReadmeWrittenByRun: a run writes README.md beside its files, with
// its own record; --readme-only writes the same table from those files
// without running, with the provenance git gives.
func TestReadmeWrittenByRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "results")
	var o, e bytes.Buffer
	require.Equal(t, 0, run([]string{"--out", out, "--experiments", "fig7"}, &o, &e), e.String())
	b, err := os.ReadFile(filepath.Join(out, "fig7", "README.md"))
	require.NoError(t, err)
	live := string(b)
	for _, want := range []string{"# fig7: Marius Figure 7", "| command | `make reproduce-fig7` |", "| machine | ", " cores, ",
		"| run time | ", "![", "(fig7.png)", "[fig7.csv](fig7.csv)", "\n## What differs and why\n"} {
		assert.Contains(t, live, want)
	}
	assert.NotContains(t, live, "| commit | not recorded")

	// Outside a checkout: commit and date unknown, the machine none needed.
	require.NoError(t, os.Remove(filepath.Join(out, "fig7", "README.md")))
	o.Reset()
	e.Reset()
	require.Equal(t, 0, run([]string{"--readme-only", "--out", out, "--experiments", "fig7"}, &o, &e), e.String())
	b, err = os.ReadFile(filepath.Join(out, "fig7", "README.md"))
	require.NoError(t, err)
	again := string(b)
	assert.Equal(t, section(live, "Results"), section(again, "Results"), "the table and notes read back from fig7.csv and fig7.md")
	assert.Equal(t, section(live, "What differs and why"), section(again, "What differs and why"))
	assert.Contains(t, again, "| commit | unknown |")
	assert.Contains(t, again, "| machine | any: simulated")
	assert.Contains(t, again, "--readme-only")

	// In a checkout: the commit that last changed the folder, README aside.
	git := func(args ...string) string {
		c := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		b, err := c.CombinedOutput()
		require.NoError(t, err, string(b))
		return strings.TrimSpace(string(b))
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "results")
	hash := git("rev-parse", "--short=12", "HEAD")
	require.Equal(t, 0, run([]string{"--readme-only", "--out", out, "--experiments", "fig7"}, &o, &e), e.String())
	git("add", ".")
	git("commit", "-qm", "readme")
	require.Equal(t, 0, run([]string{"--readme-only", "--out", out, "--experiments", "fig7"}, &o, &e), e.String())
	b, err = os.ReadFile(filepath.Join(out, "fig7", "README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "| commit | "+hash+" |")
}

// TestReadmeOnlyAllSkipsMissing: --readme-only over all experiments skips
// folders that are not there, and a named one that is not there is an
// error.
func TestReadmeOnlyAllSkipsMissing(t *testing.T) {
	out := t.TempDir()
	var o, e bytes.Buffer
	assert.Equal(t, 0, run([]string{"--readme-only", "--out", out}, &o, &e), e.String())
	assert.Contains(t, e.String(), "no results folder, skipped")
	o.Reset()
	e.Reset()
	assert.Equal(t, 2, run([]string{"--readme-only", "--out", out, "--experiments", "fig7"}, &o, &e))
	assert.Equal(t, 2, run([]string{"--readme-only", "--out", "", "--experiments", "fig7"}, &o, &e))
}

func TestReadmeParseMarkdown(t *testing.T) {
	title, notes := parseMarkdown("Title line\n\n| a |\n| ---: |\n| 1 |\n\n* first\n* second\n  continued\n")
	assert.Equal(t, "Title line", title)
	assert.Equal(t, []string{"first", "second\n  continued"}, notes)
}

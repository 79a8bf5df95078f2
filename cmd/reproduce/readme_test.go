package main

import (
	"bytes"
	"io"
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

// TestCommittedReadmes: every committed folder of the repository's
// results/ has a README.md, and it is what --readme-only (make
// reproduce-readmes) writes from the files there: a note under
// experiments/notes/ or a result changed without writing the READMEs
// again fails here. The READMEs are written into a copy of results/, with
// the provenance git gives for the real folders. A folder with changes
// git has not committed (a run just made) is left out, and the test is
// skipped outside a full git checkout, where git cannot give the
// provenance.
func TestCommittedReadmes(t *testing.T) {
	const results = "../../results"
	root, rel := gitRoot(results)
	if rel == "." {
		t.Skip("not a git checkout: no commit to give the READMEs")
	}
	if b, err := exec.Command("git", "-C", root, "rev-parse", "--is-shallow-repository").Output(); err != nil || strings.TrimSpace(string(b)) != "false" {
		t.Skip("a shallow clone: git log cannot say which commit last changed each folder")
	}
	b, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=all", "--", rel).Output()
	require.NoError(t, err)
	changed := map[string]bool{} // folder names under results/
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if len(line) > 3 {
			if f, ok := strings.CutPrefix(filepath.ToSlash(line[3:]), filepath.ToSlash(rel)+"/"); ok {
				changed[strings.SplitN(f, "/", 2)[0]] = true
			}
		}
	}
	dirs, err := os.ReadDir(results)
	require.NoError(t, err)
	copied := t.TempDir()
	require.NoError(t, os.CopyFS(copied, os.DirFS(results)))
	var e bytes.Buffer
	require.NoError(t, readmesAt(copied, root, rel, readmeFolders(), true, io.Discard, &e))
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		if changed[d.Name()] {
			t.Logf("results/%s: changes not committed, left out", d.Name())
			continue
		}
		want, err := os.ReadFile(filepath.Join(results, d.Name(), "README.md"))
		if !assert.NoError(t, err, "results/%s has no README.md: is it an experiment or a folder of experiments.Folders?", d.Name()) {
			continue
		}
		got, err := os.ReadFile(filepath.Join(copied, d.Name(), "README.md"))
		require.NoError(t, err)
		assert.Equal(t, string(got), string(want),
			"results/%s/README.md is not what make reproduce-readmes writes from the folder and its note: run it and commit the README", d.Name())
	}
}

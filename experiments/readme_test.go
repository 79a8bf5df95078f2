package experiments

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run %s -update", t.Name())
	assert.Equal(t, string(want), got)
}

// TestReadmeWriterGolden: the README of one experiment, its table, notes,
// images, files and note, byte for byte.
func TestReadmeWriterGolden(t *testing.T) {
	defer func(s fs.FS) { noteSource = s }(noteSource)
	noteSource = fstest.MapFS{"notes/fig7.md": {Data: []byte("# Marius Figure 7 — total I/O per epoch\n\n" +
		"```sh\nmake reproduce-fig7\n# a comment, not a heading\n```\n\n" +
		"BETA matches equation (3); the calibration is in [calibration.md](calibration.md#disk).\n\n" +
		"## Hilbert\n\n![fig](../../results/fig7/fig7.png)\n\n![other](../../results/marius-fig9/marius-fig9.png)\n")}}
	rd := Readme{
		Result: Result{
			Name:   "fig7",
			Title:  "Marius Figure 7: total I/O per epoch",
			Header: []string{"p", "c", "BETA swaps", "paper eq.3"},
			Rows:   [][]string{{"8", "2", "27", "27"}, {"64", "16", "150", "150"}},
			Notes:  []string{"The paper's values are its equations (2) and (3).", "A note with a | bar."},
		},
		Prov: Provenance{Command: "make reproduce-fig7", Machine: "AMD EPYC, 2 cores, 23.5 GiB memory",
			Date: "2026-11-27 21:00 UTC", Commit: "0123456789ab", RunTime: "0.4 s", From: "Written by the command below when it ran; the run's own record."},
		Images: []Image{{File: "fig7", Alt: "Total I/O per epoch", SVG: true}},
		Files:  []string{"fig7.csv", "fig7.md"},
	}
	var b bytes.Buffer
	require.NoError(t, WriteReadme(&b, rd))
	golden(t, "readme-fig7.golden", b.String())
}

// TestReadmeNotes: every experiment with a results folder and every
// Folder has a note; every note file is some experiment's or linked
// material (read by NoteFor).
func TestReadmeNotes(t *testing.T) {
	for _, n := range Names() {
		if _, err := os.Stat(filepath.Join("..", "results", n)); err != nil {
			continue
		}
		note, ok := NoteFor(n)
		if assert.True(t, ok, n) {
			assert.NotEmpty(t, note.Title, n)
		}
	}
	for _, f := range Folders {
		_, ok := NoteFor(f.Name)
		assert.True(t, ok, f.Name)
	}
	assert.NotEmpty(t, NoteFiles())
}

func TestReadmeRebaseLinks(t *testing.T) {
	for _, tc := range []struct{ in, to, want string }{
		{"see [a](../../results/validate/trace.txt)", "results/validate", "see [a](trace.txt)"},
		{"![x](../../results/fig7/fig7.png)", "results/marius-fig9", "![x](../fig7/fig7.png)"},
		{"[c](calibration.md#disk)", "results/fig7", "[c](../../experiments/notes/calibration.md#disk)"},
		{"[s](#one-validation-run-as-a-trace)", "results/validate", "[s](#one-validation-run-as-a-trace)"},
		{"[g](https://github.com/x/y)", "results/fig7", "[g](https://github.com/x/y)"},
		{"```\n[code](calibration.md)\n```", "results/fig7", "```\n[code](calibration.md)\n```"},
		{"[d](../../devices/presets/)", ".", "[d](devices/presets)"},
	} {
		assert.Equal(t, tc.want, RebaseLinks(tc.in, NoteDir, tc.to), tc.in)
	}
}

func TestReadmeDemoteSkipsCode(t *testing.T) {
	got := demote("## A\ntext\n```sh\n# a shell comment\n```\n### B", 1)
	assert.Equal(t, "### A\ntext\n```sh\n# a shell comment\n```\n#### B", got)
}

func TestReadmeSpliceNote(t *testing.T) {
	n := Note{File: "gnn.md", Title: "GNN", Body: "## Sub\n\nText [l](../../results/gnn/gnn.json)."}
	once := SpliceNote("# Own\n\ntable\n", n, "results/gnn")
	assert.Contains(t, once, "## What differs and why\n")
	assert.Contains(t, once, "### Sub")
	assert.Contains(t, once, "[l](gnn.json)")
	assert.Equal(t, once, SpliceNote(once, n, "results/gnn"), "splicing twice changes nothing")
	assert.True(t, strings.HasPrefix(once, "# Own\n\ntable\n\n## What"))
}

func TestReadmeRecorded(t *testing.T) {
	assert.Equal(t, "as recorded in the notes", RecordedMachine(false, "x", "on 2 cores"))
	assert.Equal(t, "not recorded", RecordedMachine(false, "nothing here"))
	assert.Contains(t, RecordedMachine(true), "simulated")
	assert.Equal(t, "29.3 min", RecordedRunTime("* Run time of the whole experiment: 29.3 min."))
	assert.Equal(t, "not recorded", RecordedRunTime("none"))
	assert.Equal(t, "make reproduce-models", MakeCommand("models-quality"))
	assert.Equal(t, "make reproduce-fig7", MakeCommand("fig7"))
}

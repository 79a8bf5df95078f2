package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExportFormatFromExtension: training's --export and `realrun export
// --out` take the format from the file's extension the same way (.npy,
// .tsv and .txt, .csv); a CSV names each node (quoted as RFC 4180 where
// its name needs it) and holds its values; an extension that names no
// format, without one given, is one line and exit 2. `realrun export
// --out x.csv` wrote .npy bytes, and --export x.tsv was refused.
func TestExportFormatFromExtension(t *testing.T) {
	dir := t.TempDir()
	// Node names with a comma, a quote and a space: CSV must quote them.
	names := []string{`a,b`, `say "hi"`, `plain`, `with space`}
	var b strings.Builder
	for i := 0; i < 400; i++ {
		b.WriteString(names[i%4] + itoa(i%37) + "\t" + names[(i+1)%4] + itoa((i*7+3)%37) + "\n")
	}
	edges := filepath.Join(dir, "edges.tsv")
	require.NoError(t, os.WriteFile(edges, []byte(b.String()), 0o644))
	work := filepath.Join(dir, "work")
	trainExport := func(export string, extra ...string) (string, int) {
		_, errOut, code := runCmd(append([]string{"--edges", edges, "--p", "2", "--c", "2", "--dim", "4", "--workers", "1", "--eval", "none",
			"--progress", "none", "--workdir", work, "--overwrite", "--export", export}, extra...)...)
		return errOut, code
	}
	checkFormat := func(t *testing.T, path, format string) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		switch format {
		case "npy":
			assert.True(t, bytes.HasPrefix(data, []byte("\x93NUMPY")), "npy bytes")
		case "tsv":
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			require.NotEmpty(t, lines)
			name, values, ok := strings.Cut(lines[0], "\t")
			assert.True(t, ok, lines[0])
			assert.NotEmpty(t, name)
			assert.Len(t, strings.Fields(values), 4)
		case "csv":
			rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
			require.NoError(t, err, "an RFC 4180 CSV")
			seen := map[string]bool{}
			for _, r := range rows {
				require.Len(t, r, 1+4, "name,v1,…,v4: %q", r)
				seen[r[0]] = true
			}
			for _, n := range names {
				assert.True(t, seen[n+"0"], "node %q named in the CSV", n+"0")
			}
			assert.Contains(t, string(data), `"a,b0",`)
			assert.Contains(t, string(data), `"say ""hi""0",`)
		}
	}
	for _, tc := range []struct{ file, format string }{
		{"emb.npy", "npy"}, {"emb.tsv", "tsv"}, {"emb.txt", "tsv"}, {"emb.csv", "csv"}, {"EMB.CSV", "csv"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			train := filepath.Join(dir, "train-"+tc.file)
			errOut, code := trainExport(train)
			require.Equal(t, 0, code, errOut)
			checkFormat(t, train, tc.format)
			out := filepath.Join(dir, "export-"+tc.file)
			_, errOut, code = runCmd("export", work, "--out", out)
			require.Equal(t, 0, code, errOut)
			checkFormat(t, out, tc.format)
			a, err := os.ReadFile(train)
			require.NoError(t, err)
			b, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.Equal(t, a, b, "training's --export and realrun export write the same file")
		})
	}
	work2 := filepath.Join(dir, "work2")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"train: no format for .bin", []string{"--edges", edges, "--workdir", work2, "--export", filepath.Join(dir, "e.bin")}, "--export " + filepath.Join(dir, "e.bin") + `: cannot tell the format from the extension ".bin"`},
		{"train: no extension", []string{"--edges", edges, "--workdir", work2, "--export", filepath.Join(dir, "e")}, "give --export-format npy, tsv, csv or pbg"},
		{"train: extension against format", []string{"--edges", edges, "--workdir", work2, "--export", filepath.Join(dir, "e.tsv"), "--export-format", "npy"}, "a .tsv file, but --export-format is npy (--export-format tsv writes it)"},
		{"export: no format for .bin", []string{"export", work, "--out", filepath.Join(dir, "x.bin")}, "--out " + filepath.Join(dir, "x.bin") + `: cannot tell the format from the extension ".bin"`},
		{"export: extension against format", []string{"export", work, "--out", filepath.Join(dir, "x.csv"), "--format", "npy"}, "a .csv file, but --format is npy (--format csv writes it)"},
		{"export: relations against format", []string{"export", work, "--out", filepath.Join(dir, "x.npy"), "--relations", filepath.Join(dir, "r.tsv")}, "--relations " + filepath.Join(dir, "r.tsv") + ": a .tsv file, but the embeddings (--out " + filepath.Join(dir, "x.npy") + ") are written as npy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCmd(append(tc.args, "--progress", "none")...)
			if tc.args[0] == "export" {
				out, errOut, code = runCmd(tc.args...)
			}
			assert.Equal(t, 2, code, errOut)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, tc.want)
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), "x.") || e.Name() == "e.bin" || e.Name() == "e" || e.Name() == "work2", "%s written", e.Name())
	}
}

package eval

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestExportFormat: the format of every export, from the extension when
// none is given; refusals are *FormatError.
func TestExportFormat(t *testing.T) {
	tests := []struct {
		path, format, want, err string
	}{
		{"e.npy", "", "npy", ""},
		{"e.tsv", "", "tsv", ""},
		{"e.txt", "", "tsv", ""},
		{"e.csv", "", "csv", ""},
		{"dir/E.CSV", "", "csv", ""},
		{"e.csv", "CSV", "csv", ""},
		{"e.bin", "npy", "npy", ""},
		{"pbg-out", "pbg", "pbg", ""},
		{"pbg.npy", "pbg", "pbg", ""},
		{"e.bin", "", "", `e.bin: cannot tell the export format from the extension ".bin"`},
		{"e", "", "", "e: no extension to tell the export format by"},
		{"e.tsv", "npy", "", "e.tsv: a .tsv file, but the format is npy (tsv writes it)"},
		{"e.npy", "parquet", "", `unknown export format "parquet" (want npy, tsv, csv or pbg)`},
	}
	for _, tc := range tests {
		got, err := ExportFormat(tc.path, tc.format)
		if tc.err != "" {
			var fe *FormatError
			assert.True(t, errors.As(err, &fe), "%s %s: %v", tc.path, tc.format, err)
			assert.ErrorContains(t, err, tc.err)
			continue
		}
		assert.NoError(t, err)
		assert.Equal(t, tc.want, got, "%s %s", tc.path, tc.format)
	}
	assert.Equal(t, `"a,b"`, csvField("a,b"))
	assert.Equal(t, `"say ""hi"""`, csvField(`say "hi"`))
	assert.Equal(t, `" pad"`, csvField(" pad"))
	assert.Equal(t, "plain name", csvField("plain name"))
}

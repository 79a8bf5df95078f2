package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEnumFlagsAnyCase: every enumerated flag takes its value in any
// case and stores, prints and writes the canonical lower-case name
// (--model ComplEX was accepted as typed, --eval-protocol Filtered
// refused).
func TestEnumFlagsAnyCase(t *testing.T) {
	work := filepath.Join(t.TempDir(), "work")
	out, errOut, code := runCmd("--dataset", "LiveJournal", "--scale", "0.0002", "--model", "ComplEX", "--eval-protocol", "Filtered",
		"--eval", "End", "--ordering", "Hilbert", "--policy", "LRU", "--engine", "CPU", "--duplicates", "Sum", "--export-format", "NPY",
		"--export", filepath.Join(t.TempDir(), "e.npy"), "--progress", "None", "--emulate-disk", "P3.2xlarge", "--workdir", work, "--print-config")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"dataset: livejournal", "model: complex", "eval-protocol: filtered", "eval: end", "ordering: hilbert",
		"policy: lru", "duplicates: sum", "export-format: npy", "emulate-disk: p3.2xlarge"} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "engine:", "CPU is the default cpu")
	_, errOut, code = runCmd("--edges", "e.tsv", "--delimiter", "TAB", "--header", "No", "--unseen", "Error", "--workdir", work, "--print-config")
	assert.NotContains(t, errOut, "--delimiter")
	assert.NotContains(t, errOut, "--header")
	assert.NotContains(t, errOut, "--unseen")
	_ = code
}

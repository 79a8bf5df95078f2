package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompareSimSpread: on a profile with a measured spread the compare
// table shows the predicted epoch with its range and whether the
// measured epoch lies within it; the CSV carries both.
func TestCompareSimSpread(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "dev.yaml")
	require.NoError(t, os.WriteFile(prof, []byte(`name: tiny-spread
disk: {read: 1 GB/s, write: 1 GB/s, latency: 100us, full_duplex: true}
cpu:
  workers: 2
  memory: 8 GB
  batch_edges: 1M edges/s
  gather_bandwidth: 10 GB/s
  train:
    dot: {edges: 500k edges/s}
spread:
  samples: 4
  disk.read: [500 MB/s, 2 GB/s]
  cpu.train.dot.edges: [250k edges/s, 1M edges/s]
`), 0o644))
	args := []string{"--dataset", "twitter", "--scale", "0.0002", "--p", "4", "--c", "3", "--dim", "16",
		"--orderings", "beta", "--compare-sim", "--device", prof, "--workdir", filepath.Join(dir, "work"), "--progress", "none"}
	out, errOut, code := runCmd(args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "predicted (range)")
	assert.Contains(t, out, "range")
	assert.Regexp(t, `beta +│ +[0-9.]+ +│ [0-9.]+ \([0-9.]+–[0-9.]+\) +│ (yes|no) +│`, out)
	assert.Regexp(t, `[01] of 1 measured epochs in range`, out)

	out, errOut, code = runCmd(append(args, "--csv")...)
	require.Equal(t, 0, code, errOut)
	header, _, _ := strings.Cut(out, "\n")
	assert.Contains(t, header, "predicted_epoch_seconds,predicted_epoch_seconds_low,predicted_epoch_seconds_high,in_range,")
}

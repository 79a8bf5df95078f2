package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEnumFlagsAnyCase: simulate's and simulate sweep's enumerated flags
// take their values in any case (presets too; files keep theirs).
func TestEnumFlagsAnyCase(t *testing.T) {
	args := []string{"--orderings", "BETA,Hilbert", "--policy", "LRU", "--system", "Marius", "--dataset", "Twitter", "--model", "ComplEx",
		"--edges", "Uniform", "--device", "P3.2xlarge", "--c", "4"}
	out, errOut, code := runCmd(append(args, "--p", "8", "--json")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"beta"`)
	cfg, errOut, code := runCmd(append(args, "--device", "Legend-A100", "--edges", "SKEWED", "--print-config")...)
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"orderings: beta,hilbert", "policy: lru", "dataset: twitter", "model: complex", "device: legend-a100", "edges: skewed"} {
		assert.Contains(t, cfg, want)
	}
	_, errOut, code = runCmd(append([]string{"sweep", "--p", "8"}, args...)...)
	require.Equal(t, 0, code, errOut)
}

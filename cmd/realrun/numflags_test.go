package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/cmd/internal/cli/clitest"
)

// TestNumberRules: every numeric flag of realrun and its subcommands has
// a rule, and a flag that takes 0 says what 0 means.
func TestNumberRules(t *testing.T) {
	clitest.WalkHelp(t, func(args []string) (string, int) {
		out, _, code := runCmd(args...)
		return out, code
	})
	clitest.CheckNumberRules(t, numberRules, "realrun", "realrun calibrate", "realrun trainer", "realrun eval", "realrun export", "realrun neighbors", "realrun predict", "realrun gnn")
}

// TestZeroRefused: a 0 or a negative value that means nothing is refused
// in one line with exit status 2 before any work, from the command line or
// a --config file (issue 46: --scale 0 and --micro-batch-memory 0 trained,
// calibrate --size 0 and --scale 0 measured); nothing is left behind.
func TestZeroRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "zero.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("dim: 8\nscale: 0\n"), 0o644))
	work := filepath.Join(dir, "work")
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--scale", "0"}, "--scale 0: must be positive"},
		{[]string{"--micro-batch-memory", "0"}, "--micro-batch-memory 0: must be positive"},
		{[]string{"--trace-max-spans", "-1"}, "--trace-max-spans -1: must not be negative"},
		{[]string{"--lr", "-0.5"}, "--lr -0.5: must not be negative"},
		{[]string{"--config", cfg}, `--config ` + cfg + `: key scale: bad value "0": must be positive`},
		{[]string{"calibrate", "--size", "0", "--out", filepath.Join(dir, "cal.yaml")}, "--size 0: must be at least 1"},
		{[]string{"calibrate", "--scale", "0", "--out", filepath.Join(dir, "cal.yaml")}, "--scale 0: must be positive"},
		{[]string{"eval", work, "--workers", "0"}, "--workers 0: must be at least 1"},
		{[]string{"neighbors", work, "cat", "--ef", "-1"}, "--ef -1: must be at least 1"},
		{[]string{"trainer", "--id", "-2"}, "--id -2: must not be negative"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := tt.args
			if strings.HasPrefix(args[0], "-") { // realrun itself, not a subcommand
				args = append(args, "--progress", "none", "--workdir", work)
			}
			out, errOut, code := runCmd(args...)
			assert.Equal(t, 2, code, errOut)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
			assert.Contains(t, errOut, tt.msg)
			assert.NoDirExists(t, work, "refused before any work")
			assert.NoFileExists(t, filepath.Join(dir, "cal.yaml"))
		})
	}
}

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

// TestNumberRules: every numeric flag of simulate and simulate sweep has
// a rule, and a flag that takes 0 says what 0 means.
func TestNumberRules(t *testing.T) {
	clitest.WalkHelp(t, func(args []string) (string, int) {
		out, _, code := runCmd(args...)
		return out, code
	})
	clitest.CheckNumberRules(t, numberRules, "simulate", "simulate sweep")
}

// TestZeroRefused: a 0 or a negative value that means nothing is refused
// in one line with exit status 2, from the command line or a --config
// file, where the default configuration's table used to be printed (issue
// 46); a 0 that has a meaning is taken.
func TestZeroRefused(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.yaml")
	require.NoError(t, os.WriteFile(zero, []byte("dim: 8\nbatch: 0\n"), 0o644))
	list := filepath.Join(dir, "list.yaml")
	require.NoError(t, os.WriteFile(list, []byte("p: [8, 16, 0]\n"), 0o644))
	tests := []struct {
		args []string
		msg  string // "" = accepted
	}{
		{[]string{"--p", "0"}, "--p 0: must be at least 1"},
		{[]string{"--c", "0"}, "--c 0: must be at least 1"},
		{[]string{"--c", "-1"}, "--c -1: must be at least 1"},
		{[]string{"--batch", "0"}, "--batch 0: must be at least 1"},
		{[]string{"--negatives", "0"}, "--negatives 0: must be at least 1"},
		{[]string{"--staleness", "0"}, "--staleness 0: must be at least 1"},
		{[]string{"--write-buffers", "0"}, "--write-buffers 0: must be at least 1"},
		{[]string{"--machines", "2", "--epochs", "0"}, "--epochs 0: must be at least 1"},
		{[]string{"--trace-max-spans", "-1"}, "--trace-max-spans -1: must not be negative"},
		{[]string{"sweep", "--batch", "0"}, "--batch 0: must be at least 1"},
		{[]string{"sweep", "--p", "8,16,0"}, "--p 8,16,0: each value must be positive (0 is not)"},
		{[]string{"--config", zero}, `key batch: bad value "0": must be at least 1`},
		{[]string{"sweep", "--config", list}, `key p: bad value "8,16,0": each value must be positive (0 is not)`},
		{[]string{"--p", "8", "--c", "4", "--chunk", "0", "--skew", "0", "--edges", "skewed", "--seed", "-3", "--orderings", "beta"}, ""},
		{[]string{"--batch", "1000", "--config", zero, "--orderings", "beta"}, ""}, // the command line wins
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, code := runCmd(tt.args...)
			if tt.msg == "" {
				assert.Equal(t, 0, code, errOut)
				return
			}
			assert.Equal(t, 2, code)
			assert.Empty(t, out, "no table")
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
			assert.Contains(t, errOut, tt.msg)
		})
	}
}

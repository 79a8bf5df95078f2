package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/cmd/internal/cli/clitest"
	"github.com/tierflow/tierflow/plots"
)

// TestHelpIsGrouped walks simulate's --help and every subcommand's.
func TestHelpIsGrouped(t *testing.T) {
	walked := clitest.WalkHelp(t, func(args []string) (string, int) {
		out, _, code := runCmd(args...)
		return out, code
	})
	assert.Equal(t, [][]string{nil, {"sweep"}, {"gnn"}}, walked)
}

// TestExampleConfigs runs simulate and simulate sweep on their example
// configurations under configs/ (the sweep's with a smaller grid given
// on the command line, which wins).
func TestExampleConfigs(t *testing.T) {
	for _, tc := range []struct {
		file string
		args []string
		want string
	}{
		{"simulate-freebase86m.yaml", nil, "p=32 c=8"},
		{"sweep-twitter.yaml", []string{"sweep", "--p", "16", "--c", "4"}, "swept p ∈ {16}, c ∈ {4}"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			args := append(tc.args, "--config", filepath.Join("..", "..", "configs", tc.file))
			out, errOut, code := runCmd(args...)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, out, tc.want)
		})
	}
}

// TestConfigRoundTrip: --print-config's output read back with --config
// gives the same configuration and the same prediction; flags given win.
func TestConfigRoundTrip(t *testing.T) {
	for _, cmd := range [][]string{
		{"--p", "16", "--c", "4", "--dataset", "twitter", "--orderings", "beta,cover", "--no-prefetch", "--checkpoint-every", "64b"},
		{"sweep", "--p", "8,16", "--c", "4", "--device", "p3.2xlarge,h100-nvme", "--orderings", "beta", "--top", "3"},
	} {
		t.Run(cmd[0], func(t *testing.T) {
			sub := cmd[:0:0]
			if cmd[0] == "sweep" {
				sub = []string{"sweep"}
			}
			cfg, errOut, code := runCmd(append(cmd, "--print-config")...)
			require.Equal(t, 0, code, errOut)
			path := filepath.Join(t.TempDir(), "c.yaml")
			require.NoError(t, os.WriteFile(path, []byte(cfg), 0o644))
			again, _, code := runCmd(append(sub, "--config", path, "--print-config")...)
			require.Equal(t, 0, code)
			assert.Equal(t, cfg, again)
			want, _, _ := runCmd(append(cmd, "--json")...)
			got, _, _ := runCmd(append(sub, "--config", path, "--json")...)
			assert.Equal(t, want, got)
		})
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte("p: 16\nc: 4\norderings: [beta]\ndataset: twitter\n"), 0o644))
	out, _, code := runCmd("--config", path, "--c", "8")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "p=16 c=8", "the command line wins")
	for file, msg := range map[string]string{"q: 1\n": `unknown key "q": simulate has no flag --q`, "c: two\n": `key c: bad value "two"`} {
		require.NoError(t, os.WriteFile(path, []byte(file), 0o644))
		_, errOut, code := runCmd("--config", path)
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, msg)
		assert.Contains(t, errOut, path)
	}
}

// TestDefaultTablesFit: every table simulate prints by default fits 100
// columns; --wide adds the rest.
func TestDefaultTablesFit(t *testing.T) {
	for _, args := range [][]string{
		{"--p", "16", "--c", "4"},
		{"--p", "16", "--c", "4", "--gpu-memory", "1GB"},
		{"sweep", "--p", "8,16", "--c", "2,4", "--device", "p3.2xlarge,h100-nvme"},
		{"--machines", "4", "--p", "16", "--dataset", "freebase"},
		{"sweep", "--machines", "1,2,4", "--p", "4,8", "--dataset", "freebase"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, errOut, code := runCmd(args...)
			require.Equal(t, 0, code, errOut)
			table := out[:strings.Index(out, "┘")]
			assert.LessOrEqual(t, plots.Width(table), 100, out)
			wide, _, code := runCmd(append(args, "--wide")...)
			require.Equal(t, 0, code)
			assert.Greater(t, plots.Width(wide[:strings.Index(wide, "┘")]), plots.Width(table))
		})
	}
}

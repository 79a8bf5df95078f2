//go:build !nodist

package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/cmd/internal/cli/clitest"
	"github.com/tierflow/tierflow/realrun/gnn"
)

var update = flag.Bool("update", false, "rewrite docs/reference/realrun.md from realrun's help")

// TestReference: docs/reference/realrun.md is realrun's help and every
// subcommand's, with realrun export's on a GNN work directory (a flag set
// of its own); make docs (-update) rewrites it. It is the default build's
// help: -tags nodist leaves trainer and etcd-member out.
func TestReference(t *testing.T) {
	gnnWork := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(gnnWork, gnn.StateFile), nil, 0o644))
	clitest.CheckReference(t, "../../docs/reference/realrun.md", *update, func(args []string) (string, int) {
		out, _, code := runCmd(args...)
		return out, code
	}, "realrun", clitest.Command{Title: "realrun export (GNN work directory)", Args: []string{"export", gnnWork}})
}

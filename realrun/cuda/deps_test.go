//go:build !cuda

package cuda

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The default build must never link gorgonia.org/cu: its init exits the
// process on a machine without a CUDA driver.
func TestDefaultBuildHasNoCU(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/tierflow/tierflow/cmd/...").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Greater(t, len(deps), 10)
	for _, d := range deps {
		require.False(t, strings.HasPrefix(d, "gorgonia.org/cu"), "the default build imports %s", d)
	}
}

package gnncmd

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/cmd/internal/cli/clitest"
	"github.com/tierflow/tierflow/realrun/gnn/split"
	"github.com/tierflow/tierflow/validate/gnnsim"
)

// The command's own runs, its goldens included, are tested through
// simulate's dispatcher (cmd/simulate/gnn_test.go).

// TestNumberRules: every numeric flag of simulate gnn has a rule, and
// every rule a flag.
func TestNumberRules(t *testing.T) {
	require.ErrorIs(t, Main([]string{"--help"}, io.Discard, io.Discard), flag.ErrHelp)
	clitest.CheckNumberRules(t, numberRules, name)
}

// TestRunMicro: a work directory's micro-batching becomes the
// prediction's unless a flag says otherwise.
func TestRunMicro(t *testing.T) {
	for _, tc := range []struct {
		settings map[string]string
		set      map[string]bool
		want     gnnsim.Settings
		err      string
	}{
		{map[string]string{"micro-batches": "4", "micro-split": "range"}, nil, gnnsim.Settings{K: []int{4}, Method: split.Range}, ""},
		{map[string]string{"micro-batch-memory": "2000000000"}, nil, gnnsim.Settings{Memory: 2e9}, ""},
		{map[string]string{"micro-batches": "4", "micro-split": "range"}, map[string]bool{"micro-batches": true, "micro-split": true}, gnnsim.Settings{K: []int{2}, Method: split.REG}, ""},
		{map[string]string{"micro-batches": "four"}, nil, gnnsim.Settings{}, `micro-batches "four"`},
		{map[string]string{"micro-split": "best"}, nil, gnnsim.Settings{}, "micro-split"},
	} {
		s := gnnsim.Settings{}
		if tc.set["micro-batches"] {
			s = gnnsim.Settings{K: []int{2}, Method: split.REG}
		}
		err := runMicro(tc.settings, tc.set, &s)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, s, "%v", tc.settings)
	}
}

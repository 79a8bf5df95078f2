package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spreadDevice is p3.2xlarge with an (illustrative) measured spread.
var spreadDevice = filepath.Join("..", "..", "devices", "testdata", "p3.2xlarge-spread.yaml")

// TestSpreadOutputs pins simulate's and simulate sweep's tables on a
// device with a spread: each epoch with its range, each place marked.
func TestSpreadOutputs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		golden string
	}{
		{"simulate", []string{"--device", spreadDevice, "--p", "16", "--c", "4"}, "spread_simulate.txt"},
		{"sweep", []string{"sweep", "--device", spreadDevice, "--p", "8,16", "--c", "2,4", "--top", "8"}, "spread_sweep.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCmd(tc.args...)
			require.Equal(t, 0, code, errOut)
			assertGolden(t, filepath.Join("testdata", tc.golden), out)
		})
	}
}

// TestSpreadMachineReadable: --json and --csv carry the range and the
// places with a spread, and nothing of them without one.
func TestSpreadMachineReadable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		device string
		spread bool
	}{{"spread", spreadDevice, true}, {"preset", "p3.2xlarge", false}} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCmd("--device", tc.device, "--p", "16", "--c", "4", "--orderings", "beta,hilbert", "--json")
			require.Equal(t, 0, code, errOut)
			var got struct {
				Results []map[string]any `json:"results"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			require.Len(t, got.Results, 2)
			for _, k := range []string{"epoch_seconds_low", "epoch_seconds_high", "rank", "rank_best", "rank_worst"} {
				if tc.spread {
					assert.Contains(t, got.Results[0], k)
				} else {
					assert.NotContains(t, got.Results[0], k)
				}
			}
			if tc.spread {
				r := got.Results[0]
				assert.LessOrEqual(t, r["epoch_seconds_low"], r["epoch_seconds"])
				assert.GreaterOrEqual(t, r["epoch_seconds_high"], r["epoch_seconds"])
			}

			for _, args := range [][]string{
				{"--device", tc.device, "--p", "16", "--c", "4", "--orderings", "beta", "--csv"},
				{"sweep", "--device", tc.device, "--p", "8", "--c", "4", "--orderings", "beta", "--csv"},
			} {
				out, errOut, code = runCmd(args...)
				require.Equal(t, 0, code, errOut)
				header, _, _ := strings.Cut(out, "\n")
				assert.Equal(t, tc.spread, strings.Contains(header, ",epoch_seconds,epoch_seconds_low,epoch_seconds_high,"), header)
				assert.Equal(t, tc.spread, strings.Contains(header, "rank_best,rank_worst,within_spread_of_above"), header)
			}
		})
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/plots"
)

// The command: per-trainer occupancy and network bytes in the
// table, the JSON and the CSV.
func TestMachines(t *testing.T) {
	args := []string{"--machines", "8", "--p", "16", "--system", "pbg", "--dataset", "freebase"}
	out, errOut, code := runCmd(args...)
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"occupancy %", "wait for bucket", "sent GB", "received GB", "pbg on pbg-paper, 8 machine(s), p=16", "network"} {
		assert.Contains(t, out, want)
	}
	assert.LessOrEqual(t, plots.Width(out[:strings.Index(out, "┘")]), 100, "the default table fits 100 columns")
	wide, _, code := runCmd(append(args, "--wide")...)
	require.Equal(t, 0, code)
	for _, want := range []string{"│ transfer │", "loads", "saves", "peak memory GB"} {
		assert.Contains(t, wide, want)
	}
	assert.Equal(t, 4+8+3, strings.Count(out, "\n"), "8 trainer rows in a boxed table, then three lines")

	out, errOut, code = runCmd(append(args, "--json")...)
	require.Equal(t, 0, code, errOut)
	var got struct {
		Machines int `json:"machines"`
		Epochs   []struct {
			NetworkBytes float64 `json:"network_bytes"`
			Trainers     []map[string]float64
		} `json:"epochs"`
		Seconds float64 `json:"seconds"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, 8, got.Machines)
	require.Len(t, got.Epochs, 2)
	require.Len(t, got.Epochs[1].Trainers, 8)
	assert.Positive(t, got.Epochs[1].NetworkBytes)
	for _, tr := range got.Epochs[1].Trainers {
		assert.Greater(t, tr["occupancy"], 0.5)
		assert.Positive(t, tr["sent_bytes"])
		assert.Contains(t, tr, "wait_bucket_s")
	}

	out, errOut, code = runCmd(append(args, "--csv")...)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 9)
	assert.Equal(t, "machine,buckets,train_s,wait_bucket_s,transfer_s,occupancy,loads,saves,sent_bytes,received_bytes,peak_memory_bytes", lines[0])
}

func TestMachinesWarnsBeyondHalfP(t *testing.T) {
	out, errOut, code := runCmd("--machines", "3", "--p", "4", "--dataset", "twitter")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "warning: 3 machines, but at most 2 can train at once over 4 partitions")
}

func TestMachinesBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--machines", "0"}, "--machines 0: must be at least 1"},
		{[]string{"--machines", "-2"}, "--machines -2: must be at least 1"},
		{[]string{"--machines", "2", "--p", "4", "--bandwidth", "-1GB/s"}, "--bandwidth -1GB/s: must be positive"},
		{[]string{"--machines", "2", "--p", "4", "--bandwidth", "0GB/s"}, "--bandwidth 0GB/s: must be positive"},
		{[]string{"--machines", "2", "--p", "1"}, "--p 1: 2 machines need at least 2 partitions"},
		{[]string{"--machines", "2", "--system", "marius"}, "--machines models PyTorch-BigGraph (--system pbg), not --system marius"},
		{[]string{"--machines", "2", "--c", "4", "--plot", "x.png"}, "--c, --plot: not with --machines"},
		{[]string{"--machines", "2", "--device", "p3.2xlarge"}, "trains on the CPU"},
		{[]string{"--bandwidth", "1GB/s"}, "--bandwidth and --epochs go with --machines"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, code := runCmd(tc.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, tc.want)
		})
	}
}

func TestSweepMachines(t *testing.T) {
	out, errOut, code := runCmd("sweep", "--machines", "1,2,4", "--p", "1,4,8", "--dataset", "twitter", "--csv")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// (1,1) (1,4) (1,8) (2,4) (2,8) (4,8); (2,1) (4,1) (4,4) left out.
	require.Len(t, lines, 1+6)
	assert.Equal(t, "rank,machines,p,seconds,speed_up,machine_hours,occupancy,wait_bucket_s,transfer_s,network_bytes,peak_memory_bytes,fits", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "1,4,8,"), "4 machines at p=8 is the fastest: %s", lines[1])

	_, errOut, code = runCmd("sweep", "--machines", "2", "--p", "1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "every configuration has more machines than P/2")
	_, errOut, code = runCmd("sweep", "--machines", "x")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--machines:")
}

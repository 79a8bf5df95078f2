package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
)

// TestSweepRowsMatchSimulate: every row of a sweep is exactly what a
// single simulate run of that (p, c, ordering) predicts, rows that fit in
// memory come first and fastest first, and c > p is never swept.
func TestSweepRowsMatchSimulate(t *testing.T) {
	out, errOut, code := runCmd("sweep", "--p", "8,16", "--c", "2-4,16", "--orderings", "beta,hilbert", "--json")
	require.Equal(t, 0, code, errOut)
	var got SweepOutput
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, []int{8, 16}, got.Ps)
	assert.Equal(t, []int{2, 3, 4, 16}, got.Cs)
	assert.Equal(t, []string{"p3.2xlarge"}, got.Devices)
	require.Len(t, got.Rows, 2*(4+3)) // p=8: c=2,3,4; p=16: c=2,3,4,16
	seenUnfit := false
	for i, r := range got.Rows {
		assert.LessOrEqual(t, r.C, r.P)
		if !r.Fits {
			seenUnfit = true
		} else {
			assert.False(t, seenUnfit, "a fitting row after one that does not fit")
		}
		if i > 0 && got.Rows[i-1].Fits == r.Fits {
			assert.LessOrEqual(t, got.Rows[i-1].EpochSeconds, r.EpochSeconds)
		}
		assert.Equal(t, orderings.LowerBound(r.P, r.C), r.LowerBound)
		assert.Equal(t, int64(r.C+r.StagingBuffers)*r.PartitionBytes, r.BufferBytes)
		assert.Equal(t, float64(r.BufferBytes) <= 0.8*float64(r.MemoryBytes), r.Fits)

		single, errOut, code := runCmd("--p", strconv.Itoa(r.P), "--c", strconv.Itoa(r.C), "--orderings", r.Ordering, "--json")
		require.Equal(t, 0, code, errOut)
		var one Output
		require.NoError(t, json.Unmarshal([]byte(single), &one))
		require.Len(t, one.Results, 1)
		assert.Equal(t, one.Results[0].EpochSeconds, r.EpochSeconds, "p=%d c=%d %s", r.P, r.C, r.Ordering)
		assert.Equal(t, one.Results[0].Swaps, r.Swaps)
		assert.Equal(t, one.PartitionBytes, r.PartitionBytes)
	}
	// Freebase86m d=100: at p=8 a partition is 8.61 GB, and c=4 plus two
	// staging buffers (51.7 GB) fits in 80% of 61 GiB (52.4 GB); at p=16,
	// c=16 plus two (77.5 GB) does not.
	fits := map[[2]int]bool{}
	for _, r := range got.Rows {
		fits[[2]int{r.P, r.C}] = r.Fits
	}
	assert.True(t, fits[[2]int{8, 4}])
	assert.False(t, fits[[2]int{16, 16}])
	assert.True(t, seenUnfit)
}

// TestSweepHumanTable: the default table ranks, names the fastest, and
// says how many configurations do not fit.
func TestSweepHumanTable(t *testing.T) {
	out, errOut, code := runCmd("sweep", "--p", "8,32", "--c", "4,8", "--orderings", "beta,hilbert-symmetric", "--top", "3")
	require.Equal(t, 0, code, errOut)
	assertGolden(t, filepath.Join("testdata", "sweep_freebase86m.txt"), out)
	assert.Contains(t, out, "fastest: beta at p=8 c=4")
	assert.Contains(t, out, "6 fit in memory (the other 2", "p=8 c=8 needs 10 × 8.6 GB")
}

// TestSweepFixedCapacity: a system whose design fixes c sweeps p only and
// refuses --c.
func TestSweepFixedCapacity(t *testing.T) {
	out, errOut, code := runCmd("sweep", "--system", "legend", "--device", "legend-a100", "--dataset", "twitter", "--p", "8,12,16", "--orderings", "legend,beta", "--json")
	require.Equal(t, 0, code, errOut)
	var got SweepOutput
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, []int{3}, got.Cs)
	partitioned := 0
	for _, r := range got.Rows {
		if !r.InMemory {
			partitioned++
		}
	}
	assert.Equal(t, 6, partitioned)
	assert.Len(t, got.Rows, 6+2, "and marius-inmem and dglke, whose 33.3 GB fit the A100 machine's host memory (in-gpu's do not fit 80% of its 40 GB)")
	_, errOut, code = runCmd("sweep", "--system", "legend", "--c", "4")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "buffer of 3 partitions by design")
	_, errOut, code = runCmd("sweep", "--system", "legend", "--device", "legend-a100", "--p", "8", "--c", "3")
	assert.Equal(t, 0, code, errOut)
}

func TestSweepBadInput(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--p", "8,x"}, `--p: "x" is not a positive integer`},
		{[]string{"--c", "9-3"}, `--c: "9-3" is not a range`},
		{[]string{"--p", "2", "--c", "4"}, "no pair with 2 ≤ c ≤ p"},
		{[]string{"--system", "in-gpu"}, "no p or c to sweep"},
		{[]string{"--top", "0"}, "--top 0"},
		{[]string{"--memory-share", "1.5"}, "--memory-share 1.5"},
		{[]string{"--device", "nope"}, "--device"},
		{[]string{"--p", "1-1024", "--c", "2-64"}, "narrow --p"},
	} {
		out, errOut, code := runCmd(append([]string{"sweep"}, tt.args...)...)
		assert.Equal(t, 2, code, "%v", tt.args)
		assert.Empty(t, out, "%v", tt.args)
		assert.Contains(t, errOut, tt.want, "%v", tt.args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%v: one line: %q", tt.args, errOut)
	}
}

// TestSweepDeterministicAcrossGOMAXPROCS: the sweep simulates in parallel;
// its JSON must not depend on how many threads it had.
func TestSweepDeterministicAcrossGOMAXPROCS(t *testing.T) {
	var outs []string
	for _, procs := range []string{"1", "3"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "sweep", "--p", "8,16", "--c", "2,4", "--dataset", "twitter", "--json")
		cmd.Env = append(os.Environ(), "TIERFLOW_AS_SIMULATE=1", "GOMAXPROCS="+procs)
		out, err := cmd.Output()
		require.NoError(t, err)
		outs = append(outs, string(out))
	}
	assert.Equal(t, outs[0], outs[1])
	assert.Contains(t, outs[0], `"rows"`)
}

func TestSweepPlot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sweep.svg")
	_, errOut, code := runCmd("sweep", "--p", "8,16,32", "--c", "2,4", "--orderings", "beta", "--plot", path)
	require.Equal(t, 0, code, errOut)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Positive(t, st.Size())
	// Several devices: one panel per device, one legend entry per c.
	panels := filepath.Join(t.TempDir(), "sweep.png")
	_, errOut, code = runCmd("sweep", "--p", "8,16", "--c", "2,4", "--orderings", "beta", "--device", "p3.2xlarge,h100-nvme", "--plot", panels)
	require.Equal(t, 0, code, errOut)
	st, err = os.Stat(panels)
	require.NoError(t, err)
	assert.Positive(t, st.Size())
	// Nothing fits: a 1% memory share leaves no buffer.
	_, errOut, code = runCmd("sweep", "--p", "8", "--c", "4", "--memory-share", "0.01", "--plot", path+"2.png")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "no configuration fits")
}

// TestSweepMicroBatching: with GE2's GPU buffer leaving 1.24 GB of a 12 GB
// GPU, every configuration that fits splits its batches; without
// micro-batching none fits, and the summary says why.
func TestSweepMicroBatching(t *testing.T) {
	args := []string{"sweep", "--system", "ge2", "--dim", "800", "--p", "128,256", "--gpu-memory", "12GB", "--memory-share", "0.95"}
	out, errOut, code := runCmd(append(args, "--json")...)
	require.Equal(t, 0, code, errOut)
	var got SweepOutput
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	fit := got.Fitting()
	require.NotEmpty(t, fit)
	for _, r := range fit {
		assert.Equal(t, 3, r.MicroBatches, "p=%d %s", r.P, r.Ordering)
		assert.True(t, r.BatchFits)
	}
	human, errOut, code := runCmd(args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, human, "split every batch into micro-batches (up to 3)")
	human, errOut, code = runCmd(append(args, "--no-micro-batching")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, human, ", 0 fit in memory")
	assert.Contains(t, human, "do not fit because a batch does not fit the GPU memory left to it")
}

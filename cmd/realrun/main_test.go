package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/cmd/internal/cli"
)

// TestMain lets a test run this binary as the realrun command: with
// TIERFLOW_AS_REALRUN=1 it runs main on the arguments after "--".
func TestMain(m *testing.M) {
	cli.ChildMain("TIERFLOW_AS_REALRUN", run)
	os.Exit(m.Run())
}

func runCmd(args ...string) (string, string, int) {
	var o, e bytes.Buffer
	code := run(args, &o, &e)
	return o.String(), e.String(), code
}

func TestTinyRunJSON(t *testing.T) {
	dir := t.TempDir()
	npy := filepath.Join(dir, "emb.npy")
	out, errOut, code := runCmd("--dataset", "twitter", "--scale", "0.0002", "--p", "4", "--c", "2", "--dim", "16",
		"--epochs", "2", "--workdir", filepath.Join(dir, "work"), "--progress", "none", "--json", "--export", npy,
		"--timeline", filepath.Join(dir, "t.png"))
	require.Equal(t, 0, code, errOut)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	for _, k := range []string{"ordering", "p", "c", "partition_bytes", "epochs"} {
		assert.Contains(t, got, k)
	}
	epochs := got["epochs"].([]any)
	require.Len(t, epochs, 2)
	e := epochs[0].(map[string]any)
	for _, k := range []string{"epoch", "epoch_seconds", "stall_seconds", "compute_seconds", "swaps", "loads", "writes", "final_writes", "read_bytes", "write_bytes", "mrr", "hits_at_1", "hits_at_10"} {
		assert.Contains(t, e, k)
	}
	pb := got["partition_bytes"].(float64)
	assert.Equal(t, e["loads"].(float64)*pb, e["read_bytes"].(float64))
	assert.Equal(t, (e["writes"].(float64)+e["final_writes"].(float64))*pb, e["write_bytes"].(float64))

	data, err := os.ReadFile(npy)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(data, []byte("\x93NUMPY\x01\x00")))
	hl := int(binary.LittleEndian.Uint16(data[8:10]))
	assert.Zero(t, (10+hl)%64)
	header := string(data[10 : 10+hl])
	assert.Contains(t, header, "'shape': (8320, 16)")
	assert.Len(t, data, 10+hl+8320*16*4)
	st, err := os.Stat(filepath.Join(dir, "t.png"))
	require.NoError(t, err)
	assert.Positive(t, st.Size())
}

func TestEdgeFileWithStringIDs(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("# a SNAP-style comment\n")
	for i := 0; i < 3000; i++ {
		b.WriteString("user" + itoa(i%200) + "\tfollows\tuser" + itoa((i*7+3)%200) + "\n")
	}
	edges := filepath.Join(dir, "edges.tsv")
	require.NoError(t, os.WriteFile(edges, []byte(b.String()), 0o644))
	tsv := filepath.Join(dir, "emb.tsv")
	out, errOut, code := runCmd("--edges", edges, "--model", "distmult", "--p", "4", "--c", "2", "--dim", "8",
		"--workdir", filepath.Join(dir, "work"), "--progress", "none", "--export", tsv, "--export-format", "tsv")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "MRR")
	data, err := os.ReadFile(tsv)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	assert.Len(t, lines, 200)
	assert.True(t, strings.HasPrefix(lines[0], "user0\t"))
	assert.Len(t, strings.Fields(strings.SplitN(lines[0], "\t", 2)[1]), 8)
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.tsv")
	require.NoError(t, os.WriteFile(bad, []byte("a b\nc d\ne f g h\n"), 0o644))
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"malformed edge file", []string{"--edges", bad}, "bad.tsv:3: want 2 or 3 fields, got 4"},
		{"missing edge file", []string{"--edges", filepath.Join(dir, "none.tsv")}, "none.tsv"},
		{"unknown dataset", []string{"--dataset", "orkut"}, "--dataset"},
		{"c above p", []string{"--p", "4", "--c", "5"}, "exceeds p"},
		{"odd dim for complex", []string{"--dataset", "fb15k", "--dim", "7"}, "--dim 7"},
		{"bad export format", []string{"--export-format", "csv"}, "--export-format"},
		{"bad scale", []string{"--scale", "2"}, "--scale"},
		{"negative lr", []string{"--lr", "-1"}, "--lr"},
		{"unknown ordering", []string{"--ordering", "zigzag"}, "unknown ordering"},
		{"cover needs 4^k", []string{"--ordering", "cover", "--p", "8", "--c", "4"}, "needs p = 4^k"},
		{"valid without edges", []string{"--valid", bad}, "--valid and --test go with --edges"},
		// A path below a regular file cannot be created, even by root.
		{"workdir not writable", []string{"--scale", "0.0001", "--workdir", filepath.Join(bad, "work")}, "--workdir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--progress", "none"}, tt.args...)
			if !strings.Contains(strings.Join(args, " "), "--workdir") {
				args = append(args, "--workdir", filepath.Join(dir, "w-"+strings.ReplaceAll(tt.name, " ", "-")))
			}
			out, errOut, code := runCmd(args...)
			assert.Equal(t, 2, code, "stdout %q stderr %q", out, errOut)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, tt.msg)
		})
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), "w-"), "no work directory may be left behind: %s", e.Name())
	}
}

func TestCompareSimTiny(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "dev.yaml")
	require.NoError(t, os.WriteFile(prof, []byte(`name: tiny
disk: {read: 1 GB/s, write: 1 GB/s, latency: 100us, full_duplex: true}
cpu:
  workers: 2
  memory: 8 GB
  batch_edges: 1M edges/s
  gather_bandwidth: 10 GB/s
  train:
    dot: {edges: 500k edges/s, row_bandwidth: 10 GB/s, flops: 10 GFLOP/s}
`), 0o644))
	out, errOut, code := runCmd("--dataset", "twitter", "--scale", "0.0002", "--p", "4", "--c", "3", "--dim", "16",
		"--orderings", "beta,hilbert,legend", "--compare-sim", "--device", prof, "--workdir", filepath.Join(dir, "work"),
		"--progress", "none", "--json", "--plot", filepath.Join(dir, "scatter.svg"))
	require.Equal(t, 0, code, errOut)
	var got struct {
		Results []struct {
			Ordering  string
			Measured  map[string]any
			Predicted map[string]any
			Relative  map[string]float64 `json:"relative_error"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got.Results, 3)
	for _, r := range got.Results {
		assert.Equal(t, r.Measured["read_bytes"], r.Predicted["read_bytes"], r.Ordering)
		assert.Equal(t, r.Measured["write_bytes"], r.Predicted["write_bytes"], r.Ordering)
		assert.Zero(t, r.Relative["read_bytes"])
		assert.Contains(t, r.Relative, "epoch_seconds")
		assert.Positive(t, r.Predicted["epoch_seconds"])
	}
	_, err := os.Stat(filepath.Join(dir, "scatter.svg"))
	assert.NoError(t, err)
}

// TestKillAndResume kills realrun with SIGKILL at 20 random moments
// (generation, training, writes, checkpoints, evaluation) and resumes it
// each time: every resume must succeed, no partition may be torn (Resume
// checks the checksums), and the final embeddings must equal those of an
// uninterrupted run with the same seed (one worker: deterministic).
func TestKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts the command 20 times")
	}
	dir := t.TempDir()
	args := func(work, export string) []string {
		return []string{"--dataset", "livejournal", "--scale", "0.0005", "--p", "4", "--c", "2", "--dim", "8", "--epochs", "3",
			"--workers", "1", "--progress", "none", "--workdir", work, "--export", export}
	}
	ref := filepath.Join(dir, "ref.npy")
	_, errOut, code := runCmd(args(filepath.Join(dir, "ref"), ref)...)
	require.Equal(t, 0, code, errOut)
	want, err := os.ReadFile(ref)
	require.NoError(t, err)

	work, got := filepath.Join(dir, "work"), filepath.Join(dir, "got.npy")
	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, append(args(work, got), "--resume")...)...)
		cmd.Env = append(os.Environ(), "TIERFLOW_AS_REALRUN=1")
		return cmd
	}
	// Time one uninterrupted child run to spread the kills over it.
	t0 := time.Now()
	out, err := start().CombinedOutput()
	require.NoError(t, err, string(out))
	span := time.Since(t0)
	require.NoError(t, os.RemoveAll(work))
	rng := rand.New(rand.NewPCG(7, 7))
	kills, resumed := 0, 0
	for kills < 20 {
		cmd := start()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			// It finished before the kill: the resume worked; start over.
			require.NoError(t, err, stderr.String())
			require.NoError(t, os.RemoveAll(work))
		case <-time.After(time.Duration(rng.Float64() * float64(span))):
			require.NoError(t, cmd.Process.Kill())
			<-done
			kills++
			if strings.Contains(stderr.String(), "resuming after epoch") {
				resumed++
			}
		}
	}
	out, err = start().CombinedOutput()
	require.NoError(t, err, "resume after %d kills: %s", kills, out)
	t.Logf("%d kills over a %v run; %d of the killed runs had resumed from a checkpoint", kills, span, resumed)
	assert.Positive(t, resumed, "some kills must land after a checkpoint")
	have, err := os.ReadFile(got)
	require.NoError(t, err)
	assert.Equal(t, want, have, "embeddings after kills and resumes differ from an uninterrupted run")
}

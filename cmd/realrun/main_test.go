package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/internal/chrometrace"
	"github.com/tierflow/tierflow/realrun/store"
)

// TestMain lets a test run this binary as the realrun command: with
// TIERFLOW_AS_REALRUN=1 it runs main on the arguments after "--".
func TestMain(m *testing.M) {
	cli.ChildMain("TIERFLOW_AS_REALRUN", run)
	// realrun --trainers starts its trainers as this binary, as realrun.
	os.Setenv("TIERFLOW_AS_REALRUN", "1")
	selfArgv = func() ([]string, error) { return []string{os.Args[0], "-test.run=^$", "--"}, nil }
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
		"--timeline", filepath.Join(dir, "t.png"), "--trace", filepath.Join(dir, "t.json"))
	require.Equal(t, 0, code, errOut)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	for _, k := range []string{"ordering", "p", "c", "partition_bytes", "epochs"} {
		assert.Contains(t, got, k)
	}
	epochs := got["epochs"].([]any)
	require.Len(t, epochs, 2)
	e := epochs[0].(map[string]any)
	for _, k := range []string{"epoch", "epoch_seconds", "stall_seconds", "compute_seconds", "swaps", "loads", "writes", "final_writes", "read_bytes", "write_bytes", "valid", "test", "eval_seconds"} {
		assert.Contains(t, e, k)
	}
	assert.Nil(t, e["test"], "the test split is evaluated after the last epoch only")
	assert.Equal(t, "valid", e["valid"].(map[string]any)["split"])
	assert.Contains(t, epochs[1].(map[string]any)["test"], "mrr")
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
	for _, f := range []string{npy, filepath.Join(dir, "t.png")} {
		assert.Contains(t, errOut, "wrote "+f+" (", "every file written is announced on stderr")
	}
	assert.Equal(t, 0.0, got["ordering_seed"], "the JSON names the ordering seed")
	trace, err := os.ReadFile(filepath.Join(dir, "t.json"))
	require.NoError(t, err)
	require.NoError(t, chrometrace.Check(trace))
	assert.Contains(t, string(trace), `"epoch 2"`, "both epochs, one after the other")
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
		{"bad export format", []string{"--export-format", "xlsx"}, "--export-format \"xlsx\": want npy, tsv, csv or pbg"},
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
		"--progress", "none", "--json", "--plot", filepath.Join(dir, "scatter.svg"), "--trace", filepath.Join(dir, "cmp.json"))
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
	assert.Contains(t, errOut, "wrote "+filepath.Join(dir, "scatter.svg")+" (")
	// The profile records no training shape: a notice says so, naming
	// the flags (validate names the fields: the command renders them).
	assert.Contains(t, errOut, "--device "+prof+": cpu.train records no training shape")
	assert.Contains(t, errOut, "measure this shape with realrun calibrate and this run's --dataset/--scale or --edges, --p, --model, --dim, --batch, --negatives, --chunk, --workers, or leave --device out to calibrate now")
	assert.NotRegexp(t, `\{[A-Z]`, errOut)
	// The trace: a prediction and a measurement for every ordering, one
	// above the other on the same time axis.
	trace, err := os.ReadFile(filepath.Join(dir, "cmp.json"))
	require.NoError(t, err)
	require.NoError(t, chrometrace.Check(trace))
	for _, o := range []string{"beta", "hilbert", "legend"} {
		assert.Contains(t, string(trace), `"predicted: `+o+` (realrun model, tiny)"`)
		assert.Contains(t, string(trace), `"measured: `+o+` (realrun)"`)
	}

	// A name given twice runs once; --repeats runs the list again,
	// interleaved; the directory holds no checkpoint afterwards.
	out, errOut, code = runCmd("--dataset", "twitter", "--scale", "0.0002", "--p", "4", "--c", "3", "--dim", "16",
		"--orderings", "beta,hilbert,beta", "--repeats", "2", "--compare-sim", "--device", prof, "--workdir", filepath.Join(dir, "work"),
		"--progress", "none", "--json")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	var order []string
	for _, r := range got.Results {
		order = append(order, r.Ordering)
	}
	assert.Equal(t, []string{"beta", "hilbert", "beta", "hilbert"}, order)
	_, err = os.Stat(filepath.Join(dir, "work", "CURRENT"))
	assert.True(t, os.IsNotExist(err), "the comparison leaves the initial partitions, no checkpoint")
}

// child runs the test binary as the realrun command.
func child(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "TIERFLOW_AS_REALRUN=1")
	return cmd
}

// lockedBuffer collects a child's stderr while it runs; waitFor waits
// for what the child writes there, woken by each write.
type lockedBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed by the next Write
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.written != nil {
		close(l.written)
		l.written = nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor returns once cond holds for what the child has written so far
// (checked after each write, no polling), and fails after two minutes.
func (l *lockedBuffer) waitFor(t *testing.T, what string, cond func(string) bool) {
	t.Helper()
	deadline := time.NewTimer(2 * time.Minute)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		s := l.b.String()
		if l.written == nil {
			l.written = make(chan struct{})
		}
		written := l.written
		l.mu.Unlock()
		if cond(s) {
			return
		}
		select {
		case <-written:
		case <-deadline.C:
			require.FailNow(t, "timed out waiting for "+what, s)
		}
	}
}

// signalPending says whether sig was sent to process pid and the kernel
// has not delivered it yet (Linux: /proc/PID/status; elsewhere, and once
// the process is gone, false). A signal sent while the same one is still
// pending merges with it.
func signalPending(pid int, sig os.Signal) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	bit := uint64(1) << (sig.(syscall.Signal) - 1)
	for _, line := range strings.Split(string(data), "\n") {
		name, mask, ok := strings.Cut(line, ":")
		if ok && (name == "SigPnd" || name == "ShdPnd") {
			if m, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64); err == nil && m&bit != 0 {
				return true
			}
		}
	}
	return false
}

// progressLine is a --progress lines line: epoch, buckets done, buckets.
var progressLine = regexp.MustCompile(`epoch (\d+): (\d+)/(\d+) buckets`)

// progressAt finds the first progress line of epoch 1 with at least need
// buckets done, or else the first of a later epoch.
func progressAt(stderr string, need int) (epoch, done, total int, found bool) {
	for _, m := range progressLine.FindAllStringSubmatch(stderr, -1) {
		epoch, _ = strconv.Atoi(m[1])
		done, _ = strconv.Atoi(m[2])
		total, _ = strconv.Atoi(m[3])
		if epoch > 1 || done >= need {
			return epoch, done, total, true
		}
	}
	return 0, 0, 0, false
}

// smallRun is a run of a few seconds on one worker (deterministic).
func smallRun(work, export string, epochs int, extra ...string) []string {
	return append([]string{"--dataset", "livejournal", "--scale", "0.0005", "--p", "4", "--c", "2", "--dim", "8",
		"--epochs", strconv.Itoa(epochs), "--workers", "1", "--progress", "none", "--workdir", work, "--export", export}, extra...)
}

// reference trains a smallRun uninterrupted and returns its exported
// embeddings.
func reference(t *testing.T, dir string, epochs int, extra ...string) []byte {
	t.Helper()
	ref := filepath.Join(dir, "ref.npy")
	_, errOut, code := runCmd(smallRun(filepath.Join(dir, "ref"), ref, epochs, extra...)...)
	require.Equal(t, 0, code, errOut)
	want, err := os.ReadFile(ref)
	require.NoError(t, err)
	return want
}

// TestKillAndResume kills realrun with SIGKILL at 20 random moments
// (generation, training, writes, checkpoints inside and between epochs,
// evaluation) and resumes it each time: every resume must succeed, no
// partition may be torn (Resume checks the checksums), and the final
// embeddings must equal those of an uninterrupted run without
// checkpoints inside epochs (one worker: deterministic). It measures the
// work lost per kill: the time since the last committed checkpoint.
func TestKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts the command 20 times")
	}
	const every = 2 // buckets between checkpoints inside an epoch
	dir := t.TempDir()
	want := reference(t, dir, 3)

	work, got := filepath.Join(dir, "work"), filepath.Join(dir, "got.npy")
	start := func() *exec.Cmd {
		return child(smallRun(work, got, 3, "--resume", "--checkpoint-every", strconv.Itoa(every)+"b")...)
	}
	// Time one uninterrupted child run to spread the kills over it, and
	// its intervals: from the end of the bucket of one checkpoint to the
	// end of the next one's (two buckets and a checkpoint).
	t0 := time.Now()
	out, err := child(append(smallRun(work, got, 3, "--checkpoint-every", strconv.Itoa(every)+"b"), "--json")...).Output()
	require.NoError(t, err)
	span := time.Since(t0)
	var timed Output
	require.NoError(t, json.Unmarshal(out, &timed))
	var intervals []time.Duration
	for _, e := range timed.Epochs {
		ends := map[int]float64{}
		for k, b := range e.Buckets {
			ends[k+1] = b.End
		}
		for i := 1; i < len(e.Checkpoints); i++ {
			intervals = append(intervals, time.Duration(1e9*(ends[e.Checkpoints[i].Bucket]-ends[e.Checkpoints[i-1].Bucket])))
		}
	}
	require.NotEmpty(t, intervals)
	require.NoError(t, os.RemoveAll(work))
	rng := rand.New(rand.NewPCG(7, 7))
	kills, resumed, inside := 0, 0, 0
	var lost []time.Duration
	position := regexp.MustCompile(`at bucket (\d+) of`)
	for kills < 20 {
		cmd := start()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		began := time.Now()
		require.NoError(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			// It finished before the kill: the resume worked; start over.
			require.NoError(t, err, stderr.String())
			require.NoError(t, os.RemoveAll(work))
		case <-time.After(time.Duration(rng.Float64() * float64(span))):
			if err := cmd.Process.Kill(); errors.Is(err, os.ErrProcessDone) {
				// The child exited between the timer and the kill: the
				// same as finishing before it.
				require.NoError(t, <-done, stderr.String())
				require.NoError(t, os.RemoveAll(work))
				continue
			} else {
				require.NoError(t, err)
			}
			at := time.Now()
			<-done
			kills++
			if strings.Contains(stderr.String(), "resuming after epoch") {
				resumed++
			}
			if m := position.FindStringSubmatch(stderr.String()); m != nil {
				inside++
				k, _ := strconv.Atoi(m[1])
				assert.Zero(t, k%every, "checkpoints inside an epoch are taken every %d buckets", every)
			}
			// Work lost: while the current checkpoint is one inside an
			// epoch, everything since it was committed is training (and
			// checkpointing) that the resume repeats.
			cur, err := os.ReadFile(filepath.Join(work, "CURRENT"))
			if fi, err2 := os.Stat(filepath.Join(work, "CURRENT")); err == nil && err2 == nil && strings.Contains(string(cur), "+") && fi.ModTime().After(began) {
				lost = append(lost, at.Sub(fi.ModTime()))
			}
		}
	}
	out, err = start().CombinedOutput()
	require.NoError(t, err, "resume after %d kills: %s", kills, out)
	slices.Sort(lost)
	slices.Sort(intervals)
	t.Logf("%d kills over a %v run; %d resumed from a checkpoint, %d of them inside an epoch", kills, span, resumed, inside)
	if len(lost) > 0 {
		t.Logf("work lost by the %d kills after a checkpoint inside an epoch: median %v, max %v; one interval (%d buckets and a checkpoint): median %v, max %v",
			len(lost), lost[len(lost)/2], lost[len(lost)-1], every, intervals[len(intervals)/2], intervals[len(intervals)-1])
	}
	assert.Positive(t, resumed, "some kills must land after a checkpoint")
	assert.Positive(t, inside, "some kills must land after a checkpoint inside an epoch")
	have, err := os.ReadFile(got)
	require.NoError(t, err)
	assert.Equal(t, want, have, "embeddings after kills and resumes differ from an uninterrupted run")
}

// TestWorkdirLock: a second realrun on a work directory in use exits 2
// naming the process holding it; once that process is killed (SIGKILL:
// its lock file stays behind) the work directory is free again. The lock
// file is inside the work directory, nothing beside it.
func TestWorkdirLock(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	first := child(append(smallRun(work, filepath.Join(dir, "a.npy"), 100), "--progress", "lines")...)
	var stderr lockedBuffer
	first.Stderr = &stderr
	require.NoError(t, first.Start())
	defer first.Process.Kill()
	pid := strconv.Itoa(first.Process.Pid)
	// It locks the work directory before it trains: once it has printed
	// progress, the lock file names it.
	stderr.waitFor(t, "the first run's training", func(s string) bool { return strings.Contains(s, "epoch 1: ") })
	data, err := os.ReadFile(filepath.Join(work, ".lock"))
	require.NoError(t, err)
	require.Equal(t, pid, strings.TrimSpace(string(data)), "the lock file names the process holding it")
	out, errOut, code := runCmd(smallRun(work, filepath.Join(dir, "b.npy"), 1)...)
	assert.Equal(t, 2, code, out)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	assert.Contains(t, errOut, "used by process "+pid)
	require.NoError(t, first.Process.Kill())
	first.Wait()
	_, err = os.Stat(filepath.Join(work, ".lock"))
	require.NoError(t, err, "a killed run leaves its lock file")
	beside, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range beside {
		assert.Contains(t, []string{"work", "a.npy"}, e.Name(), "nothing beside the work directory")
	}
	// (--resume: the killed run may have committed checkpoints; one more
	// epoch than it did.)
	epochs := 1
	if st, err := store.Open(work); err == nil {
		epochs = st.Current + 1
	}
	_, errOut, code = runCmd(append(smallRun(work, filepath.Join(dir, "b.npy"), epochs), "--resume")...)
	assert.Equal(t, 0, code, errOut)
	_, err = os.Stat(filepath.Join(work, ".lock"))
	assert.True(t, os.IsNotExist(err), "a finished run removes its lock file")
}

// TestSignals: SIGINT and SIGTERM finish the bucket in progress, write a
// checkpoint, print how to resume and exit 130 and 143; a second SIGINT
// exits at once. Resuming as printed ends with the embeddings of an
// uninterrupted run.
func TestSignals(t *testing.T) {
	dir := t.TempDir()
	// More negatives: training, not evaluation, takes most of the time.
	slow := []string{"--negatives", "2000", "--dim", "64"}
	want := reference(t, dir, 2, slow...)
	for _, tc := range []struct {
		name    string
		signals []os.Signal
		code    int
	}{{"SIGINT", []os.Signal{os.Interrupt}, 130}, {"SIGTERM", []os.Signal{syscall.SIGTERM}, 143}, {"second SIGINT", []os.Signal{os.Interrupt, os.Interrupt}, 130}} {
		t.Run(tc.name, func(t *testing.T) {
			work, got := filepath.Join(dir, "w-"+strconv.Itoa(tc.code)+strconv.Itoa(len(tc.signals))), filepath.Join(dir, "got.npy")
			args := append(smallRun(work, got, 2, slow...), "--progress", "lines")
			if len(tc.signals) > 1 {
				// Checkpoints after every bucket: the second signal
				// lands while one is being written or between two.
				args = append(args, "--checkpoint-every", "1b")
			}
			var stderr *lockedBuffer
			var err error
			for attempt := 1; ; attempt++ {
				var again string
				stderr, again, err = signalRun(t, args, work, tc.signals)
				if again == "" || attempt == 3 {
					break
				}
				t.Logf("attempt %d: %s; again", attempt, again)
				require.NoError(t, os.RemoveAll(work))
			}
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, stderr.String())
			assert.Equal(t, tc.code, exit.ExitCode(), stderr.String())
			if len(tc.signals) == 1 {
				assert.Contains(t, stderr.String(), "stopped; the checkpoint holds 0 complete epochs and", "a checkpoint inside epoch 1")
				assert.Contains(t, stderr.String(), "resume with: realrun "+strings.Join(args, " ")+" --resume")
			} else {
				assert.NotContains(t, stderr.String(), "stopped; the checkpoint holds", "the second signal exits at once, without the stop's checkpoint")
				assert.Contains(t, stderr.String(), "realrun: second SIGINT: exiting at once without a new checkpoint; the last committed one is intact (resume with: realrun ", "the second signal says so")
			}
			if len(tc.signals) == 1 {
				// A checkpoint resumes only with the settings it was trained with.
				_, errOut, code := runCmd(append(args, "--resume", "--ordering", "hilbert")...)
				assert.Equal(t, 2, code, errOut)
				assert.Contains(t, lastLine(errOut), "trained with other settings: --ordering beta (now hilbert)")
			}
			_, errOut, code := runCmd(append(args, "--resume")...)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, errOut, "resuming after epoch 0 at bucket")
			have, err := os.ReadFile(got)
			require.NoError(t, err)
			assert.Equal(t, want, have, "embeddings after a stop and a resume differ from an uninterrupted run")
		})
	}
}

// signalRun runs realrun with args (--progress lines) in a child process,
// sends it the signals while it trains epoch 1 and returns its stderr and
// exit. again says why the run did not test what TestSignals means to
// (and then it is to be repeated on a fresh work directory): on a loaded
// machine a stop could end before the child takes a second signal.
func signalRun(t *testing.T, args []string, work string, signals []os.Signal) (stderr *lockedBuffer, again string, err error) {
	t.Helper()
	cmd := child(args...)
	stderr = &lockedBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	// A progress line says how far epoch 1 is; with two signals, one after
	// two buckets: it is printed once the checkpoint after the first
	// bucket is committed, which the second signal (it exits at once)
	// leaves for the resume.
	need := len(signals)
	stderr.waitFor(t, "training", func(s string) bool { _, _, _, found := progressAt(s, need); return found })
	epoch, done, total, _ := progressAt(stderr.String(), need)
	if epoch != 1 || done > total-2 {
		// The stop comes at the next bucket boundary: the one after the
		// bucket in progress must still be inside epoch 1.
		cmd.Process.Kill()
		cmd.Wait()
		return stderr, fmt.Sprintf("the first progress line was at bucket %d of %d of epoch %d, too late to stop inside epoch 1", done, total, epoch), nil
	}
	if len(signals) > 1 {
		cur, err := os.ReadFile(filepath.Join(work, "CURRENT"))
		require.NoError(t, err)
		require.Regexp(t, `^0\+[1-9][0-9]*\n$`, string(cur), "a checkpoint inside epoch 1 is committed")
	}
	exited := make(chan struct{})
	go func() { err = cmd.Wait(); close(exited) }()
	require.NoError(t, cmd.Process.Signal(signals[0]))
	sent := 1
	if len(signals) > 1 {
		// The second signal: one sent while the same one is pending in the
		// kernel merges with it, and so does one that reaches the Go
		// runtime before its signal goroutine has taken the first; the
		// child says nothing when it takes a signal. So it is sent again,
		// each time once the kernel has delivered the last one, until the
		// child exits: at once, at the second it takes. This loop polls
		// the child's state (/proc, exit), every 5 ms.
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
	signalling:
		for {
			select {
			case <-exited:
				break signalling
			case <-tick.C:
				if !signalPending(cmd.Process.Pid, signals[1]) && cmd.Process.Signal(signals[1]) == nil {
					sent++
				}
			}
		}
	}
	<-exited
	if len(signals) > 1 {
		t.Logf("%d signals sent before the child exited", sent)
	}
	switch ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus); {
	case len(signals) == 1:
	case sent < len(signals):
		again = "the run stopped before the second signal"
	case strings.Contains(stderr.String(), "stopped; the checkpoint holds"):
		again = fmt.Sprintf("the run stopped at the first signal before it took any of the %d more sent", sent-1)
	case ws.Signaled():
		again = "a signal came once the run had stopped and no longer caught signals"
	}
	return stderr, again, err
}

// TestEdgeFileResume: a work directory built from an edge file is resumed
// while the file is unchanged; once it changes, --resume is refused naming
// the file (it used to rebuild the directory, losing the checkpoint), and
// --overwrite starts over on the new file.
func TestEdgeFileResume(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; i < 2000; i++ {
		b.WriteString(itoa(i%150) + " " + itoa((i*11+5)%150) + "\n")
	}
	edges := filepath.Join(dir, "edges.txt")
	require.NoError(t, os.WriteFile(edges, []byte(b.String()), 0o644))
	args := func(epochs int, extra string) []string {
		return []string{"--edges", edges, "--p", "4", "--c", "2", "--dim", "8", "--epochs", itoa(epochs), "--workers", "1",
			"--workdir", filepath.Join(dir, "work"), "--progress", "none", extra}
	}
	_, errOut, code := runCmd(args(1, "--resume")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "nothing to resume", "a first --resume says there is nothing to resume and starts")
	_, errOut, code = runCmd(args(2, "--resume")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "resuming after epoch 1")
	require.NoError(t, os.WriteFile(edges, []byte(b.String()+"7 8\n"), 0o644))
	_, errOut, code = runCmd(args(3, "--resume")...)
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "trained with other settings: --edges "+edges)
	checkpointIntact(t, filepath.Join(dir, "work"), 2)
	_, errOut, code = runCmd(args(1, "--overwrite")...)
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, errOut, "resuming")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestCorruptBucket: a flipped byte in a bucket file stops the run with
// one line naming the file, before training on it.
func TestCorruptBucket(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	_, errOut, code := runCmd(smallRun(work, filepath.Join(dir, "a.npy"), 1)...)
	require.Equal(t, 0, code, errOut)
	bucket := filepath.Join(work, "buckets", "bucket-0002-0001.bin")
	data, err := os.ReadFile(bucket)
	require.NoError(t, err)
	data[len(data)/2] ^= 1
	require.NoError(t, os.WriteFile(bucket, data, 0o644))
	out, errOut, code := runCmd(smallRun(work, filepath.Join(dir, "b.npy"), 2, "--resume")...)
	assert.Equal(t, 1, code, out)
	line := lastLine(errOut)
	assert.Contains(t, line, bucket+": checksum")
	assert.Contains(t, line, "the file was altered after it was written")
	_, err = os.Stat(filepath.Join(dir, "b.npy"))
	assert.True(t, os.IsNotExist(err), "no embeddings exported")
}

// TestDiskLimitBad: bad disk limits are refused in one line naming the
// flags (diskcap names the fields: cli.Exit renders them), before
// anything is made.
func TestDiskLimitBad(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--emulate-disk", "p3.2xlarge", "--disk-read", "1GB/s", "--workdir", filepath.Join(dir, "w")},
			"realrun: --emulate-disk p3.2xlarge: takes both limits from the profile; drop --disk-read and --disk-write, or --emulate-disk\n"},
		{[]string{"calibrate", "--disk-write", "fast", "--dir", filepath.Join(dir, "d")},
			`realrun: --disk-write: "fast" does not start with a number`},
	} {
		out, errOut, code := runCmd(tt.args...)
		assert.Equal(t, 2, code, "%v", tt.args)
		assert.Empty(t, out)
		assert.True(t, strings.HasPrefix(errOut, tt.want), "%v: %q", tt.args, errOut)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%v: one line: %q", tt.args, errOut)
	}
	assert.NoDirExists(t, filepath.Join(dir, "w"))
	assert.NoDirExists(t, filepath.Join(dir, "d"))
}

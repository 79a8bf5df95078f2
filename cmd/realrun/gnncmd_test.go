package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gnnGraphArgs writes a small graph with class signal in its features
// (node<TAB>values, .tsv) and homophilous edges, and returns the flags
// that read it.
func gnnGraphArgs(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	const n, classes, f = 240, 3, 6
	var edges, feats, labels strings.Builder
	var split [3]strings.Builder
	name := func(v int) string { return fmt.Sprintf("node %d", v) } // names with a space: tab-separated
	for v := 0; v < n; v++ {
		for k := 0; k < 4; k++ {
			u := rng.IntN(n/classes)*classes + v%classes // same class
			if rng.IntN(5) == 0 {
				u = rng.IntN(n)
			}
			if u != v {
				fmt.Fprintf(&edges, "%s\t%s\n", name(v), name(u))
			}
		}
		fmt.Fprintf(&feats, "%s\t", name(v))
		for k := 0; k < f; k++ {
			x := rng.NormFloat64()
			if k == v%classes {
				x += 1
			}
			if k > 0 {
				feats.WriteByte(' ')
			}
			fmt.Fprintf(&feats, "%.4f", x)
		}
		feats.WriteByte('\n')
		fmt.Fprintf(&labels, "%s\tc%d\n", name(v), v%classes)
		fmt.Fprintln(&split[max(v%5-2, 0)], name(v)) // 60% train, 20% valid, 20% test
	}
	files := map[string]string{"edges.tsv": edges.String(), "features.tsv": feats.String(), "labels.tsv": labels.String(),
		"train.txt": split[0].String(), "valid.txt": split[1].String(), "test.txt": split[2].String()}
	for file, s := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(s), 0o644))
	}
	p := func(file string) string { return filepath.Join(dir, file) }
	return []string{"--edges", p("edges.tsv"), "--delimiter", "tab", "--header", "no", "--features", p("features.tsv"), "--labels", p("labels.tsv"),
		"--train-nodes", p("train.txt"), "--valid-nodes", p("valid.txt"), "--test-nodes", p("test.txt")}
}

// TestGNNFlagErrors: every bad flag is one line on stderr, exit status
// 2, before any work (no work directory is made).
func TestGNNFlagErrors(t *testing.T) {
	graph := gnnGraphArgs(t)
	work := filepath.Join(t.TempDir(), "work")
	notDir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--features", "f.tsv"}, "--edges FILE is required"},
		{[]string{"--edges", "e.tsv", "--features", "f.tsv", "--labels", "l.tsv"}, "--train-nodes FILE is required"},
		{append(graph, "--layers", "0"), "--layers 0: must be at least 1"},
		{append(graph, "--layers", "6"), "--layers 6: want 1 to 5"},
		{append(graph, "--hidden", "-3"), "--hidden -3: must be at least 1"},
		{append(graph, "--heads", "0"), "--heads 0: must be at least 1"},
		{append(graph, "--model", "gat", "--hidden", "30", "--heads", "4"), "--hidden 30: gat splits the hidden width over the heads"},
		{append(graph, "--model", "gcn"), "--model gcn: want mlp, sage-mean, sage-pool, sage-lstm, gat"},
		{append(graph, "--fanouts", "10"), "--fanouts 10: 1 given for 2 layers"},
		{append(graph, "--fanouts", "10,25", "--layers", "3"), "--fanouts 10,25: 2 given for 3 layers"},
		{append(graph, "--fanouts", "10,many"), `--fanouts 10,many: "many" is not a count of neighbours`},
		{append(graph, "--fanouts", "10,-1"), "--fanouts 10,-1: each value must not be negative"},
		{append(graph, "--dropout", "1"), "--dropout 1: want a probability in [0, 1)"},
		{append(graph, "--dropout", "-0.5"), "--dropout -0.5: must not be negative"},
		{append(graph, "--lr", "0"), "--lr 0: must be positive"},
		{append(graph, "--epochs", "0"), "--epochs 0: must be at least 1"},
		{append(graph, "--batch", "0"), "--batch 0: must be at least 1"},
		{append(graph, "--workers", "0"), "--workers 0: must be at least 1"},
		{append(graph, "--eval-every", "0"), "--eval-every 0: must be at least 1"},
		{append(graph, "--progress", "loud"), `--progress "loud": want auto, bar, lines or none`},
		{append(graph, "--delimiter", "pipe"), `--delimiter "pipe"`},
		{append(graph, "--resume", "--overwrite"), "--overwrite and --resume contradict each other"},
		{append(graph, "--save-blocks", notDir), "--save-blocks " + notDir + ": not a directory"},
		{append(graph, "--cpuprofile", filepath.Join(notDir, "x", "cpu.pprof")), "--cpuprofile"},
		{append(graph, "--unseen", "skip"), "unknown flag --unseen"},
		{append(graph[:len(graph):len(graph)], "--labels", "missing.tsv"), "missing.tsv"},
		{append(graph, "--workdir", notDir), "exists and is not a GNN work directory"},
		{append(graph, "--micro-batches", "-1"), "--micro-batches -1: must not be negative"},
		{append(graph, "--micro-batch-memory", "0"), "--micro-batch-memory 0: must be positive"},
		{append(graph, "--micro-batch-memory", "lots"), `--micro-batch-memory: "lots" does not start with a number`},
		{append(graph, "--micro-split", "bogus"), "--micro-split bogus: want reg, range, random, metis"},
		{append(graph, "--micro-batch-memory", "10kB"), "--micro-batch-memory 10kB: too small: batch 1 of epoch 1 needs at least"},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			args := append([]string{"gnn"}, tt.args...)
			if !strings.Contains(strings.Join(args, " "), "--workdir") {
				args = append(args, "--workdir", work)
			}
			if !slices.Contains(args, "--progress") {
				args = append(args, "--progress", "none")
			}
			out, errOut, code := runCmd(args...)
			assert.Equal(t, 2, code, errOut)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
			assert.Contains(t, errOut, tt.msg)
			assert.NoDirExists(t, work, "refused before any work")
		})
	}
}

// TestGNNRun: a run end to end in each output format; the work
// directory refuses a second run without --resume and a resume with
// other settings, naming the flag; resumed with more epochs it goes on;
// realrun export writes the representations.
func TestGNNRun(t *testing.T) {
	graph := gnnGraphArgs(t)
	work := filepath.Join(t.TempDir(), "work")
	common := append(graph, "--hidden", "16", "--batch", "32", "--fanouts", "4,4", "--lr", "0.01", "--workers", "2", "--workdir", work, "--progress", "none")
	out, errOut, code := runCmd(append([]string{"gnn", "--epochs", "3", "--json"}, common...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "gnn: 240 nodes,")
	assert.Contains(t, errOut, "3 classes; train 144, valid 48, test 48; sage-mean, 2 layers, hidden 16, fanouts 4,4")
	var got struct {
		Settings map[string]any   `json:"settings"`
		Graph    map[string]any   `json:"graph"`
		Params   int              `json:"params"`
		Epochs   []map[string]any `json:"epochs"`
		Summary  map[string]any   `json:"summary"`
		Workdir  string           `json:"workdir"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got.Epochs, 3)
	for _, k := range []string{"epoch", "loss", "train_acc", "valid_acc", "test_acc", "epoch_s", "sample_s", "stall_s", "compute_s", "eval_s", "batches", "sampled_edges", "input_nodes", "nodes_per_s", "edges_per_s", "flops", "flops_per_s",
		"micro_batches", "max_micro_batches", "micro_input_nodes", "redundant_input_nodes", "peak_bytes", "split_s"} {
		assert.Contains(t, got.Epochs[0], k)
	}
	assert.Equal(t, got.Epochs[0]["batches"], got.Epochs[0]["micro_batches"], "no batch split")
	assert.Positive(t, got.Epochs[0]["peak_bytes"])
	for _, k := range []string{"best_valid_epoch", "best_valid_acc", "test_acc_at_best_valid", "final_test_acc", "train_s", "nodes_per_s", "edges_per_s", "flops_per_s"} {
		assert.Contains(t, got.Summary, k)
	}
	assert.Equal(t, map[string]any{"model": "sage-mean", "layers": 2.0, "hidden": 16.0, "heads": 4.0, "fanouts": "4,4", "batch": 32.0, "dropout": 0.5,
		"lr": 0.01, "epochs": 3.0, "seed": 1.0, "workers": 2.0, "eval_every": 1.0, "directed": false,
		"micro_batches": 0.0, "micro_batch_memory": 0.0, "micro_split": "reg"}, got.Settings)
	assert.Equal(t, 240.0, got.Graph["nodes"])
	assert.Equal(t, 6.0, got.Graph["features"])
	assert.Positive(t, got.Params)
	assert.Equal(t, work, got.Workdir)
	assert.Greater(t, got.Summary["final_test_acc"], 0.5, "above chance (1/3)")

	_, errOut, code = runCmd(append([]string{"gnn", "--epochs", "3"}, common...)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--workdir "+work+" holds a checkpoint after epoch 3: --resume continues it, --overwrite starts over")
	_, errOut, code = runCmd(append([]string{"gnn", "--epochs", "4", "--resume", "--dropout", "0.1"}, common...)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "trained with other settings: --dropout 0.5 (now 0.1)")

	out, errOut, code = runCmd(append([]string{"gnn", "--epochs", "4", "--resume", "--csv"}, common...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "resuming after epoch 3 (checkpoint verified)")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+4, "every epoch, the resumed ones too")
	assert.Equal(t, []string{"epoch", "loss", "train_acc", "valid_acc", "test_acc", "epoch_s", "sample_s", "stall_s", "compute_s", "eval_s"}, rows[0][:10])

	out, errOut, code = runCmd(append([]string{"gnn", "--epochs", "4", "--resume"}, common...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "nothing left to train")
	assert.Contains(t, out, "best validation accuracy")
	assert.Contains(t, out, "sage-mean, 2 layers, hidden 16, fanouts 4,4")

	// Export: npy with its names file; tsv named rows.
	dir := t.TempDir()
	npy := filepath.Join(dir, "repr.npy")
	out, errOut, code = runCmd("export", work, "--out", npy, "--json")
	require.Equal(t, 0, code, errOut)
	var exp map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &exp))
	assert.Equal(t, map[string]any{"workdir": work, "epoch": 4.0, "format": "npy", "out": npy, "names": filepath.Join(dir, "repr.names.txt"), "nodes": 240.0, "dim": 16.0}, exp)
	assert.Contains(t, errOut, "wrote "+npy)
	names, err := os.ReadFile(filepath.Join(dir, "repr.names.txt"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(names), "node 0\nnode 1\n"))
	fi, err := os.Stat(npy)
	require.NoError(t, err)
	assert.Equal(t, int64(128+240*16*4), fi.Size(), "a 128-byte header and float32 rows")
	tsv := filepath.Join(dir, "repr.tsv")
	_, errOut, code = runCmd("export", work, "--out", tsv)
	require.Equal(t, 0, code, errOut)
	text, err := os.ReadFile(tsv)
	require.NoError(t, err)
	first, _, _ := strings.Cut(string(text), "\n")
	nameCol, vals, ok := strings.Cut(first, "\t")
	require.True(t, ok)
	assert.Equal(t, "node 0", nameCol)
	assert.Len(t, strings.Fields(vals), 16)

	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"export", work, "--out", filepath.Join(dir, "r.bin")}, "cannot tell the format from the extension"},
		{[]string{"export", work, "--out", filepath.Join(dir, "r"), "--format", "pbg"}, "is a GNN work directory, exported as npy, tsv or csv"},
		{[]string{"export", work, "--out", tsv, "--names", filepath.Join(dir, "n.txt")}, "--names goes with npy"},
		{[]string{"eval", work}, "is a GNN work directory"},
	} {
		out, errOut, code := runCmd(tt.args...)
		assert.Equal(t, 2, code, errOut)
		assert.Empty(t, out)
		assert.Contains(t, errOut, tt.msg)
	}
}

// TestGNNMicroBatches: --micro-batches and --micro-batch-memory split
// the batches (the table's micro-batches column, the summary line, the
// JSON's records), train as the unsplit run does, and are settings of
// the work directory: resuming with others is refused, naming them.
func TestGNNMicroBatches(t *testing.T) {
	graph := gnnGraphArgs(t)
	common := append(graph, "--hidden", "16", "--batch", "48", "--fanouts", "4,4", "--lr", "0.01", "--workers", "2", "--progress", "none", "--epochs", "1")
	type epoch struct {
		Loss                float64 `json:"loss"`
		Batches             int     `json:"batches"`
		MicroBatches        int     `json:"micro_batches"`
		MaxMicroBatches     int     `json:"max_micro_batches"`
		InputNodes          int64   `json:"input_nodes"`
		MicroInputNodes     int64   `json:"micro_input_nodes"`
		RedundantInputNodes int64   `json:"redundant_input_nodes"`
		PeakBytes           int64   `json:"peak_bytes"`
	}
	var whole, split, fit struct {
		Settings map[string]any `json:"settings"`
		Epochs   []epoch        `json:"epochs"`
	}
	run := func(into any, args ...string) {
		t.Helper()
		out, errOut, code := runCmd(append(append([]string{"gnn", "--json", "--workdir", filepath.Join(t.TempDir(), "w")}, args...), common...)...)
		require.Equal(t, 0, code, errOut)
		require.NoError(t, json.Unmarshal([]byte(out), into))
	}
	run(&whole)
	run(&split, "--micro-batches", "3", "--micro-split", "RANGE")
	assert.Equal(t, 3.0, split.Settings["micro_batches"])
	assert.Equal(t, "range", split.Settings["micro_split"])
	w, s := whole.Epochs[0], split.Epochs[0]
	assert.Equal(t, 3, s.Batches, "144 training nodes in batches of 48")
	assert.Equal(t, 9, s.MicroBatches)
	assert.Equal(t, 3, s.MaxMicroBatches)
	assert.Equal(t, w.InputNodes, s.InputNodes)
	assert.Equal(t, s.MicroInputNodes-s.InputNodes, s.RedundantInputNodes)
	assert.Positive(t, s.RedundantInputNodes)
	assert.Less(t, s.PeakBytes, w.PeakBytes)
	assert.InDelta(t, w.Loss, s.Loss, 1e-5*w.Loss, "the same training")

	budget := w.PeakBytes * 3 / 4
	run(&fit, "--micro-batch-memory", strconv.FormatInt(budget, 10)+"B")
	f := fit.Epochs[0]
	assert.Greater(t, f.MaxMicroBatches, 1)
	assert.LessOrEqual(t, f.PeakBytes, budget)
	assert.InDelta(t, w.Loss, f.Loss, 1e-5*w.Loss)

	work := filepath.Join(t.TempDir(), "w")
	out, errOut, code := runCmd(append([]string{"gnn", "--workdir", work, "--micro-batches", "3"}, common...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "batch 48 in 3 micro-batches (reg)")
	assert.Regexp(t, `│ micro- +│`, out, "the table's micro-batches column")
	assert.Contains(t, out, "micro-batches (reg): 9 for 3 batches, up to 3 a batch;")
	_, errOut, code = runCmd(append([]string{"gnn", "--workdir", work, "--resume", "--epochs", "2", "--micro-batches", "2"}, common[:len(common)-2]...)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "trained with other settings: --micro-batches 3 (now 2)")
	_, errOut, code = runCmd(append([]string{"gnn", "--workdir", work, "--resume", "--epochs", "2"}, common[:len(common)-2]...)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--micro-batches 3 (now (none)), --micro-split reg (now (none))")
}

// TestGNNModels: every model trains through the command (one epoch) and
// mlp ignores the fanouts.
func TestGNNModels(t *testing.T) {
	graph := gnnGraphArgs(t)
	for _, model := range []string{"mlp", "sage-pool", "sage-lstm", "gat"} {
		t.Run(model, func(t *testing.T) {
			out, errOut, code := runCmd(append([]string{"gnn", "--model", model, "--epochs", "1", "--hidden", "8", "--heads", "2", "--fanouts", "3,3",
				"--workdir", filepath.Join(t.TempDir(), "w"), "--progress", "lines"}, graph...)...)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, out, model+", 2 layers, hidden 8")
			assert.Contains(t, errOut, "epoch 1/1: 1/1 batches")
			if model == "mlp" {
				assert.NotContains(t, out, "fanouts")
			}
		})
	}
}

// gnnProgress is a realrun gnn --progress lines line: epoch, batches
// done, batches.
var gnnProgress = regexp.MustCompile(`epoch (\d+)/\d+: (\d+)/(\d+) batches`)

// TestGNNSignal: SIGINT or SIGTERM stops realrun gnn at the next batch
// boundary with the exit status 128+signal, the last complete epoch
// kept; resumed, the run ends with the representations of a run never
// stopped.
func TestGNNSignal(t *testing.T) {
	dir := t.TempDir()
	graph := gnnGraphArgs(t)
	// Batches of one node: 144 an epoch, time to stop inside epoch 2.
	run := func(work string) []string {
		return append([]string{"gnn", "--epochs", "3", "--batch", "1", "--hidden", "64", "--fanouts", "5,5", "--workers", "1", "--workdir", work}, graph...)
	}
	ref := filepath.Join(dir, "ref")
	_, errOut, code := runCmd(append(run(ref), "--progress", "none")...)
	require.Equal(t, 0, code, errOut)
	want := filepath.Join(dir, "want.npy")
	_, errOut, code = runCmd("export", ref, "--out", want)
	require.Equal(t, 0, code, errOut)
	wantBytes, err := os.ReadFile(want)
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		sig  os.Signal
		code int
	}{{"SIGINT", os.Interrupt, 130}, {"SIGTERM", syscall.SIGTERM, 143}} {
		t.Run(tc.name, func(t *testing.T) {
			work := filepath.Join(dir, "w-"+tc.name)
			args := append(run(work), "--progress", "lines")
			var stderr *lockedBuffer
			var err error
			for attempt := 1; ; attempt++ {
				cmd := child(args...)
				stderr = &lockedBuffer{}
				cmd.Stderr = stderr
				require.NoError(t, cmd.Start())
				var epoch, done, total int
				stderr.waitFor(t, "epoch 2", func(s string) bool {
					for _, m := range gnnProgress.FindAllStringSubmatch(s, -1) {
						epoch, _ = strconv.Atoi(m[1])
						done, _ = strconv.Atoi(m[2])
						total, _ = strconv.Atoi(m[3])
						if epoch >= 2 {
							return true
						}
					}
					return strings.Contains(s, "realrun: ")
				})
				require.NoError(t, cmd.Process.Signal(tc.sig))
				err = cmd.Wait()
				if epoch == 2 && done < total-10 && err != nil || attempt == 3 {
					break
				}
				t.Logf("attempt %d: the signal came at batch %d/%d of epoch %d (exit: %v), too late to stop inside epoch 2; again", attempt, done, total, epoch, err)
				require.NoError(t, os.RemoveAll(work))
			}
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, stderr.String())
			assert.Equal(t, tc.code, exit.ExitCode(), stderr.String())
			// Stopped inside epoch 2 (on a machine so loaded that the
			// signal came later, after epoch 2).
			m := regexp.MustCompile(`holds ([12]) complete epochs`).FindStringSubmatch(stderr.String())
			require.NotNil(t, m, stderr.String())
			assert.Contains(t, lastLine(stderr.String()), "realrun: gnn: "+tc.name+": stopped; the checkpoint in "+work+" holds "+m[1]+" complete epochs; resume with: realrun "+strings.Join(args, " ")+" --resume")

			_, errOut, code := runCmd(append(args, "--resume", "--progress", "none")...)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, errOut, "resuming after epoch "+m[1]+" (checkpoint verified)")
			got := filepath.Join(dir, "got-"+tc.name+".npy")
			_, errOut, code = runCmd("export", work, "--out", got)
			require.Equal(t, 0, code, errOut)
			gotBytes, err := os.ReadFile(got)
			require.NoError(t, err)
			assert.Equal(t, wantBytes, gotBytes, "the representations after a stop and a resume differ from an uninterrupted run's")
		})
	}
}

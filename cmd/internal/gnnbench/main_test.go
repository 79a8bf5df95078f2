package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeRealrun stands in for bin/realrun gnn: it logs its arguments to
// $CALLS, makes the --save-blocks directory, and prints a JSON result
// whose test accuracy is 0.5 + seed/100 (+0.2 for a GNN).
const fakeRealrun = `#!/bin/sh
echo "$*" >>"$CALLS"
seed=0; model=; blocks=
while [ $# -gt 0 ]; do
	case "$1" in
	--seed) seed=$2; shift;;
	--model) model=$2; shift;;
	--save-blocks) blocks=$2; shift;;
	esac
	shift
done
[ -n "$blocks" ] && mkdir -p "$blocks"
acc=0.5$seed; [ "$model" = mlp ] || acc=0.7$seed
cat <<EOF
{"settings": {"model": "$model"}, "epochs": [
 {"epoch": 1, "loss": 1.5, "train_acc": 0.4, "valid_acc": null, "test_acc": null, "epoch_s": 2.0, "sample_s": 0.5, "compute_s": 1.0, "eval_s": 0, "batches": 4},
 {"epoch": 2, "loss": 1.0, "train_acc": 0.6, "valid_acc": 0.6, "test_acc": $acc, "epoch_s": 4.0, "sample_s": 0.5, "compute_s": 2.0, "eval_s": 1, "batches": 4, "flops": 5e9}]}
EOF
`

// fakePython stands in for /usr/bin/python3 and the PyTorch script:
// "-c" succeeds, anything else prints the script's JSON (3 s an epoch).
const fakePython = `#!/bin/sh
[ "$1" = -c ] && exit 0
echo "torch $*" >>"$CALLS"
echo '{"torch": "1.13", "blas": "openblas", "threads": 2, "epochs": [{"epoch": 1, "loss": 1.4, "batches": 4, "seconds": 3.0, "gemm_flops": 6e9}, {"epoch": 2, "loss": 0.9, "batches": 4, "seconds": 3.0, "gemm_flops": 6e9}], "train_s": 6, "valid_acc": 0.61, "test_acc": 0.69}'
`

func writeFile(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(text), mode))
}

func fakeSetup(t *testing.T) (dir string, args []string, calls string) {
	dir = t.TempDir()
	calls = filepath.Join(dir, "calls")
	t.Setenv("CALLS", calls)
	writeFile(t, filepath.Join(dir, "realrun"), fakeRealrun, 0o755)
	writeFile(t, filepath.Join(dir, "python"), fakePython, 0o755)
	for name, edges := range map[string]int{"small": 3, "big": 50, "mid": 10} {
		g := filepath.Join(dir, "graphs", name)
		writeFile(t, filepath.Join(g, "nodes.txt"), "a\nb\nc\n", 0o644)
		writeFile(t, filepath.Join(g, "edges.tsv"), strings.Repeat("a\tb\n", edges), 0o644)
		for _, s := range []string{"train", "valid", "test"} {
			writeFile(t, filepath.Join(g, s+".txt"), "a\n", 0o644)
		}
	}
	args = []string{"--realrun", filepath.Join(dir, "realrun"), "--python", filepath.Join(dir, "python"),
		"--graph-dir", filepath.Join(dir, "graphs"), "--out", filepath.Join(dir, "out"), "--seeds", "1,2,3",
		"--models", "mlp,sage-mean", "--speed-models", "sage-mean,gat", "--epochs", "2", "--runs", filepath.Join(dir, "runs.jsonl")}
	return dir, args, calls
}

func lines(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestReproduceWithFakes(t *testing.T) {
	dir, args, calls := fakeSetup(t)
	var out, errb bytes.Buffer
	require.NoError(t, run(args, &out, &errb), errb.String())

	// 3 graphs × 2 models × 3 seeds, plus gat once on each of the two
	// smallest graphs (the speed graphs by default).
	runs := lines(t, filepath.Join(dir, "runs.jsonl"))
	assert.Len(t, runs, 3*2*3+2)
	c := lines(t, calls)
	assert.Len(t, c, 3*2*3+2+4, "realrun runs and 4 PyTorch runs (sage-mean, gat × small, mid)")
	var torchCalls, saves int
	for _, l := range c {
		if strings.HasPrefix(l, "torch ") {
			torchCalls++
			assert.Contains(t, l, "--threads 2")
			assert.Contains(t, l, "--epochs 2")
		}
		if strings.Contains(l, "--save-blocks") {
			saves++
			assert.Contains(t, l, "--seed 1 ")
		}
		if strings.HasPrefix(l, "gnn ") {
			assert.Contains(t, l, "--workers 2")
			assert.Contains(t, l, "--epochs 2")
		}
	}
	assert.Equal(t, 4, torchCalls)
	assert.Equal(t, 4, saves)

	md, err := os.ReadFile(filepath.Join(dir, "out", "README.md"))
	require.NoError(t, err)
	s := string(md)
	assert.Equal(t, s, out.String())
	// sage-mean's seeds give 0.71, 0.72, 0.73: median 72.0, range 71.0–73.0.
	assert.Contains(t, s, "| small | test | 52.0 [51.0 – 53.0] | 72.0 [71.0 – 73.0] |")
	// speed: PyTorch 3 s, ours epoch median 3 s, compute 1.5 s.
	assert.Contains(t, s, "| small | sage-mean | 4 | 3.000 | 1.500 | 3.000 | 1.00× | 2.00× | 6.00 / 2.50 |")
	assert.NotContains(t, s, "| big | sage-mean | 4 |", "big is not a speed graph")
	assert.Contains(t, s, "small: sage-mean +20.0 points over mlp (clear of both seed ranges)")

	var rep Report
	b, err := os.ReadFile(filepath.Join(dir, "out", "gnn.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.Equal(t, []string{"small", "mid", "big"}, []string{rep.Graphs[0].Name, rep.Graphs[1].Name, rep.Graphs[2].Name})
	assert.Len(t, rep.Cells, 6, "gat ran for speed only: not in the accuracy table")
	assert.Equal(t, 50, rep.Graphs[2].EdgeLines)

	// A second reproduction takes every run from the runs file.
	require.NoError(t, run(args, &out, &errb))
	assert.Len(t, lines(t, calls), len(c), "nothing trained again")
	// Other seeds are new runs; the old ones are kept.
	require.NoError(t, run(append(args, "--seeds", "4", "--speed-graphs", "none"), &out, &errb))
	assert.Len(t, lines(t, calls), len(c)+3*2)
}

func TestRefusals(t *testing.T) {
	dir, args, _ := fakeSetup(t)
	for _, tc := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"unknown model", []string{"--models", "gcn"}, `unknown model "gcn"`},
		{"unknown graph", []string{"--graphs", "nope"}, "graph nope"},
		{"no realrun", []string{"--realrun", filepath.Join(dir, "missing")}, "make build"},
		{"no torch", []string{"--python", "/bin/false"}, "cannot import torch"},
		{"bad seeds", []string{"--seeds", "x"}, "--seeds"},
		{"no graphs", []string{"--graph-dir", t.TempDir()}, "make gnn-graphs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(append(append([]string{}, args...), tc.extra...), &out, &errb)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestFailedRunSaysWhich(t *testing.T) {
	dir, args, _ := fakeSetup(t)
	writeFile(t, filepath.Join(dir, "realrun"), "#!/bin/sh\necho 'realrun gnn: --eval-every: unknown flag' >&2\nexit 2\n", 0o755)
	var out, errb bytes.Buffer
	err := run(args, &out, &errb)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "small mlp seed 1")
	assert.Contains(t, err.Error(), "unknown flag")
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		assert.Equal(t, tc.want, median(tc.in))
	}
	assert.True(t, math.IsNaN(median(nil)))
}

func TestParseRealrun(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"not JSON", "oops", "realrun gnn --json"},
		{"no epochs", `{"epochs": []}`, "no epochs"},
		{"not evaluated", `{"epochs": [{"epoch": 3, "valid_acc": null, "test_acc": null}]}`, "epoch 3 has no validation or test accuracy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Run
			err := parseRealrun([]byte(tc.in), &r)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	var r Run
	require.NoError(t, parseRealrun([]byte(`{"epochs": [{"epoch": 1, "valid_acc": 0.5, "test_acc": 0.25, "compute_s": 2}]}`), &r))
	assert.Equal(t, 0.25, r.TestAcc)
	assert.Equal(t, 2.0, r.Epochs[0].ComputeSeconds)
}

func TestRealrunArgs(t *testing.T) {
	s := Shape{Layers: 3, Hidden: 64, Heads: 2, Fanouts: "5,10,15", Batch: 512, Dropout: 0.25, LR: 0.01, Epochs: 7}
	a := strings.Join(realrunArgs("/g", s, "gat", 3, 2, "/w", ""), " ")
	for _, want := range []string{"gnn --edges /g/edges.tsv --features /g/features.npy --feature-names /g/nodes.txt --labels /g/labels.tsv",
		"--train-nodes /g/train.txt --valid-nodes /g/valid.txt --test-nodes /g/test.txt", "--model gat --layers 3 --hidden 64 --heads 2",
		"--fanouts 5,10,15 --batch 512 --dropout 0.25 --lr 0.01 --epochs 7 --eval-every 7 --seed 3 --workers 2 --progress none --workdir /w --json"} {
		assert.Contains(t, a, want)
	}
	assert.NotContains(t, a, "--save-blocks")
	assert.Contains(t, strings.Join(realrunArgs("/g", s, "gat", 3, 2, "/w", "/b"), " "), "--save-blocks /b")
	assert.Equal(t, "s.py --graph /g --blocks /b --model gat --layers 3 --hidden 64 --heads 2 --dropout 0.25 --lr 0.01 --epochs 7 --threads 2 --seed 3",
		strings.Join(torchArgs("s.py", "/g", "/b", s, "gat", 3, 2), " "))
}

func TestShapeRules(t *testing.T) {
	for _, tc := range []struct {
		graph, model string
		epochs       int
		fanouts      string
		skip         bool
	}{
		{"ogbn-arxiv", "sage-mean", 20, "10,25", false},
		{"ogbn-arxiv", "sage-lstm", 20, "5,10", false},
		{"pubmed", "gat", 50, "10,25", false},
		{"pubmed", "sage-lstm", 50, "5,10", false},
		{"cora", "sage-lstm", 0, "", true},
		{"reddit", "sage-lstm", 0, "", true},
		{"reddit", "gat", 20, "10,25", false},
	} {
		s, skip := ShapeFor(tc.graph, tc.model)
		if tc.skip {
			assert.NotEmpty(t, skip, "%s %s", tc.graph, tc.model)
			continue
		}
		assert.Empty(t, skip)
		assert.Equal(t, tc.epochs, s.Epochs, "%s %s", tc.graph, tc.model)
		assert.Equal(t, tc.fanouts, s.Fanouts, "%s %s", tc.graph, tc.model)
	}
	c := Config{Graphs: []string{"cora", "ogbn-arxiv"}, Models: []string{"mlp", "sage-lstm"}, Seeds: []int{1, 2, 3},
		SpeedGraphs: []string{"ogbn-arxiv"}, SpeedModels: []string{"sage-lstm", "gat"}, Threads: 2}
	var got []string
	for _, r := range plan(c) {
		got = append(got, fmt.Sprintf("%s/%s/%d/%v", r.Graph, r.Model, r.Seed, r.Speed))
	}
	assert.Equal(t, []string{"cora/mlp/1/false", "cora/mlp/2/false", "cora/mlp/3/false",
		"ogbn-arxiv/mlp/1/false", "ogbn-arxiv/mlp/2/false", "ogbn-arxiv/mlp/3/false",
		"ogbn-arxiv/sage-lstm/1/true", "ogbn-arxiv/sage-lstm/2/false", "ogbn-arxiv/sage-lstm/3/false",
		"ogbn-arxiv/gat/1/true"}, got)
}

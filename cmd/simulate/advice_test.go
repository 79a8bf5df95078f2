package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/workload"
)

// trainedWorkdir trains one epoch of a small knowledge graph (120 nodes,
// 3 relations, 2,400 edges) with realrun's job, into a work directory
// whose training record holds non-default settings: p = 6, c = 3,
// beta under LRU with ordering seed 5, d = 24, ComplEx, batches of 500
// edges, 40 negatives, chunks of 20 edges.
func trainedWorkdir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	edges := filepath.Join(dir, "kg.tsv")
	var sb strings.Builder
	for k := range 2400 {
		fmt.Fprintf(&sb, "n%d\tr%d\tn%d\n", (k*7)%120, k%3, (k*13+k/120)%120)
	}
	require.NoError(t, os.WriteFile(edges, []byte(sb.String()), 0o644))
	o := job.Defaults
	o.Dataset, o.Edges, o.Workdir = "", edges, filepath.Join(dir, "work")
	o.Model, o.Dim, o.P, o.C, o.Ordering, o.Policy, o.OrderingSeed = "complex", 24, 6, 3, "beta", "lru", 5
	o.Batch, o.Negatives, o.Chunk = 500, 40, 20
	o.Workers, o.Eval = 1, "none"
	_, err := job.Train(o, nil, false, io.Discard)
	require.NoError(t, err)
	return o.Workdir
}

// TestGraphTrainedAsItWas: simulate --graph takes the work directory's
// training shape and Plan, says so in a note, and a flag given wins.
func TestGraphTrainedAsItWas(t *testing.T) {
	wd := trainedWorkdir(t)
	type want struct {
		p, c, dim, batch, negatives, chunk int
		model                              workload.Model
		orderings                          []string
		policy                             string
		seed                               int64
	}
	own := want{p: 6, c: 3, dim: 24, batch: 500, negatives: 40, chunk: 20, model: workload.ComplEx, orderings: []string{"beta"}, policy: "lru", seed: 5}
	for _, tt := range []struct {
		name  string
		flags []string
		want  func(w *want)
		note  string // in the note of what came from the directory
		not   string // not in it
	}{
		{name: "all from the directory", want: func(*want) {},
			note: "with --p 6 --c 3 --orderings beta --policy lru --ordering-seed 5 --dim 24 --model complex --batch 500 --negatives 40 --chunk 20 (its training record's, training.json)"},
		{name: "--batch wins", flags: []string{"--batch", "2000"}, want: func(w *want) { w.batch = 2000 },
			note: "--negatives 40", not: "--batch"},
		{name: "--negatives wins, the chunk stays", flags: []string{"--negatives", "100"}, want: func(w *want) { w.negatives = 100 },
			note: "--chunk 20", not: "--negatives"},
		{name: "--p and --c win", flags: []string{"--p", "4", "--c", "2"}, want: func(w *want) { w.p, w.c = 4, 2 },
			note: "--orderings beta", not: "--p 6"},
		{name: "--orderings wins", flags: []string{"--orderings", "hilbert,random"}, want: func(w *want) { w.orderings = []string{"hilbert", "random"} },
			note: "--policy lru", not: "--orderings"},
		{name: "--seed wins (as --ordering-seed)", flags: []string{"--seed", "0", "--policy", "belady"}, want: func(w *want) { w.seed, w.policy = 0, "belady" },
			note: "--c 3", not: "--ordering-seed"},
		{name: "--dim and --model win", flags: []string{"--dim", "8", "--model", "distmult"}, want: func(w *want) { w.dim, w.model = 8, workload.DistMult },
			note: "--batch 500", not: "--dim"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := own
			tt.want(&w)
			out, errOut, code := runCmd(append([]string{"--graph", wd, "--json"}, tt.flags...)...)
			require.Equal(t, 0, code, errOut)
			var got Output
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			assert.Equal(t, w.p, got.P)
			assert.Equal(t, w.c, got.C)
			assert.Equal(t, w.dim, got.Dim)
			assert.Equal(t, w.model, got.Training.Model)
			assert.Equal(t, w.batch, got.Training.Batch)
			assert.Equal(t, w.negatives, got.Training.Negatives)
			assert.Equal(t, w.chunk, got.Training.ChunkSize)
			assert.Equal(t, w.policy, got.Policy)
			assert.Equal(t, w.seed, got.Seed)
			var names []string
			for _, r := range got.Results {
				names = append(names, r.Ordering)
			}
			assert.Equal(t, w.orderings, names)
			require.NotEmpty(t, got.Notes)
			assert.Contains(t, got.Notes[0], "--graph "+wd+": simulated as it was trained")
			assert.Contains(t, got.Notes[0], tt.note)
			if tt.not != "" {
				assert.NotContains(t, got.Notes[0], tt.not)
			}
		})
	}
	// The human output says it too, and the summary shows the shape.
	out, errOut, code := runCmd("--graph", wd)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "d=24, complex, batch 500, 40 negatives, chunks of 20 edges")
	assert.Contains(t, out, "p=6 c=3 policy=lru ordering seed 5")
	assert.Contains(t, out, "note: --graph "+wd+": simulated as it was trained, with --p 6")
}

// TestGraphSweepTrainedAsItWas: simulate sweep --graph takes the
// directory's training shape, policy and seed, sweeps its p and c among
// the others and places its own Plan.
func TestGraphSweepTrainedAsItWas(t *testing.T) {
	wd := trainedWorkdir(t)
	out, errOut, code := runCmd("sweep", "--graph", wd, "--p", "2,4", "--orderings", "beta,hilbert", "--json")
	require.Equal(t, 0, code, errOut)
	var got SweepOutput
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, 24, got.Dim)
	assert.Equal(t, workload.Training{Model: workload.ComplEx, Dim: 24, Batch: 500, Negatives: 40, ChunkSize: 20}, got.Training)
	assert.Equal(t, []int{2, 4}, got.Ps, "--p given: the directory's p is not added")
	assert.Equal(t, []int{2, 3, 4}, got.Cs, "--c not given: the directory's c among the swept (those ≤ p)")
	require.NotEmpty(t, got.Notes)
	assert.Contains(t, got.Notes[0], "--policy lru --ordering-seed 5 --dim 24 --model complex --batch 500 --negatives 40 --chunk 20 and its --c 3 among the swept (its training record's, training.json)")

	out, errOut, code = runCmd("sweep", "--graph", wd, "--orderings", "beta,hilbert")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "swept p ∈ {6, 8, 16, 32, 64}, c ∈ {2, 3, 4, 8, 16}")
	assert.Regexp(t, `note: the directory's own Plan, beta at p=6 c=3 on p3.2xlarge: [0-9.]+ ms per epoch, rank [0-9]+ of [0-9]+ \([0-9.]+× the fastest\)`, out)
}

// TestGraphTrainedBadInput: a training record that does not parse, and a
// flag at odds with the directory's settings, are one line and status 2
// naming where the setting came from.
func TestGraphTrainedBadInput(t *testing.T) {
	wd := trainedWorkdir(t)
	bad := tinyWorkdir(t).Dir
	require.NoError(t, os.WriteFile(filepath.Join(bad, "training.json"), []byte(`{"--batch": "lots"}`), 0o644))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--graph", bad}, `--graph: ` + filepath.Join(bad, "training.json") + `: --batch "lots" is not a count`},
		{[]string{"sweep", "--graph", bad}, `--batch "lots" is not a count`},
		{[]string{"--graph", wd, "--p", "2"}, "--p 2 --c 3: c = 3 exceeds p = 2 (with --graph " + wd + "'s --c 3 --orderings beta"},
	} {
		out, errOut, code := runCmd(tt.args...)
		assert.Equal(t, 2, code, "%v", tt.args)
		assert.Empty(t, out, "%v", tt.args)
		assert.Contains(t, errOut, tt.want, "%v", tt.args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%v: one line: %q", tt.args, errOut)
	}
}

// TestSweepInMemory: the sweep ranks the systems that keep every
// parameter in memory with the partitioned ones where the parameters fit
// the memory share — by the simulator's own account of them — and leaves
// them out, with the reason, where they do not.
func TestSweepInMemory(t *testing.T) {
	st := tinyWorkdir(t)
	params := int64(tinyNodes * tinyDim * 8) // float32 and Adagrad: 46,080 B
	fb := int64(14951 * 1000 * 8)            // fb15k at d = 1000: 119,608,000 B
	for _, tt := range []struct {
		name     string
		args     []string
		bytes    int64    // every parameter with its Adagrad state
		first    string   // the fastest row's system
		ranked   []string // the in-memory systems ranked
		unfit    []string // simulated, but a batch does not fit the GPU memory left
		leftOut  []string // left out
		reason   string   // in-gpu's
		noMemory bool     // --in-memory=false
	}{
		{name: "a small graph fits: in-gpu first", args: []string{"--graph", st.Dir}, bytes: params,
			first: "in-gpu", ranked: []string{"in-gpu", "marius-inmem", "dglke"}},
		{name: "the parameters fit 80% of the GPU, a batch not the rest", args: []string{"--dataset", "fb15k", "--dim", "1000", "--gpu-memory", fmt.Sprint(fb*5/4+2) + "B"}, bytes: fb,
			first: "marius-inmem", ranked: []string{"marius-inmem", "dglke"}, unfit: []string{"in-gpu"}},
		{name: "the parameters need a byte more than 80% of the GPU", args: []string{"--dataset", "fb15k", "--dim", "1000", "--gpu-memory", fmt.Sprint(fb*5/4-2) + "B"}, bytes: fb,
			first: "marius-inmem", ranked: []string{"marius-inmem", "dglke"}, leftOut: []string{"in-gpu"},
			reason: "every parameter with its Adagrad state, 0.1 GB, needs more than 80% of the 0.1 GB GPU memory"},
		{name: "a large graph does not fit", args: []string{"--dataset", "freebase86m", "--dim", "100"},
			first: "marius", leftOut: []string{"marius-inmem", "dglke", "in-gpu"}, reason: "68.9 GB, needs more than 80% of the 16.0 GB GPU memory"},
		{name: "--in-memory=false", args: []string{"--graph", st.Dir, "--in-memory=false"}, first: "marius", noMemory: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"sweep", "--p", "2,4", "--c", "2", "--orderings", "beta", "--json"}, tt.args...)
			out, errOut, code := runCmd(args...)
			require.Equal(t, 0, code, errOut)
			var got SweepOutput
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			if tt.noMemory {
				assert.Empty(t, got.InMemory)
			} else {
				assert.Equal(t, []string{"marius-inmem", "dglke", "in-gpu"}, got.InMemory)
			}
			var ranked, unfit []string
			for _, r := range got.Rows {
				if !r.InMemory {
					assert.Equal(t, "marius", r.System)
					continue
				}
				if r.Fits {
					ranked = append(ranked, r.System)
					assert.Positive(t, r.Rank, r.System)
				} else {
					unfit = append(unfit, r.System)
					assert.False(t, r.BatchFits, r.System)
				}
				assert.Zero(t, r.P+r.C, "%s: no p or c", r.System)
				assert.Equal(t, tt.bytes, r.BufferBytes, "%s: every parameter with its Adagrad state", r.System)
				where := "CPU"
				if r.System == "in-gpu" {
					where = "GPU"
				}
				assert.Equal(t, where, r.Memory, r.System)
			}
			assert.Equal(t, tt.ranked, ranked, "ranked, fastest first")
			assert.Equal(t, tt.unfit, unfit)
			var left []string
			for _, l := range got.LeftOut {
				left = append(left, l.System)
				assert.Contains(t, []string{"CPU", "GPU"}, l.Where)
				if l.System == "in-gpu" {
					assert.Contains(t, l.Reason, tt.reason)
				}
			}
			assert.Equal(t, tt.leftOut, left)
			require.NotEmpty(t, got.Rows)
			assert.Equal(t, tt.first, got.Rows[0].System, "the fastest")
		})
	}
	// The human table names them among the orderings, ranked with them, and
	// the left-out ones in one line.
	out, errOut, code := runCmd("sweep", "--graph", st.Dir, "--p", "2,4", "--c", "2", "--orderings", "beta", "--top", "4")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `│ +1 │ +— │ — │ in-gpu +│`, out)
	assert.Contains(t, out, "ordering or system")
	assert.Contains(t, out, "fastest: in-gpu (every parameter in GPU memory) on p3.2xlarge")
	// The plot draws each as a level line across the swept p.
	svg := filepath.Join(t.TempDir(), "sweep.svg")
	_, errOut, code = runCmd("sweep", "--graph", st.Dir, "--p", "2,4", "--c", "2", "--orderings", "beta", "--plot", svg)
	require.Equal(t, 0, code, errOut)
	data, err := os.ReadFile(svg)
	require.NoError(t, err)
	assert.Contains(t, string(data), "in-gpu (in memory)")
	assert.Contains(t, string(data), "epoch (ms)")
	out, errOut, code = runCmd("sweep", "--p", "8,32", "--c", "4", "--orderings", "beta")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "in memory, not ranked on p3.2xlarge: every parameter with its Adagrad state is 68.9 GB: marius-inmem and dglke need more than 80% of its 65.5 GB CPU memory, in-gpu needs more than 80% of its 16.0 GB GPU memory\n")
	assert.NotContains(t, out, "ordering or system")
}

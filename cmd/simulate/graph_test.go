package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

// Tiny work directory: 360 nodes at p = 12 (30 rows a partition), so at
// every p' dividing 12 a partition is whole partitions of the directory's
// and its buckets are sums of the directory's buckets.
const (
	tinyNodes = 360
	tinyP     = 12
	tinyDim   = 16
)

// tinyWorkdir builds the work directory with the store builder: 6,000
// seeded edges over 4 relations, a tenth of them held out.
func tinyWorkdir(t *testing.T) *store.Store {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "work")
	b, err := store.NewBuilder(dir, "tiny.tsv", tinyNodes, 4, tinyP, 7)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 7))
	for k := range 6000 {
		sp := store.Train
		if k%10 == 9 {
			sp = store.Test
		}
		// A skewed source: low ids far more often.
		src := int64(rng.IntN(1 + rng.IntN(tinyNodes)))
		require.NoError(t, b.Add(src, int64(rng.IntN(4)), int64(rng.IntN(tinyNodes)), sp))
	}
	st, err := b.Finish(tinyDim, "distmult", 0.1)
	require.NoError(t, err)
	return st
}

// coarsen sums the directory's buckets into p' partitions (p' divides p).
func coarsen(b [][]int64, p int) [][]int64 {
	k := len(b) / p
	out := make([][]int64, p)
	for i := range out {
		out[i] = make([]int64, p)
	}
	for i, row := range b {
		for j, n := range row {
			out[i/k][j/k] += n
		}
	}
	return out
}

func TestGraphBucketsAreSumsOfTheDirectorys(t *testing.T) {
	st := tinyWorkdir(t)
	g, err := openGraph(st.Dir)
	require.NoError(t, err)
	for _, p := range []int{1, 2, 3, 4, 6, 12} {
		h, err := g.Histogram(p)
		require.NoError(t, err, "p=%d", p)
		assert.Equal(t, coarsen(st.M.Buckets, p), h.Edges, "p=%d", p)
	}
	// Not a divisor: every edge still counted once.
	h, err := g.Histogram(5)
	require.NoError(t, err)
	_, total := h.Flat()
	assert.Equal(t, st.M.Train, total)
}

func TestGraphSimulate(t *testing.T) {
	st := tinyWorkdir(t)
	for _, p := range []int{2, 3, 5, 8, 12} {
		t.Run(fmt.Sprint("p=", p), func(t *testing.T) {
			out, errOut, code := runCmd("--graph", st.Dir, "--p", fmt.Sprint(p), "--c", "2", "--orderings", "beta", "--json")
			require.Equal(t, 0, code, errOut)
			var got Output
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			assert.Equal(t, st.Dir, got.Dataset)
			assert.EqualValues(t, tinyNodes, got.Nodes)
			assert.Equal(t, st.M.Train, got.TrainEdges)
			assert.Equal(t, tinyDim, got.Dim, "the directory's d")
			assert.Equal(t, workload.DistMult, got.Training.Model, "the directory's model")
			rows := (int64(tinyNodes) + int64(p) - 1) / int64(p)
			assert.Equal(t, rows*tinyDim*8, got.PartitionBytes, "ceil(N/p)·d·8 B (Marius: float32 and Adagrad)")
			require.NotNil(t, got.Graph)
			assert.Equal(t, 4, got.Graph.Relations)
			assert.Equal(t, "tiny.tsv", got.Graph.Source)
		})
	}
	// --dim and --model override the directory's.
	out, errOut, code := runCmd("--graph", st.Dir, "--p", "4", "--c", "2", "--orderings", "beta", "--dim", "32", "--model", "complex", "--json")
	require.Equal(t, 0, code, errOut)
	var got Output
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, 32, got.Dim)
	assert.Equal(t, workload.ComplEx, got.Training.Model)
	assert.EqualValues(t, 90*32*8, got.PartitionBytes)
}

// TestGraphGolden compares the human output of simulate and simulate
// sweep on the tiny graph (its directory's path written WORKDIR).
func TestGraphGolden(t *testing.T) {
	st := tinyWorkdir(t)
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"graph_simulate.txt", []string{"--graph", st.Dir, "--p", "8", "--c", "4", "--orderings", "beta,hilbert,row-major"}},
		{"graph_sweep.txt", []string{"sweep", "--graph", st.Dir, "--p", "2,4,6,12", "--c", "2,4", "--top", "6"}},
	} {
		out, errOut, code := runCmd(tt.args...)
		require.Equal(t, 0, code, errOut)
		assertGolden(t, filepath.Join("testdata", tt.golden), strings.ReplaceAll(out, st.Dir, "WORKDIR"))
	}
}

func TestGraphSweep(t *testing.T) {
	st := tinyWorkdir(t)
	out, errOut, code := runCmd("sweep", "--graph", st.Dir, "--p", "2,3,4,6,12", "--c", "2", "--orderings", "beta", "--json")
	require.Equal(t, 0, code, errOut)
	var got SweepOutput
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.EqualValues(t, tinyNodes, got.Nodes)
	assert.Equal(t, st.M.Train, got.TrainEdges)
	assert.Equal(t, tinyDim, got.Dim)
	g, err := openGraph(st.Dir)
	require.NoError(t, err)
	seen := map[int]bool{}
	for _, r := range got.Rows {
		if r.InMemory {
			continue // no p (TestSweepInMemory)
		}
		seen[r.P] = true
		rows := (int64(tinyNodes) + int64(r.P) - 1) / int64(r.P)
		assert.Equal(t, rows*tinyDim*8, r.PartitionBytes, "p=%d", r.P)
		h, err := g.Histogram(r.P)
		require.NoError(t, err)
		assert.Equal(t, nonEmpty(h.Edges), r.Batches, "p=%d: one batch per non-empty bucket of the graph's", r.P)
	}
	assert.Len(t, seen, 5)
	// The sweep's row at p equals simulate's at p: the same buckets.
	one, errOut, code := runCmd("--graph", st.Dir, "--p", "6", "--c", "2", "--orderings", "beta", "--json")
	require.Equal(t, 0, code, errOut)
	var single Output
	require.NoError(t, json.Unmarshal([]byte(one), &single))
	for _, r := range got.Rows {
		if r.P == 6 {
			assert.InDelta(t, single.Results[0].EpochSeconds, r.EpochSeconds, 1e-9)
		}
	}
}

func TestGraphMachines(t *testing.T) {
	st := tinyWorkdir(t)
	out, errOut, code := runCmd("--graph", st.Dir, "--machines", "2", "--p", "4", "--json")
	require.Equal(t, 0, code, errOut)
	var got sim.PBGPrediction
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, st.Dir, got.Dataset)
	assert.Equal(t, workload.PartitionBytes(tinyNodes, 4, tinyDim, true), got.PartitionBytes)
	out, errOut, code = runCmd("sweep", "--graph", st.Dir, "--machines", "1,2", "--p", "2,4", "--json")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"dataset": "`+st.Dir+`"`)
}

func TestGraphBadInput(t *testing.T) {
	st := tinyWorkdir(t)
	dir := t.TempDir()
	hist := filepath.Join(dir, "hist.json")
	require.NoError(t, os.WriteFile(hist, []byte(`{"p": 2, "edges": [[1, 2], [3, 4]], "nodes": 50}`), 0o644))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--graph", st.Dir, "--dataset", "twitter"}, "--graph and --dataset"},
		{[]string{"--graph", st.Dir, "--edges", "skewed"}, "--graph and --edges"},
		{[]string{"--graph", st.Dir, "--skew", "2"}, "--graph and --skew"},
		{[]string{"--graph", filepath.Join(dir, "none")}, "--graph: work directory"},
		{[]string{"--graph", ""}, "--graph: give a realrun work directory"},
		{[]string{"--graph", st.Dir, "--p", "400", "--c", "2"}, "more partitions than the 360 nodes"},
		{[]string{"--graph", st.Dir, "--machines", "2", "--p", "400"}, "more partitions than the 360 nodes"},
		{[]string{"sweep", "--graph", st.Dir, "--dataset", "twitter"}, "--graph and --dataset"},
		{[]string{"sweep", "--graph", st.Dir, "--p", "4,400"}, "more partitions than the 360 nodes"},
		{[]string{"--edges", hist, "--p", "4"}, "histogram has p = 2 but --p is 4: give --p 2, or --graph WORKDIR for any p"},
		{[]string{"sweep", "--edges", hist, "--p", "4,8"}, "histogram has p = 2 only, not one of --p 4,8: give --p 2, or --graph WORKDIR"},
	} {
		out, errOut, code := runCmd(tt.args...)
		assert.Equal(t, 2, code, "%v", tt.args)
		assert.Empty(t, out, "%v", tt.args)
		assert.Contains(t, errOut, tt.want, "%v", tt.args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%v: one line: %q", tt.args, errOut)
	}
}

// TestEdgesHistogram: a histogram with the graph's sizes describes the
// graph and sets the default p; an old one (no sizes) says whose sizes
// are used; the sweep leaves out the p it lacks, with a line.
func TestEdgesHistogram(t *testing.T) {
	st := tinyWorkdir(t)
	out, errOut, code := runCmd("--edges", st.HistogramPath(), "--c", "4", "--orderings", "beta", "--json")
	require.Equal(t, 0, code, errOut)
	var got Output
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, tinyP, got.P, "the histogram's p when --p is not given")
	assert.EqualValues(t, tinyNodes, got.Nodes)
	assert.Equal(t, st.M.Train, got.TrainEdges)
	assert.Equal(t, nonEmpty(st.M.Buckets), got.Results[0].Batches, "one batch per non-empty bucket")

	old := filepath.Join(t.TempDir(), "old.json")
	require.NoError(t, os.WriteFile(old, []byte(`{"p": 2, "edges": [[100000, 0], [0, 100000]]}`), 0o644))
	out, errOut, code = runCmd("--edges", old, "--c", "2", "--orderings", "beta")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "freebase86m: 200000 train edges")
	assert.Contains(t, out, "note: --edges "+old+" gives no node count")
	assert.Contains(t, out, "partitions are sized from --dataset freebase86m's 86100000 nodes, the 200000 training edges are the histogram's; --graph WORKDIR uses the graph's own sizes")

	out, errOut, code = runCmd("sweep", "--edges", st.HistogramPath(), "--p", "4,12", "--c", "2", "--orderings", "beta")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "swept p ∈ {12}")
	assert.Contains(t, out, "note: p = 4 left out: --edges "+st.HistogramPath()+" holds its buckets at p = 12 only")
}

// nonEmpty counts the buckets with edges: each is one batch of the tiny
// graph (fewer edges than a batch of 50,000).
func nonEmpty(b [][]int64) int {
	n := 0
	for _, row := range b {
		for _, x := range row {
			if x > 0 {
				n++
			}
		}
	}
	return n
}

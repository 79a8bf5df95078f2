package gnn

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/workdir"
)

// plantedGraph writes, in data.WriteFiles's layout, a graph of n nodes
// in classes classes whose features carry a weak class signal
// (signal·μ_class + unit Gaussian noise, f features) and whose edges
// (degree edges per node) stay in the node's class with probability
// homophily: averaging over neighbours sharpens the class, so a GNN
// beats an MLP. 60% of the nodes train, 20% validate, 20% test.
func plantedGraph(t testing.TB, dir string, n, classes, f, degree int, signal, homophily float64, seed uint64) data.Files {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	class := make([]int, n)
	byClass := make([][]int, classes)
	for v := range class {
		class[v] = v % classes
		byClass[class[v]] = append(byClass[class[v]], v)
	}
	mu := make([][]float64, classes)
	for c := range mu {
		mu[c] = make([]float64, f)
		for k := range mu[c] {
			mu[c][k] = rng.NormFloat64()
		}
	}
	name := func(v int) string { return fmt.Sprintf("n%03d", v) }
	var edges, nodes, labels strings.Builder
	var x []float32
	for v := 0; v < n; v++ {
		for k := 0; k < degree; k++ {
			u := rng.IntN(n)
			if rng.Float64() < homophily {
				u = byClass[class[v]][rng.IntN(len(byClass[class[v]]))]
			}
			if u != v {
				fmt.Fprintf(&edges, "%s\t%s\n", name(v), name(u))
			}
		}
		fmt.Fprintln(&nodes, name(v))
		fmt.Fprintf(&labels, "%s\tclass%d\n", name(v), class[v])
		for k := 0; k < f; k++ {
			x = append(x, float32(signal*mu[class[v]][k]+rng.NormFloat64()))
		}
	}
	perm := rng.Perm(n)
	var split [3]strings.Builder
	for i, v := range perm {
		s := 0
		switch {
		case i >= n*8/10:
			s = 2
		case i >= n*6/10:
			s = 1
		}
		fmt.Fprintln(&split[s], name(v))
	}
	write := func(file, s string) string {
		p := filepath.Join(dir, file)
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	var npy bytes.Buffer
	npy.Write(npyHeader(n, f))
	require.NoError(t, binary.Write(&npy, binary.LittleEndian, x))
	return data.Files{
		Edges:        write("edges.tsv", edges.String()),
		Format:       graph.Format{Delimiter: graph.DelimTab, Header: graph.HeaderNo},
		Features:     write("features.npy", npy.String()),
		FeatureNames: write("nodes.txt", nodes.String()),
		Labels:       write("labels.tsv", labels.String()),
		TrainNodes:   write("train.txt", split[0].String()),
		ValidNodes:   write("valid.txt", split[1].String()),
		TestNodes:    write("test.txt", split[2].String()),
	}
}

// small are options that train fast on plantedGraph.
func small(files data.Files, model string) Options {
	o := Defaults
	o.Files, o.Model, o.Hidden, o.Heads, o.Batch, o.Epochs, o.Workers, o.Fanouts = files, model, 16, 2, 64, 3, 2, []int{5, 5}
	o.LR, o.Dropout = 0.01, 0.2
	return o
}

// TestTrainLearns: on a graph whose neighbourhoods carry the class, every
// model is well above chance (1/3), and sage-mean above the mlp; every
// epoch is recorded with its accuracies and times.
func TestTrainLearns(t *testing.T) {
	files := plantedGraph(t, t.TempDir(), 600, 3, 8, 6, 0.5, 0.9, 1)
	acc := map[string]float64{}
	for _, model := range Models {
		t.Run(model, func(t *testing.T) {
			o := small(files, model)
			o.Epochs = 6
			if model == "sage-lstm" || model == "gat" {
				o.Epochs = 4
			}
			res, err := Train(o)
			require.NoError(t, err)
			require.Len(t, res.Epochs, o.Epochs)
			for i, e := range res.Epochs {
				assert.Equal(t, i+1, e.Epoch)
				assert.True(t, e.Loss > 0 && !math.IsInf(e.Loss, 0), "loss %v", e.Loss)
				assert.Equal(t, 6, e.Batches, "360 training nodes in batches of 64")
				require.NotNil(t, e.ValidAcc)
				require.NotNil(t, e.TestAcc)
				assert.Greater(t, e.EpochSeconds, 0.0)
				if model == "mlp" {
					assert.Zero(t, e.SampledEdges, "an mlp samples no neighbours")
				} else {
					assert.Positive(t, e.SampledEdges)
				}
			}
			last := res.Epochs[len(res.Epochs)-1]
			assert.Less(t, last.Loss, res.Epochs[0].Loss, "the loss falls")
			// The features alone reach about 0.6 (Bayes: about 0.75), the
			// neighbourhoods over 0.9.
			floor := 0.75
			if model == "mlp" {
				floor = 0.5
			}
			assert.Greater(t, *last.TestAcc, floor, "well above chance (1/3)")
			assert.Equal(t, 600, res.Graph.Nodes)
			assert.Equal(t, 3, res.Graph.Classes)
			assert.Equal(t, 360, res.Graph.Train)
			assert.Positive(t, res.Params)
			assert.Equal(t, last.TestAcc, res.Summary.FinalTestAcc)
			assert.NotZero(t, res.Summary.BestValidEpoch)
			acc[model] = *last.TestAcc
			t.Logf("%s: test accuracy %.3f after %d epochs (loss %.3f → %.3f)", model, *last.TestAcc, o.Epochs, res.Epochs[0].Loss, last.Loss)
		})
	}
	if acc["mlp"] > 0 && acc["sage-mean"] > 0 {
		assert.Greater(t, acc["sage-mean"], acc["mlp"]+0.15, "the neighbours carry the class")
	}
}

// checkpointParams returns the parameter bytes of dir's checkpoint.
func checkpointParams(t *testing.T, dir string) ([]byte, []Epoch) {
	t.Helper()
	c, err := readCheckpoint(dir)
	require.NoError(t, err)
	require.NotNil(t, c)
	return c.params, c.Records
}

// untimed is an epoch record without its times (which differ between
// runs).
func untimed(es []Epoch) []Epoch {
	out := append([]Epoch(nil), es...)
	for i := range out {
		out[i].EpochSeconds, out[i].SampleSeconds, out[i].ComputeSeconds, out[i].EvalSeconds, out[i].StallSeconds, out[i].SplitSeconds = 0, 0, 0, 0, 0, 0
		out[i].NodesPerSecond, out[i].EdgesPerSecond, out[i].FLOPsPerSecond = 0, 0, 0
	}
	return out
}

// TestResumeEqualsUninterrupted: a run stopped part-way through an epoch
// keeps the last complete epoch; resumed, it ends with the parameters and
// records of a run never stopped (the random choices of a batch depend on
// the seed, the epoch and the batch alone).
func TestResumeEqualsUninterrupted(t *testing.T) {
	files := plantedGraph(t, t.TempDir(), 300, 3, 8, 5, 0.5, 0.8, 2)
	for _, model := range Models {
		t.Run(model, func(t *testing.T) {
			o := small(files, model)
			o.Epochs, o.EvalEvery = 4, 2
			o.Workdir = filepath.Join(t.TempDir(), "straight")
			straight, err := Train(o)
			require.NoError(t, err)
			wantParams, wantRecords := checkpointParams(t, o.Workdir)

			o.Workdir = filepath.Join(t.TempDir(), "stopped")
			stop := make(chan struct{})
			o.Stop = stop
			o.Progress = func(p Progress) {
				if p.Epoch == 3 && p.Batch == 2 {
					close(stop)
				}
			}
			part, err := Train(o)
			var se *StopError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, 2, se.Epochs)
			assert.Len(t, part.Epochs, 2, "the epoch under way is dropped")
			_, recs := checkpointParams(t, o.Workdir)
			assert.Len(t, recs, 2)

			o.Stop, o.Progress, o.Resume = nil, nil, true
			resumed, err := Train(o)
			require.NoError(t, err)
			assert.Equal(t, 2, resumed.Resumed)
			gotParams, gotRecords := checkpointParams(t, o.Workdir)
			assert.Equal(t, wantParams, gotParams, "the same final parameters")
			assert.Equal(t, untimed(wantRecords), untimed(gotRecords))
			assert.Equal(t, untimed(straight.Epochs), untimed(resumed.Epochs))
			assert.Nil(t, resumed.Epochs[0].ValidAcc, "epoch 1 was not evaluated (every 2nd)")
			assert.NotNil(t, resumed.Epochs[1].ValidAcc)
		})
	}
}

// TestWorkdirRefusals: a directory holding a checkpoint is resumed only
// with the same inputs and settings, naming what differs; without
// resume or overwrite it is refused; overwrite starts over.
func TestWorkdirRefusals(t *testing.T) {
	dir := t.TempDir()
	files := plantedGraph(t, dir, 120, 3, 4, 3, 1, 0.8, 3)
	o := small(files, "sage-mean")
	o.Epochs, o.Workdir = 2, filepath.Join(t.TempDir(), "work")
	_, err := Train(o)
	require.NoError(t, err)

	var we *WorkdirError
	_, err = Train(o)
	require.ErrorAs(t, err, &we)
	assert.Equal(t, HoldsCheckpoint, we.Kind)
	assert.Equal(t, 2, we.Epoch)

	o.Resume = true
	o2 := o
	o2.Hidden = 32
	_, err = Train(o2)
	require.ErrorAs(t, err, &we)
	assert.Equal(t, OtherSettings, we.Kind)
	assert.Equal(t, []string{"hidden 16 (now 32)"}, we.Diffs)

	o2 = o
	o2.Epochs = 1
	_, err = Train(o2)
	require.ErrorAs(t, err, &we)
	assert.Equal(t, TooFewEpochs, we.Kind)

	res, err := Train(o) // as many epochs as trained: nothing to do
	require.NoError(t, err)
	assert.Len(t, res.Epochs, 2)

	// An input changed since: its identity differs.
	valid, err := os.ReadFile(files.ValidNodes)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(files.ValidNodes, valid[:len(valid)-5], 0o644)) // one node fewer
	_, err = Train(o)
	require.ErrorAs(t, err, &we)
	assert.Equal(t, OtherSettings, we.Kind)
	require.Len(t, we.Diffs, 1)
	assert.True(t, strings.HasPrefix(we.Diffs[0], "valid-nodes "+files.ValidNodes), we.Diffs[0])
	assert.NotContains(t, err.Error(), "--", "no flag names in the library's errors")

	o.Resume, o.Overwrite = false, true
	o.Epochs = 1
	res, err = Train(o)
	require.NoError(t, err)
	assert.Len(t, res.Epochs, 1, "started over")

	// Held by another run.
	unlock, err := workdir.LockDir(o.Workdir, ours)
	require.NoError(t, err)
	_, err = Train(o)
	unlock()
	require.ErrorAs(t, err, &we)
	assert.Equal(t, Locked, we.Kind)
	assert.Contains(t, err.Error(), "is used by process")

	// Not a GNN work directory.
	o.Overwrite, o.Workdir = false, dir
	_, err = Train(o)
	require.ErrorAs(t, err, &we)
	assert.Equal(t, NotWorkdir, we.Kind)
	assert.FileExists(t, files.Edges, "nothing removed")
}

// TestStopWithoutCheckpoint: a stop in the first epoch leaves the work
// directory with its settings and no checkpoint, which a later run
// without resume trains in from the start.
func TestStopWithoutCheckpoint(t *testing.T) {
	files := plantedGraph(t, t.TempDir(), 120, 3, 4, 3, 1, 0.8, 4)
	o := small(files, "mlp")
	o.Workdir = filepath.Join(t.TempDir(), "work")
	stop := make(chan struct{})
	close(stop)
	o.Stop = stop
	_, err := Train(o)
	var se *StopError
	require.ErrorAs(t, err, &se)
	assert.Zero(t, se.Epochs)
	assert.NoFileExists(t, filepath.Join(o.Workdir, CheckpointFile))
	o.Stop = nil
	res, err := Train(o)
	require.NoError(t, err)
	assert.Len(t, res.Epochs, o.Epochs)
}

// TestOptionsCheck: every bad option is a FieldError naming it.
func TestOptionsCheck(t *testing.T) {
	base := Defaults
	base.Graph = &data.Graph{}
	tests := []struct {
		edit  func(*Options)
		field string
		msg   string
	}{
		{func(o *Options) { o.Model = "gcn" }, "model", "want mlp, sage-mean"},
		{func(o *Options) { o.Layers = 0 }, "layers", "want 1 to 5"},
		{func(o *Options) { o.Layers = 6 }, "layers", "want 1 to 5"},
		{func(o *Options) { o.Hidden = 0 }, "hidden", "at least 1"},
		{func(o *Options) { o.Model, o.Hidden, o.Heads = "gat", 10, 4 }, "hidden", "multiple of the 4 heads"},
		{func(o *Options) { o.Heads = 0 }, "heads", "at least 1"},
		{func(o *Options) { o.Batch = 0 }, "batch", "at least 1"},
		{func(o *Options) { o.Dropout = 1 }, "dropout", "[0, 1)"},
		{func(o *Options) { o.Dropout = math.NaN() }, "dropout", "[0, 1)"},
		{func(o *Options) { o.LR = 0 }, "lr", "must be positive"},
		{func(o *Options) { o.Epochs = 0 }, "epochs", "at least 1"},
		{func(o *Options) { o.EvalEvery = 0 }, "eval-every", "at least 1"},
		{func(o *Options) { o.Fanouts = []int{10} }, "fanouts", "1 given for 2 layers"},
		{func(o *Options) { o.Fanouts = []int{10, -2} }, "fanouts", "counts of 0 or more"},
		{func(o *Options) { o.Workdir = "w" }, "workdir", "train from files"},
	}
	for _, tt := range tests {
		t.Run(tt.field+" "+tt.msg, func(t *testing.T) {
			o := base
			tt.edit(&o)
			err := o.Check()
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
	o := base
	o.Model, o.Fanouts = "mlp", []int{1, 2, 3}
	assert.NoError(t, o.Check(), "an mlp ignores the fanouts")
	assert.NoError(t, base.Check())
}

// TestFanouts: parsing, printing and the defaults.
func TestFanouts(t *testing.T) {
	f, err := ParseFanouts("10, full,0")
	require.NoError(t, err)
	assert.Equal(t, []int{10, block.Full, 0}, f)
	assert.Equal(t, "10,full,0", FormatFanouts(f))
	for _, bad := range []string{"", "10,", "-1", "x", "1.5"} {
		_, err := ParseFanouts(bad)
		assert.Error(t, err, bad)
	}
	assert.Equal(t, []int{10, 25}, DefaultFanouts("gat", 2))
	assert.Equal(t, []int{10, 10, 10}, DefaultFanouts("sage-mean", 3))
	assert.Equal(t, []int{0, 0}, DefaultFanouts("mlp", 2))
}

// TestSeedStreams: each purpose has its own stream, and each batch's
// depends on the epoch and the batch.
func TestSeedStreams(t *testing.T) {
	seen := map[uint64]bool{}
	for seed := uint64(0); seed < 4; seed++ {
		for p := purposeInit; p <= purposeDropout; p++ {
			d := derive(seed, p)
			assert.False(t, seen[d], "seed %d purpose %d", seed, p)
			seen[d] = true
		}
	}
	assert.NotEqual(t, stream(1, 2), stream(2, 1))
	assert.Equal(t, derive(7, purposeSample), derive(7, purposeSample))
}

// TestSaveBlocks: every epoch's training batches are written, in the
// block file format; each epoch's output nodes are the training nodes,
// each once, in a shuffled order that differs between epochs.
func TestSaveBlocks(t *testing.T) {
	files := plantedGraph(t, t.TempDir(), 200, 3, 4, 4, 1, 0.8, 5)
	o := small(files, "sage-mean")
	o.Epochs, o.SaveBlocks = 2, filepath.Join(t.TempDir(), "blocks")
	_, err := Train(o)
	require.NoError(t, err)
	g, _, err := data.Load(files)
	require.NoError(t, err)
	var orders [][]int32
	for e := 1; e <= 2; e++ {
		f, err := os.Open(filepath.Join(o.SaveBlocks, fmt.Sprintf("epoch-%04d.blocks", e)))
		require.NoError(t, err)
		bs, err := block.ReadBatches(bufio.NewReader(f))
		f.Close()
		require.NoError(t, err)
		require.Len(t, bs, 2, "120 training nodes in batches of 64")
		var out []int32
		for _, b := range bs {
			require.Len(t, b.Blocks, 2)
			out = append(out, b.Output()...)
		}
		assert.ElementsMatch(t, g.Train, out)
		orders = append(orders, out)
	}
	assert.NotEqual(t, orders[0], orders[1], "shuffled per epoch")
	entries, err := os.ReadDir(o.SaveBlocks)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "the epochs' files and nothing else")

	// A stop inside an epoch leaves no file of it.
	stop := make(chan struct{})
	o.Epochs, o.Stop, o.SaveBlocks = 2, stop, filepath.Join(t.TempDir(), "stopped")
	o.Progress = func(p Progress) {
		if p.Epoch == 2 {
			close(stop)
		}
	}
	_, err = Train(o)
	var se *StopError
	require.ErrorAs(t, err, &se)
	entries, err = os.ReadDir(o.SaveBlocks)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "epoch-0001.blocks", entries[0].Name())
}

// TestExportRoundTrip: the exported representations are the checkpoint's
// model's Infer over the graph, named in node order, in each format.
func TestExportRoundTrip(t *testing.T) {
	files := plantedGraph(t, t.TempDir(), 150, 3, 6, 3, 1, 0.8, 6)
	o := small(files, "sage-mean")
	o.Epochs, o.Workdir = 1, filepath.Join(t.TempDir(), "work")
	_, err := Train(o)
	require.NoError(t, err)

	// The representations, computed here from the checkpoint.
	g, _, err := data.Load(files)
	require.NoError(t, err)
	st, err := readState(o.Workdir)
	require.NoError(t, err)
	m, err := nn.New(st.Spec, 0)
	require.NoError(t, err)
	params, _ := checkpointParams(t, o.Workdir)
	require.NoError(t, m.Load(bytes.NewReader(params)))
	want, _ := m.Infer(g, 64)
	dim := m.ReprDim()
	assert.Equal(t, 16, dim, "the last layer's input: the hidden width")

	out := t.TempDir()
	npy, names := filepath.Join(out, "r.npy"), filepath.Join(out, "r.names.txt")
	res, err := Export(o.Workdir, npy, "npy", names)
	require.NoError(t, err)
	assert.Equal(t, ExportOutput{Workdir: o.Workdir, Epoch: 1, Format: "npy", Out: npy, Names: names, Nodes: 150, Dim: dim}, res)
	raw, err := os.ReadFile(npy)
	require.NoError(t, err)
	header := npyHeader(150, dim)
	require.Equal(t, header, raw[:len(header)])
	assert.Zero(t, len(header)%64)
	got := make([]float32, 150*dim)
	require.NoError(t, binary.Read(bytes.NewReader(raw[len(header):]), binary.LittleEndian, got))
	assert.Equal(t, want, got)
	nameData, err := os.ReadFile(names)
	require.NoError(t, err)
	assert.Equal(t, strings.Join(g.Names, "\n")+"\n", string(nameData))

	for _, format := range []string{"tsv", "csv"} {
		path := filepath.Join(out, "r."+format)
		_, err := Export(o.Workdir, path, format, "")
		require.NoError(t, err)
		text, err := os.ReadFile(path)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
		require.Len(t, lines, 150)
		sep, valueSep := "\t", " "
		if format == "csv" {
			sep, valueSep = ",", ","
		}
		for v, line := range lines {
			name, vals, ok := strings.Cut(line, sep)
			require.True(t, ok)
			assert.Equal(t, g.Names[v], name)
			fields := strings.Split(vals, valueSep)
			require.Len(t, fields, dim)
			for k, s := range fields {
				x, err := strconv.ParseFloat(s, 32)
				require.NoError(t, err)
				assert.InDelta(t, want[v*dim+k], x, 1e-6*math.Max(1, math.Abs(x)))
			}
		}
	}

	// Changed inputs are refused: the graph is not the one trained on.
	require.NoError(t, os.WriteFile(files.TestNodes, []byte("n001\n"), 0o644))
	_, err = Export(o.Workdir, npy, "npy", names)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has changed since")
	_, err = Export(t.TempDir(), npy, "npy", names)
	var we *WorkdirError
	require.True(t, errors.As(err, &we))
	assert.Equal(t, NotWorkdir, we.Kind)
}

// TestFilesAndMemory: a generated graph trained from the files
// data.WriteFiles writes (read back with data.DirFiles) and from memory
// gives the same epochs.
func TestFilesAndMemory(t *testing.T) {
	g, err := data.Generate("cora", 0.3, 2)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, data.WriteFiles(g, dir))
	o := small(data.DirFiles(dir), "gat")
	o.Epochs = 2
	fromFiles, err := Train(o)
	require.NoError(t, err)
	o.Files, o.Graph = data.Files{}, g
	fromMemory, err := Train(o)
	require.NoError(t, err)
	assert.Equal(t, untimed(fromMemory.Epochs), untimed(fromFiles.Epochs))
	assert.Equal(t, fromMemory.Graph.Nodes, fromFiles.Graph.Nodes)
	assert.Equal(t, g.Edges(), fromFiles.Graph.Neighbors)
}

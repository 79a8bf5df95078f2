package gnn

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/memory"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
	"github.com/tierflow/tierflow/realrun/gnn/split"
)

// trainModel trains epochs epochs of o on g as Train does (no work
// directory, no evaluation) and returns the model and the records.
func trainModel(t testing.TB, o Options, g *data.Graph, epochs int) (*nn.Model, []Epoch) {
	t.Helper()
	o = o.withDefaults()
	require.NoError(t, o.Check())
	spec := specOf(o, g)
	nn.Workers = o.Workers
	m, err := nn.New(spec, derive(o.Seed, purposeInit))
	require.NoError(t, err)
	adam := nn.NewAdam(m.Params(), o.LR)
	tr := newTrainer(o, g, spec, m, adam, o.Workers)
	var eps []Epoch
	for e := 1; e <= epochs; e++ {
		ep, err := tr.epoch(e)
		require.NoError(t, err)
		eps = append(eps, ep)
	}
	return m, eps
}

// microGraph is a small planted graph in memory: 300 nodes, 180 of them
// training ones (three batches of 64 in small's options).
func microGraph(t testing.TB) *data.Graph {
	t.Helper()
	g, _, err := data.Load(plantedGraph(t, t.TempDir(), 300, 3, 8, 5, 0.5, 0.8, 5))
	require.NoError(t, err)
	return g
}

// paramDiff is the largest, over the model's parameter tensors, of
// ‖a − b‖ / ‖b‖ (Euclidean norms).
func paramDiff(a, b *nn.Model) (worst float64, where string) {
	pa, pb := a.Params(), b.Params()
	for i := range pb {
		var d, n float64
		for j, w := range pb[i].W {
			x := float64(pa[i].W[j]) - float64(w)
			d, n = d+x*x, n+float64(w)*float64(w)
		}
		if r := math.Sqrt(d / max(n, 1e-30)); r > worst {
			worst, where = r, pb[i].Name
		}
	}
	return worst, where
}

// TestMicroBatchesTrainAsTheBatch: for every model, three epochs whose
// batches are split into 2 or 4 micro-batches (REG, range, random) end
// with the parameters, losses and accuracies of the unsplit epochs,
// dropout on. They differ only by float32 rounding: each micro-batch's
// gradients reach the sums in another order. Adam divides the first
// moment by the root of the second, so that a gradient entry near zero
// can move its weight by up to the learning rate whatever its size, and
// a difference grows step by step; over the nine steps the tensors stay
// within 1e-4 of the unsplit ones in relative Euclidean norm (4e-7 at
// most, measured), which a wrong weighting, a dropout mask drawn
// differently or a lost neighbour exceed by orders of magnitude.
func TestMicroBatchesTrainAsTheBatch(t *testing.T) {
	g := microGraph(t)
	for _, model := range Models {
		t.Run(model, func(t *testing.T) {
			o := small(data.Files{}, model)
			o.Graph = g
			whole, wantEps := trainModel(t, o, g, 3)
			want := wantEps[0]
			assert.Equal(t, 3, want.Batches)
			assert.Equal(t, 3, want.MicroBatches, "a batch not split is one pass")
			assert.Equal(t, 1, want.MaxMicroBatches)
			assert.Equal(t, want.InputNodes, want.MicroInputNodes)
			assert.Zero(t, want.RedundantInputNodes)
			assert.Positive(t, want.PeakBytes)
			assert.Zero(t, want.SplitSeconds)
			for _, k := range []int{2, 4} {
				for _, method := range []split.Method{split.REG, split.Range, split.Random} {
					t.Run(fmt.Sprintf("%s-%d", method, k), func(t *testing.T) {
						o := o
						o.MicroBatches, o.MicroSplit = k, method
						m, eps := trainModel(t, o, g, 3)
						got := eps[0]
						diff, where := paramDiff(m, whole)
						assert.Less(t, diff, 1e-4, "parameters %s", where)
						t.Logf("largest relative difference %.2g (%s)", diff, where)
						for e := range eps {
							assert.InDelta(t, wantEps[e].Loss, eps[e].Loss, 1e-5*wantEps[e].Loss)
							assert.InDelta(t, wantEps[e].TrainAcc, eps[e].TrainAcc, 1.5/180, "at most one node's prediction differs")
						}
						assert.Equal(t, 3*k, got.MicroBatches)
						assert.Equal(t, k, got.MaxMicroBatches)
						assert.Equal(t, want.InputNodes, got.InputNodes)
						assert.Equal(t, want.SampledEdges, got.SampledEdges)
						assert.Equal(t, got.MicroInputNodes-got.InputNodes, got.RedundantInputNodes)
						if model != "mlp" {
							assert.Positive(t, got.RedundantInputNodes, "micro-batches share sampled neighbours")
						} else {
							assert.Zero(t, got.RedundantInputNodes, "an mlp reads its outputs' own rows alone")
						}
						assert.Less(t, got.PeakBytes, want.PeakBytes, "a micro-batch holds less than its batch")
					})
				}
			}
		})
	}
}

// TestMicroBatchesAtMostOutputs: a fixed count above a batch's output
// nodes splits it into one micro-batch per output node.
func TestMicroBatchesAtMostOutputs(t *testing.T) {
	g := microGraph(t)
	o := small(data.Files{}, "sage-mean")
	o.Graph, o.Batch, o.MicroBatches, o.MicroSplit = g, 7, 1000, split.Range
	o.Dropout = 0
	whole := o
	whole.MicroBatches = 0
	mw, _ := trainModel(t, whole, g, 1)
	m, eps := trainModel(t, o, g, 1)
	assert.Equal(t, 7, eps[0].MaxMicroBatches)
	assert.Equal(t, 180, eps[0].MicroBatches, "one micro-batch per training node")
	diff, where := paramDiff(m, mw)
	assert.Less(t, diff, 1e-4, where)
}

// TestMicroBatchMemory: a budget below a batch's estimate splits the
// batches into the fewest micro-batches that fit it, and the run trains
// as the unsplit one; a budget every batch fits splits none, and the
// run is the unsplit one to the bit.
func TestMicroBatchMemory(t *testing.T) {
	g := microGraph(t)
	o := small(data.Files{}, "sage-mean")
	o.Graph = g
	whole, eps := trainModel(t, o, g, 1)
	peak := eps[0].PeakBytes
	require.Positive(t, peak)

	roomy := o
	roomy.MicroBatchMemory = peak
	m, got := trainModel(t, roomy, g, 1)
	assert.Equal(t, 1, got[0].MaxMicroBatches)
	assert.Equal(t, peak, got[0].PeakBytes)
	assert.Equal(t, whole.Params(), m.Params(), "batches that fit train whole")

	tight := o
	tight.MicroBatchMemory = peak - 1
	m, got = trainModel(t, tight, g, 1)
	assert.Greater(t, got[0].MaxMicroBatches, 1)
	assert.LessOrEqual(t, got[0].PeakBytes, tight.MicroBatchMemory)
	assert.Positive(t, got[0].SplitSeconds)
	diff, where := paramDiff(m, whole)
	assert.Less(t, diff, 1e-4, where)

	// Both: the fixed count wins, as the edge engine's.
	both := tight
	both.MicroBatches = 3
	_, got = trainModel(t, both, g, 1)
	assert.Equal(t, 3, got[0].MaxMicroBatches)
}

// TestMicroBatchMemoryTooSmall: a budget no split of the first batch
// meets is refused before anything is recorded, naming the bytes
// needed; the work directory is not left behind.
func TestMicroBatchMemoryTooSmall(t *testing.T) {
	files := plantedGraph(t, t.TempDir(), 120, 3, 4, 3, 1, 0.8, 6)
	o := small(files, "sage-mean")
	o.MicroBatchMemory = 1000
	o.Workdir = filepath.Join(t.TempDir(), "work")
	_, err := Train(o)
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "micro-batch-memory", fe.Field)
	var be *memory.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, int64(1000), be.Budget)
	assert.Greater(t, be.Need, int64(1000))
	assert.Contains(t, err.Error(), fmt.Sprintf("(%d bytes)", be.Need))
	assert.NoDirExists(t, o.Workdir, "refused before the run is recorded")
}

// TestMicroSettingsResume: the micro-batching settings are part of a
// work directory's identity; a run without micro-batching has none.
func TestMicroSettingsResume(t *testing.T) {
	files := plantedGraph(t, t.TempDir(), 120, 3, 4, 3, 1, 0.8, 7)
	o := small(files, "sage-mean")
	o.Epochs, o.Workdir = 1, filepath.Join(t.TempDir(), "work")
	o.MicroBatches = 2
	res, err := Train(o)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Settings.MicroBatches)
	assert.Equal(t, "reg", res.Settings.MicroSplit)
	assert.Equal(t, 2, res.Epochs[0].MaxMicroBatches)

	o.Resume, o.Epochs = true, 2
	var we *WorkdirError
	for _, tt := range []struct {
		edit  func(*Options)
		diffs []string
	}{
		{func(o *Options) { o.MicroBatches = 4 }, []string{"micro-batches 2 (now 4)"}},
		{func(o *Options) { o.MicroSplit = split.Range }, []string{"micro-split reg (now range)"}},
		{func(o *Options) { o.MicroBatches = 0 }, []string{"micro-batches 2 (now (none))", "micro-split reg (now (none))"}},
		{func(o *Options) { o.MicroBatches, o.MicroBatchMemory = 0, 1<<30 },
			[]string{"micro-batch-memory (none) (now 1073741824)", "micro-batches 2 (now (none))"}},
	} {
		o2 := o
		tt.edit(&o2)
		_, err = Train(o2)
		require.ErrorAs(t, err, &we)
		assert.Equal(t, OtherSettings, we.Kind)
		assert.Equal(t, tt.diffs, we.Diffs)
	}
	o2 := o
	o2.MicroBatchMemory = 1 << 30 // not consulted beside a fixed count: not a setting
	res, err = Train(o2)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Resumed)
	assert.Len(t, res.Epochs, 2)
	raw, err := os.ReadFile(filepath.Join(o.Workdir, StateFile))
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"micro-batches": "2"`)
}

// TestMicroOptionsCheck: the micro-batching options' refusals.
func TestMicroOptionsCheck(t *testing.T) {
	base := Defaults
	base.Graph = &data.Graph{}
	for _, tt := range []struct {
		edit  func(*Options)
		field string
		msg   string
	}{
		{func(o *Options) { o.MicroBatches = -1 }, "micro-batches", "must not be negative"},
		{func(o *Options) { o.MicroBatchMemory = -5 }, "micro-batch-memory", "must not be negative"},
		{func(o *Options) { o.MicroSplit = "bogus" }, "micro-split", "want reg, range, random, metis"},
	} {
		o := base
		tt.edit(&o)
		var fe *FieldError
		require.ErrorAs(t, o.Check(), &fe)
		assert.Equal(t, tt.field, fe.Field)
		assert.Contains(t, fe.Error(), tt.msg)
	}
	o := base
	o.MicroSplit = ""
	assert.NoError(t, o.Check(), "unset: REG")
}

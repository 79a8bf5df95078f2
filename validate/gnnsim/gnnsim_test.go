package gnnsim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/gnn"
	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
	"github.com/tierflow/tierflow/realrun/gnn/split"
)

// cpuProfile is a CPU engine of round rates.
func cpuProfile() devices.Profile {
	return devices.Profile{Name: "test-cpu",
		Disk: devices.Disk{Read: 1e9, Write: 1e9},
		CPU:  devices.CPU{Workers: 2, Memory: 8e9, BatchEdges: 1e7, GatherBW: 1e9},
		GNN: devices.GNN{Engine: devices.GNNEngineCPU, FLOPS: 1e10, Aggregation: devices.GNNAggregation{Mean: 1e9, Pool: 1e9, LSTM: 1e9, GAT: 1e9},
			Gather: 2e9, Sample: 1e7, Step: devices.Duration(1e5), Optimizer: 1e9}}
}

func arxiv(t testing.TB) *data.Graph {
	g, err := data.Generate("ogbn-arxiv", 0.02, 1)
	require.NoError(t, err)
	return g
}

func workload(g *data.Graph, model string) Workload {
	return Workload{Graph: g, Model: model, Layers: 2, Hidden: 32, Heads: 4, Fanouts: []int{5, 10}, Batch: 256, Seed: 3}
}

// TestRowsAddUp: each row's totals are the run's batches' (sampled as
// gnn.EpochBatches samples them) and its times add up as Predict's
// documentation says, on both engines.
func TestRowsAddUp(t *testing.T) {
	g := arxiv(t)
	w := workload(g, "sage-mean")
	var inputs, edges int64
	batches := 0
	o := w.Options()
	require.NoError(t, gnn.EpochBatches(g, o, 1, func(i int, b *block.Batch) error {
		batches++
		inputs += int64(len(b.Input()))
		for l := range b.Blocks {
			edges += int64(len(b.Blocks[l].Nbr))
		}
		return nil
	}))
	for _, engine := range []string{devices.GNNEngineCPU, devices.GNNEngineGPU} {
		p := cpuProfile()
		if engine == devices.GNNEngineGPU {
			p.GPU = devices.GPU{Count: 1, Memory: 8e9, FLOPS: 1e10, MemoryBW: 1e9}
			p.PCIe = devices.PCIe{H2D: 2e9, D2H: 2e9}
			p.GNN.Engine = engine
		}
		pred, err := Predict(w, p, Settings{K: []int{1, 2, 4}, Method: split.Range})
		require.NoError(t, err, engine)
		require.Len(t, pred.Rows, 3)
		one := pred.Rows[0]
		assert.Equal(t, batches, one.Batches)
		assert.Equal(t, batches, one.MicroBatches)
		assert.Equal(t, inputs, one.InputRows)
		assert.Equal(t, edges, one.SampledEdges)
		assert.Equal(t, edges, one.Edges)
		assert.Zero(t, one.RedundantRows)
		assert.Equal(t, one.InputRows*int64(g.F)*4+int64(len(g.Train))*4, one.TransferBytes)
		for _, r := range pred.Rows {
			assert.Equal(t, r.MicroInputRows-r.InputRows, r.RedundantRows)
			assert.InDelta(t, r.DenseSeconds+r.AggregateSeconds+r.StepSeconds+r.OptimizerSeconds, r.ComputeSeconds, 1e-9)
			assert.InDelta(t, r.FLOPs/1e10, r.DenseSeconds, 1e-9)
			assert.InDelta(t, float64(r.TransferBytes)/2e9, r.TransferSeconds, 1e-9)
			assert.InDelta(t, float64(r.MicroBatches)*1e-4, r.StepSeconds, 1e-9)
			assert.InDelta(t, float64(r.SampledEdges)/1e7, r.SampleSeconds, 1e-9)
			serial := r.ComputeSeconds
			if engine == devices.GNNEngineGPU {
				serial += r.TransferSeconds
			}
			assert.GreaterOrEqual(t, r.EpochSeconds, serial-1e-9, "the compute is serial")
			assert.LessOrEqual(t, r.EpochSeconds, serial+r.SampleSeconds+r.TransferSeconds+1e-9, "nothing but sampling (and the cpu engine's gather) is added")
			assert.InDelta(t, r.EpochSeconds-(serial), r.StallSeconds, 1e-9)
		}
		for i := 1; i < 3; i++ {
			prev, r := pred.Rows[i-1], pred.Rows[i]
			assert.Equal(t, batches*[]int{1, 2, 4}[i], r.MicroBatches)
			assert.Greater(t, r.RedundantRows, prev.RedundantRows, "more micro-batches read more rows twice")
			assert.Less(t, r.PeakBytes, prev.PeakBytes, "and each takes less memory")
			assert.Greater(t, r.Edges, prev.Edges, "and aggregate more edges (the FLOPs need not grow: sage-mean projects first or not block by block)")
		}
	}
}

// TestFitsTheBudget: without K the micro-batches are the fewest that fit
// the budget; a budget too small for one output node is an input error
// that names the field.
func TestFitsTheBudget(t *testing.T) {
	g := arxiv(t)
	w := workload(g, "sage-lstm")
	whole, err := Predict(w, cpuProfile(), Settings{K: []int{1}})
	require.NoError(t, err)
	budget := whole.Rows[0].BatchBytes * 2 / 3
	pred, err := Predict(w, cpuProfile(), Settings{Memory: budget, Method: split.Range})
	require.NoError(t, err)
	r := pred.Rows[0]
	assert.Zero(t, r.K)
	assert.Greater(t, r.MaxMicroBatches, 1)
	assert.LessOrEqual(t, r.PeakBytes, budget)
	assert.True(t, r.Fits)
	assert.Equal(t, budget, pred.Budget)

	_, err = Predict(w, cpuProfile(), Settings{Memory: 1000})
	var ie *inputerr.Error
	require.ErrorAs(t, err, &ie)
	var fe *gnn.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "micro-batch-memory", fe.Field)
}

// TestBadWorkload: bad fields are input errors naming them.
func TestBadWorkload(t *testing.T) {
	g := arxiv(t)
	for _, tc := range []struct {
		edit  func(*Workload, *Settings)
		field string
	}{
		{func(w *Workload, _ *Settings) { w.Model = "gcn" }, "model"},
		{func(w *Workload, _ *Settings) { w.Layers = 0 }, "layers"},
		{func(w *Workload, _ *Settings) { w.Fanouts = []int{1} }, "fanouts"},
		{func(w *Workload, _ *Settings) { w.Batch = 0 }, "batch"},
		{func(_ *Workload, s *Settings) { s.K = []int{-1} }, "micro-batches"},
		{func(_ *Workload, s *Settings) { s.Memory = -5 }, "micro-batch-memory"},
	} {
		w, s := workload(g, "sage-mean"), Settings{}
		tc.edit(&w, &s)
		_, err := Predict(w, cpuProfile(), s)
		var fe *gnn.FieldError
		require.ErrorAs(t, err, &fe, tc.field)
		assert.Equal(t, tc.field, fe.Field)
		var ie *inputerr.Error
		assert.ErrorAs(t, err, &ie, tc.field)
	}
	p := cpuProfile()
	p.GNN = devices.GNN{}
	_, err := Predict(workload(g, "sage-mean"), p, Settings{})
	var ie *inputerr.Error
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "no gnn section and no GPU")
}

// TestPipeline: the epoch is the first batch's preparation, then the
// longer of each batch's compute and the next one's preparation.
func TestPipeline(t *testing.T) {
	for _, tc := range []struct {
		prep, comp []float64
		want       float64
	}{
		{[]float64{1, 1, 1}, []float64{2, 2, 2}, 7},
		{[]float64{3, 3, 3}, []float64{1, 1, 1}, 3 + 3 + 3 + 1},
		{[]float64{0, 0}, []float64{2, 5}, 7},
		{nil, nil, 0},
	} {
		a := accum{prep: tc.prep, comp: tc.comp}
		assert.InDelta(t, tc.want, a.epoch(), 1e-12, "%v %v", tc.prep, tc.comp)
	}
}

// TestAggregationBytes: edges × width × 4 × 2 per layer, by model.
func TestAggregationBytes(t *testing.T) {
	g := arxiv(t)
	var b *block.Batch
	w := workload(g, "sage-mean")
	require.NoError(t, gnn.EpochBatches(g, w.Options(), 1, func(i int, bb *block.Batch) error {
		if i == 0 {
			b = bb
			b = &block.Batch{Blocks: append([]block.Block(nil), bb.Blocks...)}
		}
		return nil
	}))
	e0, e1 := float64(len(b.Blocks[0].Nbr)), float64(len(b.Blocks[1].Nbr))
	classes := len(g.Classes)
	for model, want := range map[string]float64{
		"mlp":       0,
		"sage-mean": (e0*float64(width(g.F, 32, &b.Blocks[0])) + e1*float64(width(32, classes, &b.Blocks[1]))) * 8,
		"sage-pool": (e0*float64(g.F) + e1*32) * 8,
		"sage-lstm": (e0*4*float64(g.F) + e1*4*32) * 8,
		"gat":       (e0*32 + e1*float64(classes*4)) * 8,
	} {
		ww := workload(g, model)
		m := mustModel(t, ww, g)
		assert.InDelta(t, want, m.AggregationBytes(b), 1e-6, model)
	}
}

// width is sage-mean's aggregation width over blk.
func width(in, out int, blk *block.Block) int {
	if nn.ProjectFirst(in, out, blk.NumDst, blk.NumSrc(), len(blk.Nbr)) {
		return out
	}
	return in
}

// TestSameAsTheRun: the prediction's batches and micro-batches are the
// run's: the trainer's records of a run split by REG into 3 count the
// same input rows, redundant rows, micro-batches, edges and peak.
func TestSameAsTheRun(t *testing.T) {
	g := arxiv(t)
	w := workload(g, "sage-mean")
	for _, k := range []int{1, 3} {
		o := w.Options()
		o.Epochs, o.EvalEvery, o.MicroBatches, o.Workers = 2, 3, k, 2
		res, err := gnn.Train(o)
		require.NoError(t, err)
		for _, ep := range res.Epochs {
			w.Epoch = ep.Epoch
			pred, err := Predict(w, cpuProfile(), Settings{K: []int{k}})
			require.NoError(t, err)
			r := pred.Rows[0]
			assert.Equal(t, ep.Batches, r.Batches)
			assert.Equal(t, ep.InputNodes, r.InputRows, "k %d epoch %d", k, ep.Epoch)
			assert.Equal(t, ep.MicroInputNodes, r.MicroInputRows, "k %d epoch %d", k, ep.Epoch)
			assert.Equal(t, ep.RedundantInputNodes, r.RedundantRows)
			assert.Equal(t, ep.MicroBatches, r.MicroBatches)
			assert.Equal(t, ep.SampledEdges, r.SampledEdges)
			assert.InDelta(t, ep.FLOPs, r.FLOPs, 1e-6*ep.FLOPs)
		}
	}
}

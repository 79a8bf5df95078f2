package gnnsim

import (
	"errors"
	"fmt"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/gnn"
	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/memory"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
	"github.com/tierflow/tierflow/realrun/gnn/split"
)

// Workload is one epoch of a GNN run: the graph and what realrun gnn
// trains on it with (gnn.Options' fields of the same names).
type Workload struct {
	Graph *data.Graph
	// Model, Layers, Hidden, Heads (gat's; 0: gnn.Defaults') and Fanouts
	// (nil: gnn.DefaultFanouts) shape the model; Batch is the output nodes per batch; Seed the
	// run's seed; Epoch the epoch whose batches are sampled (0: 1).
	Model                 string
	Layers, Hidden, Heads int
	Fanouts               []int
	Batch                 int
	Seed                  uint64
	Epoch                 int
}

// FromOptions is the workload of a run with options o on g (its epoch 1).
func FromOptions(g *data.Graph, o gnn.Options) Workload {
	return Workload{Graph: g, Model: o.Model, Layers: o.Layers, Hidden: o.Hidden, Heads: o.Heads, Fanouts: o.Fanouts, Batch: o.Batch, Seed: o.Seed}
}

// Options are w as the trainer's options (the rest gnn.Defaults').
func (w Workload) Options() gnn.Options {
	o := gnn.Defaults
	o.Graph, o.Model, o.Layers, o.Hidden, o.Fanouts, o.Batch, o.Seed = w.Graph, w.Model, w.Layers, w.Hidden, w.Fanouts, w.Batch, w.Seed
	if w.Heads != 0 {
		o.Heads = w.Heads
	}
	return o
}

// Settings say how batches are split: at each of K (0: into the fewest
// micro-batches whose largest fits Memory, memory.Fit) by Method.
type Settings struct {
	// K are the micro-batch counts to predict, one row each (nil: {0},
	// the count the memory forces); a batch with fewer output nodes is
	// split into one micro-batch a node.
	K []int
	// Memory is a micro-batch's budget in bytes (0: the device's memory:
	// gpu.memory for the gpu engine, cpu.memory for the cpu engine).
	Memory int64
	// Method splits the batches ("": split.REG).
	Method split.Method
}

// Prediction is an epoch predicted at each K.
type Prediction struct {
	Device string `json:"device"`
	// Engine is where the step runs (devices.GNN.Engine); Cost the rates
	// the prediction used (the profile's gnn section, defaults filled in).
	Engine string      `json:"engine"`
	Cost   devices.GNN `json:"cost"`
	// Budget is the bytes a micro-batch may take.
	Budget int64  `json:"budget_bytes"`
	Method string `json:"method"`
	// What is trained: the graph's shape, the model and its sampling.
	Nodes      int     `json:"nodes"`
	Features   int     `json:"features"`
	Classes    int     `json:"classes"`
	TrainNodes int     `json:"train_nodes"`
	Spec       nn.Spec `json:"spec"`
	Fanouts    string  `json:"fanouts"`
	Batch      int     `json:"batch"`
	Seed       uint64  `json:"seed"`
	Epoch      int     `json:"epoch"`
	Params     int     `json:"params"`
	Rows       []Row   `json:"rows"`
}

// Row is the epoch split at one K.
type Row struct {
	// K is the micro-batch count asked for (0: the fewest that fit the
	// budget).
	K int `json:"k"`
	// Batches are the epoch's batches, MicroBatches their micro-batches
	// (a batch trained whole counts one), MaxMicroBatches the most of
	// one batch.
	Batches         int `json:"batches"`
	MicroBatches    int `json:"micro_batches"`
	MaxMicroBatches int `json:"max_micro_batches"`
	// InputRows are the batches' input nodes, MicroInputRows the
	// micro-batches' (a row read by two micro-batches counts twice),
	// RedundantRows the difference (Betty Fig. 16).
	InputRows      int64 `json:"input_rows"`
	MicroInputRows int64 `json:"micro_input_rows"`
	RedundantRows  int64 `json:"redundant_rows"`
	// SampledEdges are the batches' block edges; Edges the micro-batches'.
	SampledEdges int64 `json:"sampled_edges"`
	Edges        int64 `json:"edges"`
	// TransferBytes are the input features (rows × F × 4) and labels
	// (4 a output) moved to the compute: over PCIe on a GPU.
	TransferBytes int64 `json:"transfer_bytes"`
	// PeakBytes is the largest micro-batch's step by memory.Batch;
	// BatchBytes the largest whole batch's; Fits whether every
	// micro-batch fits the budget.
	PeakBytes  int64 `json:"peak_bytes"`
	BatchBytes int64 `json:"batch_bytes"`
	Fits       bool  `json:"fits"`
	// FLOPs of the dense products and bytes of aggregation
	// (AggregationBytes), over the micro-batches.
	FLOPs            float64 `json:"flops"`
	AggregationBytes float64 `json:"aggregation_bytes"`
	// The epoch's time: Compute is the micro-batches' dense products,
	// aggregation and fixed step cost plus the optimiser's step per
	// batch; Transfer the features' and labels' move; Sample the
	// neighbour sampling; Split the METIS splits (reg, metis); Stall the time the compute waits for the next
	// batch; Epoch the whole.
	ComputeSeconds   float64 `json:"compute_s"`
	DenseSeconds     float64 `json:"dense_s"`
	AggregateSeconds float64 `json:"aggregate_s"`
	StepSeconds      float64 `json:"step_s"`
	OptimizerSeconds float64 `json:"optimizer_s"`
	TransferSeconds  float64 `json:"transfer_s"`
	SampleSeconds    float64 `json:"sample_s"`
	SplitSeconds     float64 `json:"split_s"`
	StallSeconds     float64 `json:"stall_s"`
	EpochSeconds     float64 `json:"epoch_s"`
}

// Predict predicts one epoch of w on the device profile p at each of
// s.K. It samples the batches the run samples (gnn.EpochBatches), splits
// each as the trainer does (split.Split into K, or memory.Fit to the
// budget, seeded with gnn.SplitSeed), and costs each micro-batch on
// p.GNNCost():
//
//	compute  = FLOPs ÷ flops + AggregationBytes ÷ aggregation + step
//	transfer = (input rows × F × 4 + outputs × 4) ÷ gather
//	optimiser = parameters × 4 ÷ optimizer, once a batch
//	split    = the last block's edges ÷ split, each METIS split tried
//
// The micro-batches of a batch run one after another. On the gpu engine
// a micro-batch's transfer precedes its compute (no overlap, as Betty
// runs them); on the cpu engine the trainer's pipeline samples, splits
// and gathers the next batch while this one computes. With sampling
// costed (gnn.sample > 0) a batch is sampled (and split) one ahead of the
// compute on either engine: the epoch is the first batch's preparation plus, for
// every batch, the longer of its compute and the next one's preparation.
// Bad workload fields and budgets no split meets are inputerr.Errors.
func Predict(w Workload, p devices.Profile, s Settings) (Prediction, error) {
	cost, err := p.GNNCost()
	if err != nil {
		return Prediction{}, inputerr.Errorf("device: %w", err)
	}
	if w.Graph == nil {
		return Prediction{}, errors.New("gnnsim: no graph")
	}
	g := w.Graph
	if len(g.Train) == 0 {
		return Prediction{}, inputerr.Errorf("no training nodes: the graph has none labelled in its training split")
	}
	o := w.Options()
	o.Epochs = 1
	if w.Fanouts == nil || w.Model == "mlp" {
		o.Fanouts = gnn.DefaultFanouts(w.Model, w.Layers)
	}
	if err := o.Check(); err != nil {
		return Prediction{}, &inputerr.Error{Err: err}
	}
	spec := nn.Spec{Model: o.Model, In: g.F, Hidden: o.Hidden, Classes: len(g.Classes), Layers: o.Layers, Heads: o.Heads}
	if err := spec.Check(); err != nil {
		return Prediction{}, inputerr.Errorf("model: %w", err)
	}
	m, err := nn.New(spec, 0)
	if err != nil {
		return Prediction{}, err
	}
	ks := s.K
	if len(ks) == 0 {
		ks = []int{0}
	}
	for _, k := range ks {
		if k < 0 {
			return Prediction{}, &inputerr.Error{Err: &gnn.FieldError{Field: "micro-batches", Value: fmt.Sprint(k), Msg: "want 1 or more (0: the fewest that fit the memory)"}}
		}
	}
	method := s.Method
	if method == "" {
		method = split.REG
	}
	budget := s.Memory
	if budget == 0 {
		budget = int64(p.CPU.Memory)
		if cost.Engine == devices.GNNEngineGPU {
			budget = int64(p.GPU.Memory)
		}
	}
	if budget <= 0 {
		return Prediction{}, &inputerr.Error{Err: &gnn.FieldError{Field: "micro-batch-memory", Value: fmt.Sprint(budget), Msg: "a micro-batch's budget must be positive"}}
	}
	epoch := max(w.Epoch, 1)
	out := Prediction{Device: p.Name, Engine: cost.Engine, Cost: cost, Budget: budget, Method: string(method),
		Nodes: g.N(), Features: g.F, Classes: len(g.Classes), TrainNodes: len(g.Train), Spec: spec,
		Fanouts: gnn.FormatFanouts(o.Fanouts), Batch: w.Batch, Seed: w.Seed, Epoch: epoch, Params: m.NumParams()}
	acc := make([]accum, len(ks))
	for r := range acc {
		acc[r] = newAccum(cost, w.Model, g.F)
	}
	bd := split.NewBuilder()
	var micro *block.Batch
	err = gnn.EpochBatches(g, o, epoch, func(i int, b *block.Batch) error {
		whole := memory.Batch(spec, b).Total()
		edges := int64(0)
		for l := range b.Blocks {
			edges += int64(len(b.Blocks[l].Nbr))
		}
		for r, k := range ks {
			parts, tries, err := splitBatch(spec, b, k, budget, method, gnn.SplitSeed(w.Seed, epoch, i))
			if err != nil {
				return fmt.Errorf("epoch %d, batch %d: %w", epoch, i+1, err)
			}
			a := &acc[r]
			a.startBatch(len(b.Input()), edges, whole)
			if method.UsesMETIS() {
				a.split(tries, len(b.Blocks[len(b.Blocks)-1].Nbr))
			}
			if parts == nil {
				a.add(m, spec, b)
			}
			for _, outs := range parts {
				micro = bd.Micro(b, outs, micro)
				a.add(m, spec, micro)
			}
			a.endBatch(out.Params, budget)
		}
		return nil
	})
	if err != nil {
		var be *memory.BudgetError
		if errors.As(err, &be) {
			msg := "no split fits: " + err.Error()
			if s.Memory == 0 {
				return out, inputerr.Errorf("device %s: its memory: %s", p.Name, msg)
			}
			return out, &inputerr.Error{Err: &gnn.FieldError{Field: "micro-batch-memory", Value: devices.Bytes(budget).String(), Msg: msg}}
		}
		return out, err
	}
	for r, k := range ks {
		row := acc[r].row
		row.K = k
		row.RedundantRows = row.MicroInputRows - row.InputRows
		row.EpochSeconds = acc[r].epoch()
		row.StallSeconds = max(row.EpochSeconds-sum(acc[r].comp), 0)
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// splitBatch returns the output positions of b's micro-batches at k (0:
// the fewest within budget), nil when b trains whole, and the splits it
// tried (memory.Fit tries 2, 3, … up to the count that fits).
func splitBatch(spec nn.Spec, b *block.Batch, k int, budget int64, m split.Method, seed uint64) ([][]int32, int, error) {
	if k == 0 {
		plan, err := memory.Fit(spec, b, budget, m, seed)
		if err != nil {
			return nil, 0, err
		}
		if plan.K <= 1 {
			return nil, 0, nil
		}
		return plan.Parts, plan.K - 1, nil
	}
	k = min(k, len(b.Output()))
	if k <= 1 {
		return nil, 0, nil
	}
	parts, err := split.Split(b, k, m, seed)
	return parts, 1, err
}

// accum adds up one row over the epoch's batches: the totals, and each
// batch's preparation and compute time for the pipeline.
type accum struct {
	row       Row
	cost      devices.GNN
	agg       float64 // the model's aggregation rate
	f         int
	batchPeak int64
	// prep and comp are every batch's preparation (sampling; on the cpu
	// engine the features' gather too) and compute (on the gpu engine
	// the transfers too); cur the batch under way.
	prep, comp        []float64
	curPrep, curComp  float64
	curMicro, batches int
}

func newAccum(c devices.GNN, model string, f int) accum {
	return accum{cost: c, agg: float64(c.Aggregation.For(model)), f: f}
}

// startBatch begins a batch of the given input nodes, block edges and
// whole-batch estimate.
func (a *accum) startBatch(inputs int, edges, whole int64) {
	a.row.Batches++
	a.row.InputRows += int64(inputs)
	a.row.SampledEdges += edges
	a.row.BatchBytes = max(a.row.BatchBytes, whole)
	a.batchPeak, a.curMicro, a.curComp, a.curPrep = 0, 0, 0, 0
	if a.cost.Sample > 0 {
		t := float64(edges) / float64(a.cost.Sample)
		a.row.SampleSeconds += t
		a.curPrep += t
	}
}

// split costs tries METIS splits of a batch whose last block has edges
// edges, in the batch's preparation.
func (a *accum) split(tries, edges int) {
	if tries == 0 || a.cost.Split == 0 {
		return
	}
	t := float64(tries) * float64(edges) / float64(a.cost.Split)
	a.row.SplitSeconds += t
	a.curPrep += t
}

// add costs one micro-batch (or a batch trained whole) mb.
func (a *accum) add(m *nn.Model, spec nn.Spec, mb *block.Batch) {
	a.curMicro++
	in, outs := len(mb.Input()), len(mb.Output())
	a.row.MicroInputRows += int64(in)
	for l := range mb.Blocks {
		a.row.Edges += int64(len(mb.Blocks[l].Nbr))
	}
	a.batchPeak = max(a.batchPeak, memory.Batch(spec, mb).Total())
	flops, agg := m.FLOPs(mb), m.AggregationBytes(mb)
	bytes := int64(in)*int64(a.f)*4 + int64(outs)*4
	a.row.FLOPs += flops
	a.row.AggregationBytes += agg
	a.row.TransferBytes += bytes
	dense := flops / float64(a.cost.FLOPS)
	aggregate := 0.0
	if agg > 0 && a.agg > 0 {
		aggregate = agg / a.agg
	}
	step := float64(a.cost.Step) / 1e9
	transfer := float64(bytes) / float64(a.cost.Gather)
	a.row.DenseSeconds += dense
	a.row.AggregateSeconds += aggregate
	a.row.StepSeconds += step
	a.row.ComputeSeconds += dense + aggregate + step
	a.row.TransferSeconds += transfer
	a.curComp += dense + aggregate + step
	if a.cost.Engine == devices.GNNEngineGPU {
		a.curComp += transfer
	} else {
		a.curPrep += transfer
	}
}

// endBatch closes a batch: its optimiser step and peak.
func (a *accum) endBatch(params int, budget int64) {
	if a.cost.Optimizer > 0 {
		t := float64(params) * 4 / float64(a.cost.Optimizer)
		a.row.OptimizerSeconds += t
		a.row.ComputeSeconds += t
		a.curComp += t
	}
	a.row.MicroBatches += a.curMicro
	a.row.MaxMicroBatches = max(a.row.MaxMicroBatches, a.curMicro)
	a.row.PeakBytes = max(a.row.PeakBytes, a.batchPeak)
	if a.row.Batches == 1 {
		a.row.Fits = true
	}
	a.row.Fits = a.row.Fits && a.batchPeak <= budget
	a.prep, a.comp = append(a.prep, a.curPrep), append(a.comp, a.curComp)
}

// epoch is the pipeline's time: the first batch's preparation, then for
// each batch the longer of its compute and the next batch's preparation.
func (a *accum) epoch() float64 {
	if len(a.comp) == 0 {
		return 0
	}
	t := a.prep[0]
	for i, c := range a.comp {
		next := 0.0
		if i+1 < len(a.prep) {
			next = a.prep[i+1]
		}
		t += max(c, next)
	}
	return t
}

package gnn

import (
	"fmt"

	"github.com/tierflow/tierflow/realrun/gnn/data"
)

// Result is a training run: what it trained on and with, one record per
// epoch, and a summary.
type Result struct {
	// Workdir is the run's work directory ("" without one).
	Workdir  string       `json:"workdir,omitempty"`
	Settings Settings     `json:"settings"`
	Graph    GraphSummary `json:"graph"`
	// Params is the number of learnable values.
	Params int     `json:"params"`
	Epochs []Epoch `json:"epochs"`
	// Resumed is the epoch the run resumed after (0: from the start).
	Resumed int     `json:"resumed,omitempty"`
	Summary Summary `json:"summary"`
}

// Settings are a run's training settings, as run (the fanouts filled
// in).
type Settings struct {
	Model  string `json:"model"`
	Layers int    `json:"layers"`
	Hidden int    `json:"hidden"`
	Heads  int    `json:"heads"`
	// Fanouts as ParseFanouts reads them ("10,25", "full,full"); all 0
	// for mlp.
	Fanouts   string  `json:"fanouts"`
	Batch     int     `json:"batch"`
	Dropout   float64 `json:"dropout"`
	LR        float64 `json:"lr"`
	Epochs    int     `json:"epochs"`
	Seed      uint64  `json:"seed"`
	Workers   int     `json:"workers"`
	EvalEvery int     `json:"eval_every"`
	Directed  bool    `json:"directed"`
	// MicroBatches, MicroBatchMemory (bytes) and MicroSplit are the
	// micro-batching options (Options): 0, 0 and the split method when
	// batches are not split.
	MicroBatches     int    `json:"micro_batches"`
	MicroBatchMemory int64  `json:"micro_batch_memory"`
	MicroSplit       string `json:"micro_split"`
}

// GraphSummary counts what training read.
type GraphSummary struct {
	Nodes int `json:"nodes"`
	// Edges are the input's edge lines kept (a graph given in memory:
	// its adjacency's entries); Neighbors the adjacency's entries (an
	// undirected edge counts twice).
	Edges     int64 `json:"edges"`
	Neighbors int64 `json:"neighbors"`
	Features  int   `json:"features"`
	Classes   int   `json:"classes"`
	Train     int   `json:"train"`
	Valid     int   `json:"valid"`
	Test      int   `json:"test"`
	// Skipped counts the input records left out (skipping bad records),
	// by reason.
	Skipped map[string]int64 `json:"skipped,omitempty"`
}

// Epoch is one epoch's record. ValidAcc and TestAcc are nil for an epoch
// not evaluated (or a split without nodes).
type Epoch struct {
	Epoch int     `json:"epoch"`
	Loss  float64 `json:"loss"`
	// TrainAcc is the accuracy on the epoch's training batches, as they
	// were trained (dropout on, parameters moving).
	TrainAcc float64  `json:"train_acc"`
	ValidAcc *float64 `json:"valid_acc"`
	TestAcc  *float64 `json:"test_acc"`
	// EpochSeconds is the training part of the epoch (without evaluation
	// and checkpoint); SampleSeconds the time spent sampling and gathering
	// features (overlapped with compute, one batch ahead), ComputeSeconds
	// forward, loss, backward and the optimiser step; EvalSeconds the
	// layer-wise inference over every node and the accuracies.
	EpochSeconds  float64 `json:"epoch_s"`
	SampleSeconds float64 `json:"sample_s"`
	// StallSeconds is the time training waited for the next batch to be
	// sampled (sampling not hidden behind compute).
	StallSeconds   float64 `json:"stall_s"`
	ComputeSeconds float64 `json:"compute_s"`
	EvalSeconds    float64 `json:"eval_s"`
	Batches        int     `json:"batches"`
	// SampledEdges are the edges of every block of every batch;
	// InputNodes the nodes whose features the batches read.
	SampledEdges int64 `json:"sampled_edges"`
	InputNodes   int64 `json:"input_nodes"`
	// NodesPerSecond are the training (output) nodes per second of
	// EpochSeconds; EdgesPerSecond the sampled edges.
	NodesPerSecond float64 `json:"nodes_per_s"`
	EdgesPerSecond float64 `json:"edges_per_s"`
	// FLOPs are the floating-point operations of the epoch's dense
	// products, forward and backward (nn.Model.FLOPs), FLOPsPerSecond
	// over ComputeSeconds.
	FLOPs          float64 `json:"flops"`
	FLOPsPerSecond float64 `json:"flops_per_s"`
	// MicroBatches are the forward and backward passes the epoch ran:
	// its micro-batches, a batch not split counting one (without
	// micro-batching, Batches); MaxMicroBatches the most a batch was
	// split into (1: none was).
	MicroBatches    int `json:"micro_batches"`
	MaxMicroBatches int `json:"max_micro_batches"`
	// MicroInputNodes are the input nodes of every micro-batch, summed
	// (InputNodes are the batches'); RedundantInputNodes the difference,
	// the feature rows gathered more than once because micro-batches of
	// a batch share them (Betty's Figure 16).
	MicroInputNodes     int64 `json:"micro_input_nodes"`
	RedundantInputNodes int64 `json:"redundant_input_nodes"`
	// PeakBytes is the largest estimated training-step memory of a batch
	// or, where batches are split, of a micro-batch: memory.Batch's
	// estimate from the shape alone, with the GEMM kernels' packing
	// buffers (Estimate.Need, what a budget is held to).
	PeakBytes int64 `json:"peak_bytes"`
	// SplitSeconds is the time spent splitting batches and building
	// their micro-batches (and estimating their memory), overlapped with
	// compute like the sampling.
	SplitSeconds float64 `json:"split_s"`
}

// Summary is the run at a glance.
type Summary struct {
	// BestValidEpoch is the epoch with the best validation accuracy (the
	// first of equals; 0: none evaluated), with its accuracies.
	BestValidEpoch int      `json:"best_valid_epoch"`
	BestValidAcc   *float64 `json:"best_valid_acc"`
	TestAccAtBest  *float64 `json:"test_acc_at_best_valid"`
	// FinalTestAcc is the last epoch's test accuracy.
	FinalTestAcc *float64 `json:"final_test_acc"`
	// TrainSeconds sums the epochs' EpochSeconds; NodesPerSecond and
	// EdgesPerSecond are over all of them.
	TrainSeconds   float64 `json:"train_s"`
	NodesPerSecond float64 `json:"nodes_per_s"`
	EdgesPerSecond float64 `json:"edges_per_s"`
	// FLOPsPerSecond are the dense products' operations per second of
	// compute, over every epoch.
	FLOPsPerSecond float64 `json:"flops_per_s"`
}

// summarise fills r.Summary from r.Epochs.
func (r *Result) summarise() {
	s := Summary{}
	var nodes, edges, flops, compute float64
	for _, e := range r.Epochs {
		flops, compute = flops+e.FLOPs, compute+e.ComputeSeconds
		if e.ValidAcc != nil && (s.BestValidAcc == nil || *e.ValidAcc > *s.BestValidAcc) {
			s.BestValidEpoch, s.BestValidAcc, s.TestAccAtBest = e.Epoch, e.ValidAcc, e.TestAcc
		}
		s.TrainSeconds += e.EpochSeconds
		nodes += e.NodesPerSecond * e.EpochSeconds
		edges += float64(e.SampledEdges)
	}
	if n := len(r.Epochs); n > 0 {
		s.FinalTestAcc = r.Epochs[n-1].TestAcc
	}
	if s.TrainSeconds > 0 {
		s.NodesPerSecond, s.EdgesPerSecond = nodes/s.TrainSeconds, edges/s.TrainSeconds
	}
	if compute > 0 {
		s.FLOPsPerSecond = flops / compute
	}
	r.Summary = s
}

func summariseGraph(g *data.Graph, st data.Stats) GraphSummary {
	s := GraphSummary{Nodes: g.N(), Edges: st.Edges, Neighbors: g.Edges(), Features: g.F, Classes: len(g.Classes),
		Train: len(g.Train), Valid: len(g.Valid), Test: len(g.Test), Skipped: st.Skipped}
	if s.Edges == 0 {
		s.Edges = g.Edges()
	}
	return s
}

// StopError is a run stopped (Options.Stop) before its last epoch:
// Epochs are the epochs complete (in the work directory's checkpoint,
// when the run has one).
type StopError struct {
	Epochs  int
	Workdir string
}

func (e *StopError) Error() string {
	if e.Workdir == "" {
		return fmt.Sprintf("stopped after %d complete epochs (no work directory: nothing kept)", e.Epochs)
	}
	return fmt.Sprintf("stopped; the checkpoint in %s holds %d complete epochs", e.Workdir, e.Epochs)
}

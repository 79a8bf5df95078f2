package devices

import "fmt"

// GNN is what one GNN training step (node classification: sampled
// blocks, validate/gnnsim) costs on this machine's trainer. The zero GNN is
// none: a profile with a GPU then trains on it at the GPU's own rates
// (gpu.flops, gpu.memory_bandwidth, pcie.h2d), with no fixed cost per
// step.
type GNN struct {
	// Engine is where the step runs: "gpu" (the batch's input features
	// cross PCIe at Gather, a micro-batch must fit gpu.memory) or "cpu"
	// (tierflow's CPU engine: a pipeline samples and gathers the next
	// batch while this one computes; memory is cpu.memory).
	Engine string `yaml:"engine" json:"engine"`
	// FLOPS is the rate of the dense matrix products (nn.Model.FLOPs).
	FLOPS FLOPRate `yaml:"flops,omitempty" json:"flops"`
	// Aggregation is the rate at which each aggregator reads and writes
	// the rows its edges carry: bytes = edges × width × 4, forward and
	// backward (nn.Model.AggregationBytes).
	Aggregation GNNAggregation `yaml:"aggregation,omitempty" json:"aggregation"`
	// Gather is the rate at which a step's input feature rows and output
	// labels reach the compute: over PCIe for a GPU, a gathering copy in
	// host memory for the CPU engine.
	Gather Bandwidth `yaml:"gather,omitempty" json:"gather_bytes_per_s"`
	// Sample is the rate of neighbour sampling in sampled edges per second
	// (0: sampling is not part of the epoch's time, as in Betty's Table 6,
	// whose times leave data preparation out).
	Sample EdgeRate `yaml:"sample,omitempty" json:"sample_edges_per_s"`
	// Split is the rate of splitting a batch by METIS (the reg and metis
	// methods: the graph among its output nodes and gpmetis), in the
	// last block's edges per second, once a split tried (0: free; range
	// and random splits cost nothing).
	Split EdgeRate `yaml:"split,omitempty" json:"split_edges_per_s"`
	// Step is the fixed cost of one micro-batch's forward and backward
	// pass (launches, the framework's own work).
	Step Duration `yaml:"step,omitempty" json:"step_s"`
	// Optimizer is the rate at which Adam's step (and zeroing the
	// gradients) goes over the parameters, once per batch, in parameter
	// bytes (4 a value) per second (0: free).
	Optimizer Bandwidth `yaml:"optimizer,omitempty" json:"optimizer_bytes_per_s"`
}

// GNNAggregation is the aggregation rate of each aggregator, in bytes
// per second (edges × width × 4, forward and backward).
type GNNAggregation struct {
	Mean Bandwidth `yaml:"mean,omitempty" json:"mean_bytes_per_s"`
	Pool Bandwidth `yaml:"pool,omitempty" json:"pool_bytes_per_s"`
	LSTM Bandwidth `yaml:"lstm,omitempty" json:"lstm_bytes_per_s"`
	GAT  Bandwidth `yaml:"gat,omitempty" json:"gat_bytes_per_s"`
}

// The GNN engines.
const (
	GNNEngineGPU = "gpu"
	GNNEngineCPU = "cpu"
)

// For returns the aggregation rate of a model (nn model names: mlp has
// no aggregation and gets 0).
func (a GNNAggregation) For(model string) Bandwidth {
	switch model {
	case "sage-mean":
		return a.Mean
	case "sage-pool":
		return a.Pool
	case "sage-lstm":
		return a.LSTM
	case "gat":
		return a.GAT
	}
	return 0
}

// IsZero reports whether g is unset.
func (g GNN) IsZero() bool { return g == GNN{} }

// GNNCost is a profile's GNN step cost with the defaults filled in: the
// GNN section where set, else the GPU's rates (an error for a profile
// with neither).
func (p Profile) GNNCost() (GNN, error) {
	g := p.GNN
	if g.IsZero() {
		if p.GPU.Count == 0 {
			return GNN{}, fmt.Errorf("profile %q: no gnn section and no GPU: nothing to train a GNN on (a CPU engine's gnn section comes from calibrating it)", p.Name)
		}
		g.Engine = GNNEngineGPU
	}
	if g.Engine == GNNEngineGPU {
		g.FLOPS = cmpOr(g.FLOPS, p.GPU.FLOPS)
		bw := p.GPU.MemoryBW
		g.Aggregation = GNNAggregation{cmpOr(g.Aggregation.Mean, bw), cmpOr(g.Aggregation.Pool, bw), cmpOr(g.Aggregation.LSTM, bw), cmpOr(g.Aggregation.GAT, bw)}
		g.Gather = cmpOr(g.Gather, p.PCIe.H2D)
		g.Optimizer = cmpOr(g.Optimizer, bw/7) // Adam reads w, g, m, v and writes w, m, v
	}
	return g, nil
}

// cmpOr is v, or def where v is zero.
func cmpOr[T ~float64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// checkGNN checks the gnn section: absent, or an engine with finite,
// non-negative rates, and for the CPU engine the rates it cannot do
// without.
func checkGNN(p Profile) error {
	g := p.GNN
	if g.IsZero() {
		return nil
	}
	cpu := g.Engine == GNNEngineCPU
	switch g.Engine {
	case GNNEngineCPU:
	case GNNEngineGPU:
		if p.GPU.Count == 0 {
			return fmt.Errorf("gnn.engine: gpu needs a GPU (gpu.count > 0)")
		}
	case "":
		return fmt.Errorf("missing required field gnn.engine (gpu or cpu)")
	default:
		return fmt.Errorf("gnn.engine: %q is not gpu or cpu", g.Engine)
	}
	for _, err := range []error{
		checkFloat("gnn.flops", g.FLOPS, "FLOP rate", when(cpu, "needed for the cpu engine")),
		checkFloat("gnn.aggregation.mean", g.Aggregation.Mean, "bandwidth", ""),
		checkFloat("gnn.aggregation.pool", g.Aggregation.Pool, "bandwidth", ""),
		checkFloat("gnn.aggregation.lstm", g.Aggregation.LSTM, "bandwidth", ""),
		checkFloat("gnn.aggregation.gat", g.Aggregation.GAT, "bandwidth", ""),
		checkFloat("gnn.gather", g.Gather, "bandwidth", when(cpu, "needed for the cpu engine")),
		checkFloat("gnn.sample", g.Sample, "edge rate", ""),
		checkFloat("gnn.split", g.Split, "edge rate", ""),
		checkDuration("gnn.step", g.Step),
		checkFloat("gnn.optimizer", g.Optimizer, "bandwidth", ""),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

package calibrate

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/realrun/gnn"
	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
	"github.com/tierflow/tierflow/realrun/gnn/split"
)

// GNNBatches are the batches GNN times each model on by default.
const GNNBatches = 4

// GNNOptions size a GNN calibration.
type GNNOptions struct {
	// Batches is how many batches each model trains on, after one
	// untimed (0: GNNBatches).
	Batches int
	// Models are the aggregators' models to time (nil: the run's own,
	// o.Model; mlp times the dense rate alone).
	Models []string
	// Name names the profile ("": "gnn-cpu").
	Name string
}

// GNNCalibration is what GNN measured: the profile (its gnn section,
// engine cpu) and every timing it was derived from.
type GNNCalibration struct {
	Profile devices.Profile `json:"profile"`
	// Workers are the goroutines the engine computed with; Fanouts and
	// Batch the run's sampling.
	Workers int    `json:"workers"`
	Fanouts string `json:"fanouts"`
	Batch   int    `json:"batch"`
	// Batches are the batches of the run's shape each model trained on.
	Batches int `json:"batches"`
	// Sample, Gather, Split and Dense are the measurements behind
	// gnn.sample, gnn.gather, gnn.split (REG into StepMicroBatches) and
	// gnn.flops; Models each aggregator's.
	Sample GNNRate `json:"sample"`
	Split  GNNRate `json:"split"`
	Gather GNNRate `json:"gather"`
	Dense  GNNRate `json:"dense"`
	// FLOPSFrom is what gnn.flops was taken from: "mlp" (Dense), or the
	// run's model where its products run faster than the mlp's.
	FLOPSFrom string    `json:"flops_from"`
	Models    []GNNStep `json:"models"`
	// Step is the run's model on the same batches split into
	// StepMicroBatches micro-batches each (gnn.step).
	Step GNNStepCost `json:"step"`
	// Optimizer is Adam's step and the gradients' zeroing over the run's
	// model (gnn.optimizer).
	Optimizer GNNRate `json:"optimizer"`
	Seconds   float64 `json:"seconds"`
}

// GNNRate is an amount of work done in a time.
type GNNRate struct {
	Work    float64 `json:"work"`
	Seconds float64 `json:"seconds"`
	Rate    float64 `json:"rate"`
}

// StepMicroBatches is how many micro-batches GNN splits each batch into
// to time the fixed cost of a step.
const StepMicroBatches = 8

// GNNStepCost is the fixed cost of a step: micro-batches' time, the part
// of it the dense and aggregation rates account for, and the rest a
// micro-batch (the first micro-batch, a warm-up, is not counted).
type GNNStepCost struct {
	MicroBatches int     `json:"micro_batches"`
	Seconds      float64 `json:"seconds"`
	WorkSeconds  float64 `json:"work_seconds"`
	Step         float64 `json:"step_seconds"`
}

// microBatches splits each batch into k micro-batches by range (at most
// one an output node).
func microBatches(bs []*block.Batch, k int) ([]*block.Batch, error) {
	var out []*block.Batch
	bd := split.NewBuilder()
	for _, b := range bs {
		parts, err := split.Split(b, min(k, len(b.Output())), split.Range, 0)
		if err != nil {
			return nil, err
		}
		for _, p := range parts {
			out = append(out, bd.Micro(b, p, nil))
		}
	}
	return out, nil
}

// GNNStep is one model's training steps: their time, dense FLOPs and
// aggregation bytes (nn.Model.AggregationBytes), the time the dense rate
// accounts for and the aggregation rate the rest gives.
type GNNStep struct {
	Model            string  `json:"model"`
	Seconds          float64 `json:"seconds"`
	FLOPs            float64 `json:"flops"`
	AggregationBytes float64 `json:"aggregation_bytes"`
	DenseSeconds     float64 `json:"dense_seconds"`
	// Aggregation is the rate in bytes/s (0: the dense products take
	// the whole time, and aggregation is costed as free; for the run's
	// model gnn.flops is then its own FLOPs over its time).
	Aggregation float64 `json:"aggregation_bytes_per_s"`
}

// GNN calibrates tierflow's CPU GNN engine on this machine at a run's
// shape, without looking at any training run: on batches the run's
// options o would sample from g in an epoch it never trains (epoch 0),
// it times neighbour sampling (gnn.sample), the feature gather
// (gnn.gather), a REG split (gnn.split), the dense products of an mlp of the run's widths over
// the rows the model's first layer computes (gnn.flops), Adam's step over the run's
// model (gnn.optimizer), and each of opt.Models' TrainStep; what the
// dense rate does not account for of a model's time is its aggregation
// (gnn.aggregation.<aggregator>, over nn.Model.AggregationBytes). The
// profile's cpu section is this machine's (workers, memory).
func GNN(g *data.Graph, o gnn.Options, opt GNNOptions) (GNNCalibration, error) {
	t0 := time.Now()
	if opt.Batches <= 0 {
		opt.Batches = GNNBatches
	}
	models := opt.Models
	if models == nil {
		models = []string{o.Model}
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	nn.Workers = workers
	if o.Fanouts == nil || o.Model == "mlp" {
		o.Fanouts = gnn.DefaultFanouts(o.Model, o.Layers)
	}
	cal := GNNCalibration{Workers: workers, Fanouts: gnn.FormatFanouts(o.Fanouts), Batch: o.Batch}
	// The batches: epoch 0's first opt.Batches+1 (the first warms up).
	var batches []*block.Batch
	var edges, secs []float64
	want := opt.Batches + 1
	s := block.NewSampler(g, o.Fanouts)
	order := gnn.EpochOrder(g.Train, o.Seed, 0)
	pcg := rand.NewPCG(0, 0)
	rng := rand.New(pcg)
	for i := 0; i < want && i*o.Batch < len(order); i++ {
		pcg.Seed(gnn.SampleState(o.Seed, 0, i))
		seeds := order[i*o.Batch : min((i+1)*o.Batch, len(order))]
		st := time.Now()
		b := s.Sample(seeds, rng)
		secs = append(secs, time.Since(st).Seconds())
		e := 0.0
		for l := range b.Blocks {
			e += float64(len(b.Blocks[l].Nbr))
		}
		edges = append(edges, e)
		batches = append(batches, b)
	}
	if len(batches) == 0 {
		return cal, fmt.Errorf("calibrate gnn: no training nodes to sample")
	}
	first := min(1, len(batches)-1) // the first warms up, when there are more
	timed := batches[first:]
	cal.Batches = len(timed)
	cal.Sample = rate(sum(edges[first:]), sum(secs[first:]))
	// The gather: each timed batch's input rows, as the trainer copies them.
	var buf []float32
	var gatherBytes, gatherSecs float64
	for _, b := range timed {
		st := time.Now()
		buf = g.Gather(buf, b.Input(), workers)
		gatherSecs += time.Since(st).Seconds()
		gatherBytes += float64(len(b.Input())*g.F*4 + len(b.Output())*4)
	}
	cal.Gather = rate(gatherBytes, gatherSecs)
	// The REG split of each timed batch into StepMicroBatches.
	var splitEdges, splitSecs float64
	for i, b := range timed {
		if len(b.Output()) < 2 {
			continue
		}
		st := time.Now()
		if _, err := split.Split(b, min(StepMicroBatches, len(b.Output())), split.REG, uint64(i)); err != nil {
			return cal, fmt.Errorf("calibrate gnn: split: %w", err)
		}
		splitSecs += time.Since(st).Seconds()
		splitEdges += float64(len(b.Blocks[len(b.Blocks)-1].Nbr))
	}
	cal.Split = rate(splitEdges, splitSecs)
	steps := func(model string, fanouts []int, bs []*block.Batch) (secs, flops, agg float64, m *nn.Model, err error) {
		spec := nn.Spec{Model: model, In: g.F, Hidden: o.Hidden, Classes: len(g.Classes), Layers: o.Layers, Heads: o.Heads, Dropout: o.Dropout}
		if m, err = nn.New(spec, 1); err != nil {
			return 0, 0, 0, nil, err
		}
		adam := nn.NewAdam(m.Params(), o.LR)
		if model == "mlp" {
			// The dense products at the shapes the model's widest layer
			// runs them: an mlp over that layer's destination rows.
			bs = nil
			for _, b := range batches {
				bs = append(bs, block.NewSampler(g, fanouts).Sample(b.Blocks[0].Src[:b.Blocks[0].NumDst], rng))
			}
		}
		dpcg := rand.NewPCG(1, 2)
		drng := rand.New(dpcg)
		for i, b := range bs {
			x := g.Gather(nil, b.Input(), workers)
			y := make([]int32, len(b.Output())) // class 0 for all: the labels do not change the time
			dpcg.Seed(1, uint64(i))
			st := time.Now()
			m.TrainStep(b, x, y, 1, drng)
			el := time.Since(st).Seconds()
			adam.Step(m.Params())
			m.ZeroGrad()
			if i == 0 && len(bs) > 1 {
				continue // warm-up
			}
			secs += el
			flops += m.FLOPs(b)
			agg += m.AggregationBytes(b)
		}
		return secs, flops, agg, m, nil
	}
	dsecs, dflops, _, _, err := steps("mlp", make([]int, o.Layers), batches)
	if err != nil {
		return cal, fmt.Errorf("calibrate gnn: %w", err)
	}
	cal.Dense, cal.FLOPSFrom = rate(dflops, dsecs), "mlp"
	prof := devices.Profile{Name: cmpOrString(opt.Name, "gnn-cpu"), Description: "tierflow's CPU GNN engine on this machine, calibrated at one run's shape (disk not measured)"}
	gc := devices.GNN{Engine: devices.GNNEngineCPU, FLOPS: devices.FLOPRate(cal.Dense.Rate), Gather: devices.Bandwidth(cal.Gather.Rate),
		Sample: devices.EdgeRate(cal.Sample.Rate), Split: devices.EdgeRate(cal.Split.Rate)}
	var params float64
	for _, model := range models {
		if model == "mlp" {
			continue
		}
		secs, flops, agg, m, err := steps(model, o.Fanouts, batches)
		if err != nil {
			return cal, fmt.Errorf("calibrate gnn: %s: %w", model, err)
		}
		st := GNNStep{Model: model, Seconds: secs, FLOPs: flops, AggregationBytes: agg, DenseSeconds: flops / cal.Dense.Rate}
		if rest := secs - st.DenseSeconds; rest > 0 && agg > 0 {
			st.Aggregation = agg / rest
		} else if model == o.Model && secs > 0 {
			// The model's products run faster than the mlp's (sage-lstm's
			// gate products are wider): its own steps give the dense rate,
			// and its aggregation is costed as free.
			gc.FLOPS = devices.FLOPRate(flops / secs)
			st.DenseSeconds = secs
			cal.FLOPSFrom = model
		}
		cal.Models = append(cal.Models, st)
		setAggregation(&gc.Aggregation, model, devices.Bandwidth(st.Aggregation))
		if model == o.Model {
			params = float64(m.NumParams())
			cal.Optimizer = timeAdam(m, o.LR, opt.Batches)
			// The fixed cost of a step: the same batches in StepMicroBatches
			// micro-batches each, less what the rates above account for.
			micro, err := microBatches(batches, StepMicroBatches)
			if err != nil {
				return cal, fmt.Errorf("calibrate gnn: %w", err)
			}
			msecs, mflops, magg, _, err := steps(model, o.Fanouts, micro)
			if err != nil {
				return cal, fmt.Errorf("calibrate gnn: %s: %w", model, err)
			}
			work := mflops / float64(gc.FLOPS)
			if st.Aggregation > 0 {
				work += magg / st.Aggregation
			}
			n := float64(len(micro) - 1) // the first is the warm-up
			cal.Step = GNNStepCost{MicroBatches: int(n), Seconds: msecs, WorkSeconds: work}
			if n > 0 && msecs > work {
				cal.Step.Step = (msecs - work) / n
			}
			gc.Step = devices.Duration(cal.Step.Step * 1e9)
		}
	}
	if params == 0 && o.Model != "mlp" && !slices.Contains(models, o.Model) {
		spec := nn.Spec{Model: o.Model, In: g.F, Hidden: o.Hidden, Classes: len(g.Classes), Layers: o.Layers, Heads: o.Heads}
		if m, err := nn.New(spec, 1); err == nil {
			cal.Optimizer = timeAdam(m, o.LR, opt.Batches)
		}
	}
	gc.Optimizer = devices.Bandwidth(cal.Optimizer.Rate)
	prof.GNN = gc
	prof.CPU.Workers = workers
	prof.CPU.Memory = devices.Bytes(memTotal())
	prof.CPU.BatchEdges = devices.EdgeRate(cal.Sample.Rate)
	prof.CPU.GatherBW = devices.Bandwidth(cal.Gather.Rate)
	// A GNN epoch reads no partitions: the disk is not measured, and
	// stands at the gather's rate (a profile needs one).
	prof.Disk.Read, prof.Disk.Write = devices.Bandwidth(cal.Gather.Rate), devices.Bandwidth(cal.Gather.Rate)
	cal.Profile = prof
	cal.Seconds = time.Since(t0).Seconds()
	if err := prof.Validate(); err != nil {
		return cal, fmt.Errorf("calibrate gnn: %w", err)
	}
	return cal, nil
}

// timeAdam times Adam's step and the gradients' zeroing over m's
// parameters, rounds times: parameter bytes per second.
func timeAdam(m *nn.Model, lr float64, rounds int) GNNRate {
	adam := nn.NewAdam(m.Params(), lr)
	adam.Step(m.Params())
	st := time.Now()
	for range rounds {
		adam.Step(m.Params())
		m.ZeroGrad()
	}
	return rate(float64(m.NumParams())*4*float64(rounds), time.Since(st).Seconds())
}

func setAggregation(a *devices.GNNAggregation, model string, bw devices.Bandwidth) {
	switch model {
	case "sage-mean":
		a.Mean = bw
	case "sage-pool":
		a.Pool = bw
	case "sage-lstm":
		a.LSTM = bw
	case "gat":
		a.GAT = bw
	}
}

func rate(work, secs float64) GNNRate {
	r := GNNRate{Work: work, Seconds: secs}
	if secs > 0 {
		r.Rate = work / secs
	}
	return r
}

func cmpOrString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

package sim

import (
	"fmt"
	"os"
	"strings"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/workload"
)

// Request is one simulation as a user states it, in names and numbers (the
// flags of `simulate`); zero values mean the defaults. Assemble turns it
// into a Scenario, the one place where those names are resolved and
// checked.
type Request struct {
	System, Device, Dataset string
	Model                   string // "" = the dataset's
	Dim                     int
	Batch, Negatives        int // 0 = the papers'
	Chunk                   int // edges per chunk; 0 = as many as Negatives
	Staleness, WriteBuffers int // 0 = the system's
	NoPrefetch, SyncWrites  bool
	// Edges is uniform, skewed (with exponent Skew) or a histogram file.
	Edges string
	Skew  float64
	P, C  int
	// Orderings is a comma-separated list or "all"; Plan, when set, asks
	// for one ordering's Plan to be written.
	Orderings, Policy string
	Seed              int64
	Plan              bool
	// CheckpointEvery is how often to checkpoint inside an epoch
	// (ParseInterval: 30s or 64b; "" never).
	CheckpointEvery string
	// GPUMemory ("16GB"; "" = the device's) replaces the device's GPU
	// memory (for GPU buffers and batches alike); NoMicroBatching keeps
	// batches whole when they do not fit.
	GPUMemory       string
	NoMicroBatching bool
	// Trace records every ordering's epoch as a timeline (Report.Trace).
	Trace bool
	// Graph, when set, is the user's own graph (--graph): it replaces
	// Dataset wholesale and gives the bucket counts at any p; Edges must
	// then be "" or uniform (the default). With a Graph, Dim 0 is the
	// graph's dimension and Model "" its model. P 0 is DefaultP, or the
	// p of a histogram file (Edges), the only one it has buckets at.
	Graph *Graph
	// ResidentNodes, when positive, are the nodes of unpartitioned
	// entity types (workload.Dataset.ResidentNodes) of the dataset preset
	// or histogram: held in memory beside the buffer, read once an epoch
	// and written once. A Graph carries its own.
	ResidentNodes int64
}

// Assemble resolves and checks every field of the request and returns the
// Scenario and the orderings to simulate (nil for systems without a Plan).
// Bad input is an inputerr.Error naming the field ({Dim}).
func (q Request) Assemble() (Scenario, []string, error) {
	var sc Scenario
	sys, err := LookupSystem(q.System)
	if err != nil {
		return sc, nil, inputerr.Errorf("{System}: %w", err)
	}
	prof, err := devices.Resolve(q.Device)
	if err != nil {
		return sc, nil, inputerr.Errorf("{Device}: %w", err)
	}
	g := q.Graph
	var ds workload.Dataset
	if g != nil {
		if q.Edges != "" && q.Edges != string(Uniform) {
			return sc, nil, inputerr.Errorf("{Graph} and {Edges} %s: the graph's own buckets are its edges; give one or the other", q.Edges)
		}
		if err := g.Check(); err != nil {
			return sc, nil, inputerr.Errorf("{Graph}: %w", err)
		}
		ds = g.Dataset()
		if q.Dim == 0 {
			q.Dim = g.Dim
		}
	} else if ds, err = workload.LookupDataset(q.Dataset); err != nil {
		return sc, nil, inputerr.Errorf("{Dataset}: %w", err)
	}
	var hist *Histogram
	var notes []string
	histP := 0 // the p of a histogram file's buckets
	switch q.Edges {
	case "uniform", "skewed", "":
	default:
		f, err := os.Open(q.Edges)
		if err != nil {
			return sc, nil, inputerr.Errorf("{Edges}: %q is neither uniform, skewed nor a readable histogram file: %w", q.Edges, err)
		}
		h, err := ReadHistogram(f)
		f.Close()
		if err != nil {
			return sc, nil, inputerr.Errorf("{Edges} %s: %w", q.Edges, err)
		}
		histP = h.P
		if g = HistogramGraph(h, q.Edges); g != nil {
			ds = g.Dataset() // the file carries the graph's sizes
		} else {
			hist = &h
			_, total := h.Flat()
			notes = append(notes, fmt.Sprintf("{Edges} %s gives no node count (a histogram written before they were recorded): partitions are sized from {Dataset} %s's %d nodes, the %d training edges are the histogram's; {Graph} WORKDIR uses the graph's own sizes",
				q.Edges, ds.Name, ds.Nodes, total))
			ds.Edges, ds.TrainFraction = total, 1
		}
	}
	if q.P == 0 {
		switch {
		case g != nil && g.P > 0:
			q.P = g.P
		case hist != nil:
			q.P = hist.P
		default:
			q.P = DefaultP
		}
	}
	if sys.Partitioned && histP > 0 && histP != q.P {
		return sc, nil, &inputerr.Error{Err: &HistogramPError{File: q.Edges, HistP: histP, P: q.P}}
	}
	if q.Dim < 1 {
		return sc, nil, inputerr.Errorf("{Dim} %d: the dimension must be at least 1", q.Dim)
	}
	switch {
	case q.ResidentNodes < 0:
		return sc, nil, inputerr.Errorf("{ResidentNodes} %d: must not be negative", q.ResidentNodes)
	case q.ResidentNodes > 0 && g != nil:
		return sc, nil, inputerr.Errorf("{ResidentNodes} %d: the graph %s gives its own resident nodes (%d)", q.ResidentNodes, g.Name, g.ResidentNodes)
	case q.ResidentNodes > 0:
		ds.ResidentNodes = q.ResidentNodes
	}
	if sys.Partitioned {
		if err := ds.CheckResident(q.P); err != nil {
			return sc, nil, inputerr.Errorf("{ResidentNodes}: %w", err)
		}
	}
	if q.Policy == "" {
		q.Policy = string(orderings.Belady)
	}
	policy, err := orderings.ParsePolicy(q.Policy)
	if err != nil {
		return sc, nil, inputerr.Errorf("{Policy}: %w", err)
	}
	tr := DefaultTraining(ds, q.Dim)
	if q.Model != "" {
		if tr.Model, err = workload.ParseModel(q.Model); err != nil {
			return sc, nil, inputerr.Errorf("{Model}: %w", err)
		}
	}
	for _, f := range []struct {
		field string // its marker
		v     int
		dst   *int
	}{{"{Batch}", q.Batch, &tr.Batch}, {"{Negatives}", q.Negatives, &tr.Negatives}, {"{Chunk}", q.Chunk, &tr.ChunkSize}, {"{Staleness}", q.Staleness, &sys.Staleness}, {"{WriteBuffers}", q.WriteBuffers, &sys.WriteBuffers}} {
		if f.v < 0 {
			return sc, nil, inputerr.Errorf("%s %d: must be positive", f.field, f.v)
		}
		if f.v > 0 {
			*f.dst = f.v
		}
	}
	sys.Prefetch = sys.Prefetch && !q.NoPrefetch
	sys.SyncWrites = sys.SyncWrites || q.SyncWrites
	sc = Scenario{System: sys, Profile: prof, Dataset: ds, Training: tr, P: q.P, C: q.C, Policy: policy, Seed: q.Seed, NoMicroBatching: q.NoMicroBatching, Trace: q.Trace}
	if sc.Checkpoint, err = workload.ParseInterval(q.CheckpointEvery); err != nil {
		return sc, nil, inputerr.Errorf("{CheckpointEvery} %w", err)
	}
	if q.GPUMemory != "" {
		mem, err := devices.ParseBytes(q.GPUMemory)
		if err != nil {
			return sc, nil, inputerr.Errorf("{GPUMemory}: %w", err)
		}
		if mem <= 0 {
			return sc, nil, inputerr.Errorf("{GPUMemory} %s: must be positive", q.GPUMemory)
		}
		sc.Profile.GPU.Memory = mem
	}
	sc.Graph, sc.Histogram, sc.Notes = g, hist, notes
	switch q.Edges {
	case "uniform", "skewed", "":
		sc.Edges = Distribution(q.Edges)
		if q.Edges == "" {
			sc.Edges = Uniform
		}
		if q.Skew < 0 {
			return sc, nil, inputerr.Errorf("{Skew} %v: must not be negative", q.Skew)
		}
		sc.Skew = q.Skew
	}
	if !sys.Partitioned {
		if q.Plan {
			return sc, nil, inputerr.Errorf("{Plan}: system %s keeps every parameter resident and has no Plan", sys.Name)
		}
		return sc, nil, nil
	}
	c := sc.Capacity()
	if sys.Capacity > 0 && q.C > 0 && q.C != sys.Capacity {
		return sc, nil, inputerr.Errorf("{C} %d: system %s has a buffer of %d partitions by design", q.C, sys.Name, sys.Capacity)
	}
	if err := orderings.CheckPC(q.P, c); err != nil {
		return sc, nil, inputerr.Errorf("{P} %d {C} %d: %w", q.P, c, err)
	}
	if n := shapeNote(q.Device, sc); n != "" {
		sc.Notes = append(sc.Notes, n)
	}
	if sys.Batches == OnCPU {
		if _, n, err := devices.CPUTrainCost(prof, tr.Model); err != nil {
			return sc, nil, inputerr.Errorf("{Device} %s, {Model} %s: %w", q.Device, tr.Model, err)
		} else if n != "" {
			sc.Notes = append(sc.Notes, fmt.Sprintf("{Device} %s: %s", q.Device, n))
		}
	}
	names, err := orderings.ParseList(q.Orderings)
	if err != nil {
		return sc, nil, inputerr.Errorf("{Orderings}: %w", err)
	}
	if q.Plan && len(names) != 1 {
		return sc, nil, inputerr.Errorf("{Plan} writes one Plan: select exactly one ordering with {Orderings}")
	}
	return sc, names, nil
}

// Result is one ordering's prediction: the Report plus how its swaps
// compare with the lower bound.
type Result struct {
	report.Report
	SwapsOverLowerBound float64 `json:"swaps_over_lower_bound"`
	// EpochRange is the epoch's range over the device's measured spread
	// (RunRange) and Place the ordering's place among the orderings by
	// epoch with what the spread allows of it (Rank); both absent when the
	// device has no spread.
	EpochRange
	Place
}

// Prediction is a scenario simulated for a list of orderings: what
// `simulate` prints.
type Prediction struct {
	P               int               `json:"p"`
	C               int               `json:"c"`
	LowerBoundSwaps int               `json:"lower_bound_swaps"`
	BETAFormula     int               `json:"beta_formula_swaps"`
	System          System            `json:"system"`
	Device          string            `json:"device"`
	Dataset         string            `json:"dataset"`
	Nodes           int64             `json:"nodes"`
	TrainEdges      int64             `json:"train_edges"`
	Dim             int               `json:"dim"`
	Training        workload.Training `json:"training"`
	Edges           string            `json:"edges"`
	Policy          string            `json:"policy"`
	Seed            int64             `json:"seed"`
	PartitionBytes  int64             `json:"partition_bytes"`
	// ResidentNodes are the nodes of unpartitioned entity types and
	// ResidentBytes their table (rows and optimizer state), held in
	// memory beside the buffer's partitions (partitioned systems; absent
	// without resident types).
	ResidentNodes int64               `json:"resident_nodes,omitempty"`
	ResidentBytes int64               `json:"resident_bytes,omitempty"`
	Results       []Result            `json:"results"`
	Skipped       []orderings.Skipped `json:"skipped"`
	Plans         []*orderings.Plan   `json:"-"`
	// Graph is the user's own graph simulated (--graph, or a histogram
	// file with the graph's sizes); nil for a dataset preset.
	Graph *Graph `json:"graph,omitempty"`
	// Notes are lines for the reader about how the request was read.
	Notes []string `json:"notes,omitempty"`
}

// Predict simulates sc for every named ordering (orderings not defined for
// (p, c) are listed under Skipped with the reason) and keeps their Plans.
func Predict(sc Scenario, names []string) (Prediction, error) {
	ds := sc.Data()
	out := Prediction{
		System: sc.System, Device: sc.Profile.Name,
		Dataset: ds.Name, Nodes: ds.Nodes, TrainEdges: ds.TrainEdges(), Graph: sc.Graph, Notes: sc.Notes,
		Dim: sc.Training.Dim, Training: sc.Training, Edges: string(sc.Edges),
		Policy: string(sc.Policy), Seed: sc.Seed,
		Results: []Result{}, Skipped: []orderings.Skipped{},
	}
	if sc.System.Partitioned {
		c := sc.Capacity()
		out.P, out.C = sc.P, c
		out.LowerBoundSwaps = orderings.LowerBound(sc.P, c)
		out.BETAFormula = orderings.BETASwaps(sc.P, c)
		out.PartitionBytes = sc.System.DataPartitionBytes(ds, sc.P, sc.Training.Dim)
		out.ResidentNodes, out.ResidentBytes = ds.ResidentNodes, sc.System.ResidentTableBytes(ds, sc.Training.Dim)
	}
	plans := []*orderings.Plan{nil} // a system without partitions runs once, without a Plan
	if sc.System.Partitioned {
		var err error
		if plans, out.Skipped, err = orderings.SelectSome(names, sc.P, sc.Capacity(), sc.policy(), sc.Seed); err != nil {
			return out, &inputerr.Error{Err: err}
		}
		if out.Skipped == nil {
			out.Skipped = []orderings.Skipped{}
		}
	}
	for _, pl := range plans {
		sc.Plan = pl
		cfg, err := sc.Config()
		if err != nil {
			return out, &inputerr.Error{Err: err}
		}
		rep, rng, err := RunRange(cfg)
		if err != nil {
			return out, &inputerr.Error{Err: err}
		}
		res := Result{Report: rep, SwapsOverLowerBound: 1, EpochRange: rng}
		if out.LowerBoundSwaps > 0 {
			res.SwapsOverLowerBound = float64(rep.Swaps) / float64(out.LowerBoundSwaps)
		}
		if res.Ordering == "" {
			res.Ordering = "none"
		}
		out.Results = append(out.Results, res)
		out.Plans = append(out.Plans, cfg.Plan)
	}
	if sc.Profile.HasSpread() {
		entries := make([]Ranked, len(out.Results))
		for i, r := range out.Results {
			entries[i] = Ranked{Median: r.EpochSeconds, Range: r.EpochRange}
		}
		for i, p := range Rank(entries) {
			out.Results[i].Place = p
		}
	}
	return out, nil
}

// HasSpread reports whether the prediction's device had a measured spread
// (every result then has an epoch range and a place).
func (o Prediction) HasSpread() bool {
	return len(o.Results) > 0 && o.Results[0].EpochRange.Has()
}

// Predict assembles the request and simulates it (see Predict).
func (q Request) Predict() (Prediction, error) {
	sc, names, err := q.Assemble()
	if err != nil {
		return Prediction{}, err
	}
	out, err := Predict(sc, names)
	switch {
	case q.Graph != nil:
		out.Edges = "graph"
	case q.Edges != "":
		out.Edges = q.Edges
	}
	return out, err
}

// shapeNote is one line for a simulation of tierflow's CPU engine on a
// profile whose cpu.train was measured at another training shape than
// the one simulated ("" otherwise): the rate is carried over as measured.
// The workers and partition rows are not compared (the simulation has
// no flag for the first, and a sweep spans many of the second).
func shapeNote(device string, sc Scenario) string {
	ts := sc.Profile.CPU.TrainShape
	if sc.System.Batches != OnCPU || ts == nil {
		return ""
	}
	tr := sc.Training
	run := devices.TrainShape{Model: string(tr.Model), Dim: tr.Dim, Batch: tr.Batch, Negatives: tr.Negatives, Chunk: tr.Chunk(), Workers: ts.Workers, Rows: ts.Rows}
	diffs := ts.Differences(run)
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("{Device} %s: cpu.train was measured at %s; this simulation differs: %s, and carries that rate over (realrun calibrate with the run's training flags measures its shape)",
		device, *ts, strings.Join(diffs, ", "))
}

package sim

import (
	"fmt"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/workload"
)

// DefaultTraining is the papers' training shape for a dataset: batches of
// 50,000 edges and 1,000 negatives (Marius Table 1; FB15k uses batches of
// 10,000), the dataset's score function, and dimension d.
func DefaultTraining(ds workload.Dataset, d int) workload.Training {
	t := workload.Training{Model: ds.Model, Dim: d, Batch: 50_000, Negatives: 1_000}
	if ds.Name == "fb15k" {
		t.Batch = 10_000
	}
	if t.Model == "" {
		t.Model = workload.Dot
	}
	return t
}

// Scenario is one simulation described the way a user states it; Config
// turns it into a Plan and bucket counts.
type Scenario struct {
	System   System
	Profile  devices.Profile
	Dataset  workload.Dataset
	Training workload.Training
	// P and C size the partitions and the buffer (partitioned systems).
	P, C     int
	Ordering string
	Policy   orderings.Policy
	Seed     int64
	// Plan, when set, is executed as it is (Ordering, Policy and Seed
	// then play no part): a Plan built once and simulated as given.
	Plan *orderings.Plan
	// Edges spreads the training edges over the buckets (uniform or
	// skewed with exponent Skew); Histogram, when set, gives the counts.
	Edges     Distribution
	Skew      float64
	Histogram *Histogram
	// Checkpoint is how often to checkpoint inside an epoch.
	Checkpoint workload.CheckpointInterval
	// NoMicroBatching and Trace: see Config.
	NoMicroBatching bool
	Trace           bool
	// Graph, when set, is the user's own graph: it replaces Dataset
	// (Data) and gives the bucket counts at P, whatever Edges says.
	Graph *Graph
	// Notes are lines for the reader about how the request was read.
	Notes []string
}

// Data is the dataset simulated: the graph's own when the scenario has
// one, else Dataset.
func (s Scenario) Data() workload.Dataset {
	if s.Graph != nil {
		return s.Graph.Dataset()
	}
	return s.Dataset
}

// Capacity returns the buffer capacity the scenario runs with: the
// system's own when its design fixes one, else C (or DefaultCapacity).
func (s Scenario) Capacity() int {
	if s.System.Capacity > 0 {
		return s.System.Capacity
	}
	if s.C > 0 {
		return s.C
	}
	return DefaultCapacity
}

// policy is the scenario's eviction policy (Belady unless set).
func (s Scenario) policy() orderings.Policy {
	if s.Policy == "" {
		return orderings.Belady
	}
	return s.Policy
}

// Config builds the simulation input. A plan that the ordering cannot build
// for (p, c) returns its error (orderings.ErrNotApplicable for a mismatch).
func (s Scenario) Config() (Config, error) {
	cfg := Config{System: s.System, Profile: s.Profile, Dataset: s.Data(), Training: s.Training, Checkpoint: s.Checkpoint, NoMicroBatching: s.NoMicroBatching, Trace: s.Trace}
	if !s.System.Partitioned {
		return cfg, nil
	}
	c := s.Capacity()
	if s.System.Capacity > 0 && s.C > 0 && s.C != s.System.Capacity {
		return Config{}, fmt.Errorf("%w: system %s has a buffer of %d partitions by design, not %d", ErrConfig, s.System.Name, s.System.Capacity, s.C)
	}
	pl := s.Plan
	if pl == nil {
		ord := s.Ordering
		if ord == "" {
			ord = s.System.Ordering
		}
		var err error
		if pl, err = orderings.Build(ord, s.P, c, s.policy(), s.Seed); err != nil {
			return Config{}, err
		}
	} else if pl.P != s.P || pl.C != c {
		return Config{}, fmt.Errorf("%w: the Plan has p = %d, c = %d, the scenario p = %d, c = %d", ErrConfig, pl.P, pl.C, s.P, c)
	}
	cfg.Plan = pl
	var err error
	switch {
	case s.Graph != nil:
		h, err := s.Graph.Histogram(s.P)
		if err != nil {
			return Config{}, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		cfg.BucketEdges, _ = h.Flat()
	case s.Histogram != nil:
		if s.Histogram.P != s.P {
			return Config{}, fmt.Errorf("%w: histogram has p = %d, the plan p = %d", ErrConfig, s.Histogram.P, s.P)
		}
		cfg.BucketEdges, _ = s.Histogram.Flat()
	default:
		skew := s.Skew
		if s.Edges == Skewed && skew == 0 {
			skew = DefaultSkew
		}
		cfg.BucketEdges, err = BucketEdges(cfg.Dataset.TrainEdges(), s.P, s.Edges, skew)
		if err != nil {
			return Config{}, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	return cfg, nil
}

// Simulate builds the scenario's Config and runs it.
func Simulate(s Scenario) (report.Report, error) {
	cfg, err := s.Config()
	if err != nil {
		return report.Report{}, err
	}
	return Run(cfg)
}

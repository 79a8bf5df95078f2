package simulated

import (
	"fmt"
	"strconv"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

// LegendProfile is the Legend machine (one A100, NVMe read and written
// directly by the GPU; Legend §7.1, Table 1).
const LegendProfile = "legend-a100"

// LegendDim is the embedding dimension of every Legend experiment
// (Legend Table 2).
const LegendDim = 100

// LegendPartitions are the partition counts Legend itself uses (Legend
// §7.1): 8 for Twitter (a 3-partition buffer of 12 GB) and 12 for
// Freebase86m (17 GB).
var LegendPartitions = map[string]int{"twitter": 8, "freebase86m": 12}

// legendDatasetLabel is how the Legend paper abbreviates each dataset.
var legendDatasetLabel = map[string]string{"twitter": "TW", "freebase86m": "FM"}

// LegendCase is one simulated epoch of the Legend system on legend-a100.
type LegendCase struct {
	Dataset  string
	P        int
	Ordering string // "" is the system's own (legend)
	// Capacity, when set, replaces the system's buffer of 3 (COVER runs
	// with 4).
	Capacity   int
	NoPrefetch bool
}

// String names the case the way the tests and notes print it.
func (lc LegendCase) String() string {
	s := fmt.Sprintf("legend %s p=%d", lc.Dataset, lc.P)
	if lc.Ordering != "" {
		s += " " + lc.Ordering
	}
	if lc.Capacity > 0 {
		s += fmt.Sprintf(" c=%d", lc.Capacity)
	}
	if lc.NoPrefetch {
		s += " no-prefetch"
	}
	return s
}

// LegendSimulate simulates one epoch of the case with the papers' training
// shape (batches of 50,000 edges, 1,000 negatives, d = 100).
func LegendSimulate(lc LegendCase) (report.Report, error) {
	ds, err := workload.LookupDataset(lc.Dataset)
	if err != nil {
		return report.Report{}, err
	}
	return legendSimulateDataset(lc, ds, sim.DefaultTraining(ds, LegendDim))
}

func legendSimulateDataset(lc LegendCase, ds workload.Dataset, tr workload.Training) (report.Report, error) {
	prof, err := devices.Preset(LegendProfile)
	if err != nil {
		return report.Report{}, err
	}
	sys, err := sim.LookupSystem("legend")
	if err != nil {
		return report.Report{}, err
	}
	if lc.NoPrefetch {
		sys.Prefetch = false
	}
	if lc.Capacity > 0 {
		sys.Capacity = lc.Capacity
	}
	rep, err := sim.Simulate(sim.Scenario{System: sys, Profile: prof, Dataset: ds, Training: tr, P: lc.P, Ordering: lc.Ordering})
	if err != nil {
		return report.Report{}, fmt.Errorf("%s: %w", lc, err)
	}
	return rep, nil
}

func legendF(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// legendSpeedup is the paper's speedup convention: slow ÷ fast − 1, in %.
func legendSpeedup(slow, fast float64) float64 { return (slow/fast - 1) * 100 }

package simulated

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/experiments"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

// MariusProfile is the machine of Marius's single-GPU experiments (§5
// Setup), shared with the real experiment marius-ratios.
const MariusProfile = experiments.MariusProfile

// mariusOrderings are the edge-bucket orderings Marius §5.3 compares, in the
// paper's order.
var mariusOrderings = experiments.MariusOrderings

// mariusLabel is how the paper names each ordering in its figures.
var mariusLabel = experiments.MariusLabel

// MariusCase is one simulated Marius epoch: a system preset ("marius" or
// "marius-inmem"), a dataset preset, the embedding dimension and, for the
// partitioned system, p, c, the ordering and the buffer knobs.
type MariusCase struct {
	System   string
	Dataset  string
	Dim      int
	P, C     int
	Ordering string
	// NoPrefetch turns Marius's prefetch thread off (loads wait until the
	// bucket that needs them is next); SyncWrites makes a load wait for the
	// write-back of the partition it replaces.
	NoPrefetch bool
	SyncWrites bool
}

// String names the case the way the tests and notes print it.
func (mc MariusCase) String() string {
	s := fmt.Sprintf("%s %s d=%d", mc.System, mc.Dataset, mc.Dim)
	if mc.System == "marius" {
		s += fmt.Sprintf(" p=%d c=%d %s", mc.P, mc.C, mc.Ordering)
		if mc.NoPrefetch {
			s += " no-prefetch"
		}
		if mc.SyncWrites {
			s += " sync-writes"
		}
	}
	return s
}

// MariusScenario turns the case into a simulator scenario on p3.2xlarge
// with the papers' training shape (batches of 50,000, 1,000 negatives).
func MariusScenario(mc MariusCase) (sim.Scenario, error) {
	prof, err := devices.Preset(MariusProfile)
	if err != nil {
		return sim.Scenario{}, err
	}
	ds, err := workload.LookupDataset(mc.Dataset)
	if err != nil {
		return sim.Scenario{}, err
	}
	sys, err := sim.LookupSystem(mc.System)
	if err != nil {
		return sim.Scenario{}, err
	}
	if mc.NoPrefetch {
		sys.Prefetch = false
	}
	if mc.SyncWrites {
		sys.SyncWrites = true
	}
	return sim.Scenario{System: sys, Profile: prof, Dataset: ds, Training: sim.DefaultTraining(ds, mc.Dim),
		P: mc.P, C: mc.C, Ordering: mc.Ordering}, nil
}

// MariusSimulate simulates one epoch of the case; slices is the number of
// timeline points (0: the simulator's default).
func MariusSimulate(mc MariusCase, slices int) (report.Report, error) {
	sc, err := MariusScenario(mc)
	if err != nil {
		return report.Report{}, fmt.Errorf("%s: %w", mc, err)
	}
	cfg, err := sc.Config()
	if err != nil {
		return report.Report{}, fmt.Errorf("%s: %w", mc, err)
	}
	cfg.TimelineSlices = slices
	rep, err := sim.Run(cfg)
	if err != nil {
		return report.Report{}, fmt.Errorf("%s: %w", mc, err)
	}
	return rep, nil
}

// mariusOrderingCases are the partitioned cases of one (dataset, d) at
// p=32, c=8 (Marius §5.3), one per ordering.
func mariusOrderingCases(dataset string, d int, noPrefetch bool) []MariusCase {
	var cs []MariusCase
	for _, o := range mariusOrderings {
		cs = append(cs, MariusCase{System: "marius", Dataset: dataset, Dim: d, P: 32, C: 8, Ordering: o, NoPrefetch: noPrefetch})
	}
	return cs
}

// mariusF formats x with prec decimals.
func mariusF(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// mariusPct formats ours ÷ paper − 1 as a signed percentage.
func mariusPct(ours, paper float64) string {
	return fmt.Sprintf("%+.1f", 100*(ours/paper-1))
}

// mariusNone marks a cell the paper gives no number for.
const mariusNone = "–"

// mariusSpread is max ÷ min − 1 of the values.
func mariusSpread(xs ...float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return hi/lo - 1
}

// mariusWarnings lists the simulator's warnings of the named reports, or
// says there were none.
func mariusWarnings(reps map[string]report.Report) string {
	var out string
	for _, name := range mariusSortedKeys(reps) {
		for _, w := range reps[name].Warnings {
			if out != "" {
				out += "; "
			}
			out += name + ": " + w
		}
	}
	if out == "" {
		return "Simulator warnings: none."
	}
	return "Simulator warnings: " + out + "."
}

func mariusSortedKeys(m map[string]report.Report) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

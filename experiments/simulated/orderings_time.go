package simulated

import (
	"fmt"
	"strconv"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/experiments"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "orderings", Description: "Does the ordering matter in time? tierflow vs BETA, Hilbert-symmetric and Legend (legend-c) on the data-bound configurations of the other experiments and the sweep's best, on every device preset", Run: OrderingsTime})
}

// orderingsCompared are the orderings the time comparison simulates;
// legend-c is Legend's order for c = 3 and its generalisation above.
var orderingsCompared = []string{"beta", "hilbert-symmetric", "legend-c", "tierflow"}

// orderingsCase is one configuration of the comparison: a system preset on
// a device preset, a dataset, d, p and c.
type orderingsCase struct {
	Label   string
	System  string
	Device  string
	Dataset string
	Dim     int
	P, C    int
}

// orderingsCases are the data-bound configurations of the Marius
// experiments (Figures 10-11, 13 and Table 8 at p=32, c=8 and Table 8's
// large-d rows at their largest fitting c), Legend's own (Table 5, c = 3),
// and `simulate sweep`'s fastest configuration (Freebase86m d=100, p=8,
// c=4) on every device preset.
func orderingsCases() ([]orderingsCase, error) {
	cs := []orderingsCase{
		{"Marius Fig. 10 FM d=50", "marius", MariusProfile, "freebase86m", 50, 32, 8},
		{"Marius Fig. 10 FM d=100", "marius", MariusProfile, "freebase86m", 100, 32, 8},
		{"Marius Fig. 11 TW d=200", "marius", MariusProfile, "twitter", 200, 32, 8},
	}
	t8, err := MariusTable8Cases()
	if err != nil {
		return nil, err
	}
	for _, mc := range t8 {
		if mc.System == "marius" && mc.Dim > 100 {
			cs = append(cs, orderingsCase{fmt.Sprintf("Marius Table 8 FM d=%d", mc.Dim), "marius", MariusProfile, mc.Dataset, mc.Dim, mc.P, mc.C})
		}
	}
	for _, ds := range []string{"twitter", "freebase86m"} {
		cs = append(cs, orderingsCase{"Legend Table 5 " + legendDatasetLabel[ds], "legend", LegendProfile, ds, LegendDim, LegendPartitions[ds], 3})
	}
	for _, dev := range devices.PresetNames() {
		if prof, err := devices.Preset(dev); err != nil || prof.GPU.Count == 0 {
			continue // marius computes on a GPU
		}
		cs = append(cs, orderingsCase{"sweep best FM d=100 on " + dev, "marius", dev, "freebase86m", 100, 8, 4})
	}
	return cs, nil
}

func (oc orderingsCase) simulate(ordering string) (report.Report, error) {
	prof, err := devices.Preset(oc.Device)
	if err != nil {
		return report.Report{}, err
	}
	ds, err := workload.LookupDataset(oc.Dataset)
	if err != nil {
		return report.Report{}, err
	}
	sys, err := sim.LookupSystem(oc.System)
	if err != nil {
		return report.Report{}, err
	}
	if sys.Capacity > 0 && sys.Capacity != oc.C {
		sys.Capacity = oc.C
	}
	return sim.Simulate(sim.Scenario{System: sys, Profile: prof, Dataset: ds, Training: sim.DefaultTraining(ds, oc.Dim),
		P: oc.P, C: oc.C, Ordering: ordering})
}

// OrderingsTime simulates every case with every compared ordering and
// reports epoch time, stall and tierflow's difference to BETA.
func OrderingsTime() (experiments.Result, error) {
	r := experiments.Result{
		Name:   "orderings",
		Title:  "Does the ordering matter in time? Simulated epoch per ordering on data-bound configurations (s = seconds)",
		Header: []string{"configuration", "system", "device", "p", "c"},
	}
	for _, o := range orderingsCompared {
		r.Header = append(r.Header, o+" swaps", o+" prefetchable", o+" epoch s", o+" stall s")
	}
	r.Header = append(r.Header, "compute s", "tierflow ÷ BETA − 1 %", "fastest")
	cs, err := orderingsCases()
	if err != nil {
		return experiments.Result{}, fmt.Errorf("orderings: %w", err)
	}
	var notes []string
	var cats []string
	series := make([]experiments.Series, len(orderingsCompared))
	for i, o := range orderingsCompared {
		series[i].Name = o
	}
	for _, oc := range cs {
		row := []string{oc.Label, oc.System, oc.Device, strconv.Itoa(oc.P), strconv.Itoa(oc.C)}
		reps := map[string]report.Report{}
		fastest := ""
		for _, o := range orderingsCompared {
			rep, err := oc.simulate(o)
			if err != nil {
				return experiments.Result{}, fmt.Errorf("orderings: %s %s: %w", oc.Label, o, err)
			}
			reps[o] = rep
			if fastest == "" || rep.EpochSeconds < reps[fastest].EpochSeconds {
				fastest = o
			}
			row = append(row, strconv.Itoa(rep.Swaps), strconv.Itoa(rep.PrefetchableSwaps), mariusF(rep.EpochSeconds, 1), mariusF(rep.StallSeconds, 1))
			for _, w := range rep.Warnings {
				notes = append(notes, fmt.Sprintf("%s %s: %s", oc.Label, o, w))
			}
		}
		row = append(row, mariusF(reps["beta"].ComputeSeconds, 1), mariusPct(reps["tierflow"].EpochSeconds, reps["beta"].EpochSeconds), fastest)
		r.Rows = append(r.Rows, row)
		cats = append(cats, oc.Label)
		for i, o := range orderingsCompared {
			series[i].X = append(series[i].X, float64(len(cats)-1))
			series[i].Y = append(series[i].Y, reps[o].EpochSeconds/reps["beta"].EpochSeconds)
		}
	}
	r.Charts = []experiments.Chart{{File: "orderings", Title: "Epoch time relative to BETA", XLabel: "configuration", YLabel: "epoch ÷ BETA's",
		Bars: true, Categories: cats, Series: series}}
	r.Notes = append([]string{
		"Data-bound configurations: those the Marius experiments call data-bound (FM d=50 and d=100, TW d=200 at p=32, c=8; Table 8's d=400 and d=800 at their largest fitting c), Legend's own configurations (c = 3), and the fastest configuration `simulate sweep` finds for FM d=100 on p3.2xlarge (p=8, c=4), repeated on every device preset.",
		"legend-c is Legend's order at c = 3 and its generalisation (c − 2 pivots, two movers) above; tierflow never has more swaps than BETA.",
		"The marius system has one staging buffer (PrefetchDepth 1): a load may be read before its slot frees, so BETA's swaps, which have no window in the Plan, still overlap the previous state's buckets; the legend system has none (a load starts at its issue point), which is where the prefetch windows of the Plan decide.",
	}, notes...)
	return r, nil
}

package validate

import (
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

// PresetEpoch is one simulated epoch named by presets: a system
// (sim.LookupSystem: "marius", "dglke", …) training a dataset
// (workload.LookupDataset) at embedding dimension Dim with the simulator's
// default training shape for it (sim.DefaultTraining), P partitions, a
// buffer of C and the named ordering, on a device profile.
type PresetEpoch struct {
	System, Dataset string
	Dim, P, C       int
	Ordering        string
	Profile         devices.Profile
}

// SimulatePreset simulates one epoch of a PresetEpoch, as the simulated
// experiments do (experiments/simulated): it is how an experiment that
// trains for real sets its runs beside a simulated machine without
// importing the simulator itself.
func SimulatePreset(e PresetEpoch) (report.Report, error) {
	ds, err := workload.LookupDataset(e.Dataset)
	if err != nil {
		return report.Report{}, err
	}
	sys, err := sim.LookupSystem(e.System)
	if err != nil {
		return report.Report{}, err
	}
	sc := sim.Scenario{System: sys, Profile: e.Profile, Dataset: ds, Training: sim.DefaultTraining(ds, e.Dim),
		P: e.P, C: e.C, Ordering: e.Ordering}
	cfg, err := sc.Config()
	if err != nil {
		return report.Report{}, err
	}
	return sim.Run(cfg)
}

package experiments

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
)

func TestPredictionVariantsConfig(t *testing.T) {
	noWhy := func(vc ValidateConfig) ValidateConfig { vc.Why = ""; return vc }
	var configs []ValidateConfig
	for _, vc := range ValidateConfigs {
		configs = append(configs, noWhy(vc))
	}
	assert.Contains(t, configs, noWhy(PredictionVariantsConfig), "a configuration of the validation")
	for _, name := range PredictionVariantsOrderings {
		_, err := orderings.Build(name, PredictionVariantsConfig.P, PredictionVariantsConfig.C, orderings.Belady, 0)
		assert.NoError(t, err, name)
	}
}

// TestPredictionVariantEdits checks that each variant changes only what
// its name says.
func TestPredictionVariantEdits(t *testing.T) {
	run := devices.Profile{Name: "run", Disk: devices.Disk{Read: 1e9, Write: 9e8, Combined: 1.2e9, ReadShare: 0.7}}
	run.CPU.Checksum = 5e9
	run.CPU.Interference.IO, run.CPU.Interference.Compute = 0.2, 0.5
	cal := run
	cal.Disk = devices.Disk{Read: 1.3e9, Write: 1.1e9, FullDuplex: true}
	want := map[string]func(p *devices.Profile){
		"as predicted":            func(*devices.Profile) {},
		"no I/O interference":     func(p *devices.Profile) { p.CPU.Interference.IO = 0 },
		"no compute interference": func(p *devices.Profile) { p.CPU.Interference.Compute = 0 },
		"no checksums":            func(p *devices.Profile) { p.CPU.Checksum = 0 },
		"configuration's disk":    func(p *devices.Profile) { p.Disk = cal.Disk },
	}
	require.Len(t, predictionVariants, len(want))
	assert.Equal(t, "as predicted", predictionVariants[0].name, "the run's own prediction first")
	for _, v := range predictionVariants {
		w, ok := want[v.name]
		require.True(t, ok, v.name)
		got, exp := run, run
		v.edit(&got, cal)
		w(&exp)
		assert.Equal(t, exp, got, v.name)
	}
}

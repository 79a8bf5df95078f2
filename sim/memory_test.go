package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/workload"
)

func TestSystemBuffer(t *testing.T) {
	prof, err := devices.Preset("p3.2xlarge")
	require.NoError(t, err)
	const part = 10_000_000_000 // 10 GB
	tests := []struct {
		system  string
		c       int
		staging int
		where   string
		fits    bool
	}{
		{"marius", 4, 2, "CPU", true},  // lookahead block + async-write block: 60 GB ≤ 65.5 GB
		{"marius", 5, 2, "CPU", false}, // 70 GB
		{"pbg", 2, 0, "CPU", true},     // synchronous swaps, no staging
		{"legend", 3, 0, "GPU", false}, // loads into a freed slot, writes synchronous; 30 GB > 16 GB
		{"ge2", 4, 1, "GPU", false},    // async write-back over PCIe
		{"realrun", 4, 1, "CPU", true}, // loads at issue points, one spare write buffer
	}
	for _, tt := range tests {
		t.Run(tt.system, func(t *testing.T) {
			sys, err := LookupSystem(tt.system)
			require.NoError(t, err)
			b := sys.Buffer(prof, tt.c, part)
			assert.Equal(t, tt.c, b.Slots)
			assert.Equal(t, tt.staging, b.Staging)
			assert.Equal(t, int64(tt.c+tt.staging)*part, b.Bytes)
			assert.Equal(t, tt.where, b.Where)
			assert.Equal(t, tt.fits, b.Fits())
		})
	}
}

// TestBufferWarning: a buffer that does not fit, staging included, is
// reported in the Report's warnings.
func TestBufferWarning(t *testing.T) {
	prof, err := devices.Preset("p3.2xlarge")
	require.NoError(t, err)
	sys, err := LookupSystem("marius")
	require.NoError(t, err)
	ds, err := workload.LookupDataset("freebase86m")
	require.NoError(t, err)
	for _, tt := range []struct {
		c    int
		warn bool
	}{{4, false}, {6, true}} { // 8.61 GB partitions at d=400, p=32: (6+2) × 8.61 = 68.9 GB > 61 GiB
		rep, err := Simulate(Scenario{System: sys, Profile: prof, Dataset: ds, Training: DefaultTraining(ds, 400), P: 32, C: tt.c, Ordering: "beta"})
		require.NoError(t, err)
		if tt.warn {
			require.Len(t, rep.Warnings, 1)
			assert.Contains(t, rep.Warnings[0], "6 partitions and 2 staging buffers (68.9 GB) exceeds the CPU memory")
		} else {
			assert.Empty(t, rep.Warnings)
		}
	}
}

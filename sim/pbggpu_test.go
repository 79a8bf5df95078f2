package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/workload"
)

func pbgGPU(t *testing.T, g int, edgeSeconds float64) PBGGPUConfig {
	t.Helper()
	prof, err := devices.Preset("ge2-paper")
	require.NoError(t, err)
	ds, err := workload.LookupDataset("twitter")
	require.NoError(t, err)
	return PBGGPUConfig{Profile: prof, Dataset: ds, Training: PBGTraining(ds, 100), P: 16, GPUs: g, EdgeSeconds: edgeSeconds, ShuffleBW: 20e9}
}

// The CPU's permutations do not shrink with G, the GPUs' training does.
func TestPBGGPUScaling(t *testing.T) {
	var prev MultiGPUReport
	for _, g := range []int{1, 2, 4} {
		rep, err := SimulatePBGGPU(pbgGPU(t, g, 5e-7))
		require.NoError(t, err)
		require.Len(t, rep.PerGPU, g)
		if g > 1 {
			assert.InDelta(t, prev.CPUBusySeconds, rep.CPUBusySeconds, 1e-9, "the CPU's share is the same")
			assert.Less(t, rep.EpochSeconds, prev.EpochSeconds)
			assert.Greater(t, rep.EpochSeconds, prev.EpochSeconds/2, "never better than linear")
		}
		var edges int64
		for _, u := range rep.PerGPU {
			edges += u.Edges
			assert.InDelta(t, rep.EpochSeconds, u.BusySeconds+u.StallSeconds, 1e-6*rep.EpochSeconds)
		}
		assert.InDelta(t, float64(pbgGPU(t, g, 0).Dataset.TrainEdges()), float64(edges), float64(16*16*g*g))
		prev = rep
	}
	// By hand, one GPU, no training: per off-diagonal bucket, permute two
	// 1.0504 GB partitions and back (4 × 2.1 GB read and written at 20
	// GB/s) plus the edges, and copy both partitions in and out at 12 GB/s.
	rep, err := SimulatePBGGPU(pbgGPU(t, 1, 0))
	require.NoError(t, err)
	part := float64(workload.PartitionBytes(41_600_000, 16, 100, true))
	edges := float64(1_460_000_000) * 0.9 / 256
	off := (2*2*2*part+2*edges*16)/20e9 + 2*part/12e9 + 2*part/12e9
	diag := (2*2*part+2*edges*16)/20e9 + part/12e9 + part/12e9
	assert.InDelta(t, 240*off+16*diag, rep.EpochSeconds, 1e-6*rep.EpochSeconds)
}

func TestPBGGPUBadInput(t *testing.T) {
	for _, mod := range []func(*PBGGPUConfig){
		func(c *PBGGPUConfig) { c.GPUs = 0 },
		func(c *PBGGPUConfig) { c.GPUs = 5 },
		func(c *PBGGPUConfig) { c.ShuffleBW = 0 },
		func(c *PBGGPUConfig) { c.EdgeSeconds = -1 },
	} {
		c := pbgGPU(t, 1, 1e-7)
		mod(&c)
		_, err := SimulatePBGGPU(c)
		assert.ErrorIs(t, err, ErrConfig)
	}
}

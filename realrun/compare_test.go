package realrun

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/model"
)

// TestDiskMeasuredBeforeEachRun: with CompareOptions.DiskScratch the disk
// and checksum rate are measured just before the run and the prediction
// uses them (not the profile's placeholder figures); without it the
// profile is used as given.
func TestDiskMeasuredBeforeEachRun(t *testing.T) {
	st := prepare(t, "twitter", 0.0001, 4, 16, model.Dot)
	h := hyper(model.Dot, 16)
	plan, err := orderings.Build("beta", 4, 3, orderings.Belady, 0)
	require.NoError(t, err)
	prof := devices.Profile{Name: "placeholder",
		Disk: devices.Disk{Read: 1, Write: 1, FullDuplex: true},
		CPU: devices.CPU{Workers: 2, Memory: 1 << 30, BatchEdges: 1e6, GatherBW: 1e9, Checksum: 1,
			Train: devices.CPUTrain{Dot: devices.TrainCost{Edges: 1e6, RowBW: 1e15, FLOPS: 1e15}}}}

	cmp, _, err := RunAndCompare(st, plan, h, prof, CompareOptions{Repeats: 1, Prefetch: true, Seed: 1, DiskScratch: t.TempDir()})
	require.NoError(t, err)
	assert.Greater(t, float64(cmp.Disk.Read), 1e6, "the disk was measured")
	assert.Greater(t, float64(cmp.Checksum), 1e6, "the checksum rate was measured")
	p := prof
	p.Disk, p.CPU.Checksum = cmp.Disk, cmp.Checksum
	pred, err := Predict(st, plan, h, true, p)
	require.NoError(t, err)
	assert.Equal(t, pred.EpochSeconds, cmp.Predicted.EpochSeconds, "the prediction used the measured disk")

	cmp, _, err = RunAndCompare(st, plan, h, prof, CompareOptions{Repeats: 1, Prefetch: true, Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, prof.Disk, cmp.Disk)
	assert.Greater(t, cmp.Predicted.EpochSeconds, 1e3, "1 B/s disk: the placeholder profile predicts ages")
}

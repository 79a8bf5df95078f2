package realrun

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/workload"
)

// TestDiskMeasuredAroundEachRun: with CompareOptions.DiskScratch the disk
// and checksum rate are measured just before and just after the run and
// the prediction uses the mean of the two (not the profile's placeholder
// figures); without it the profile is used as given.
func TestDiskMeasuredAroundEachRun(t *testing.T) {
	st := prepare(t, "twitter", 0.0001, 4, 16, workload.Dot)
	h := hyper(workload.Dot, 16)
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
	require.NotNil(t, cmp.DiskBefore)
	require.NotNil(t, cmp.DiskAfter)
	lo, hi := min(cmp.DiskBefore.Read, cmp.DiskAfter.Read), max(cmp.DiskBefore.Read, cmp.DiskAfter.Read)
	assert.True(t, lo <= cmp.Disk.Read && cmp.Disk.Read <= hi, "the mean of before %v and after %v, got %v", cmp.DiskBefore.Read, cmp.DiskAfter.Read, cmp.Disk.Read)
	assert.InDelta(t, diskDrift(*cmp.DiskBefore, *cmp.DiskAfter), cmp.DiskDrift, 1e-12)
	p := prof
	p.Disk, p.CPU.Checksum = cmp.Disk, cmp.Checksum
	pred, err := Predict(st, plan, h, true, p)
	require.NoError(t, err)
	assert.Equal(t, pred.EpochSeconds, cmp.Predicted.EpochSeconds, "the prediction used the measured disk")

	cmp, _, err = RunAndCompare(st, plan, h, prof, CompareOptions{Repeats: 1, Prefetch: true, Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, prof.Disk, cmp.Disk)
	assert.Nil(t, cmp.DiskBefore)
	assert.Zero(t, cmp.DiskDrift)
	assert.Greater(t, cmp.Predicted.EpochSeconds, 1e3, "1 B/s disk: the placeholder profile predicts ages")
}

func TestMeanDiskAndDrift(t *testing.T) {
	a := Calibration{ReadBW: 100, WriteBW: 50, BothReadBW: 60, BothWriteBW: 20, ChecksumBW: 4, LatencySeconds: 1e-4}
	b := Calibration{ReadBW: 300, WriteBW: 50, BothReadBW: 60, BothWriteBW: 20, ChecksumBW: 4, LatencySeconds: 3e-4}
	m := meanDisk(a, b)
	assert.InDelta(t, 150, m.ReadBW, 1e-9, "the mean time per byte: 2/(1/100 + 1/300)")
	assert.InDelta(t, 50, m.WriteBW, 1e-9)
	assert.InDelta(t, 2e-4, m.LatencySeconds, 1e-12)
	assert.InDelta(t, 2, diskDrift(a.Disk(), b.Disk()), 1e-9, "reads tripled")
	assert.InDelta(t, 2.0/3, diskDrift(b.Disk(), a.Disk()), 1e-9)
}

package calibrate

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
)

func historyProfile(read, write, engine float64) devices.Profile {
	return devices.Profile{Name: "h",
		Disk: devices.Disk{Read: devices.Bandwidth(read), Write: devices.Bandwidth(write)},
		CPU: devices.CPU{Workers: 2, Memory: 1 << 30, BatchEdges: 1e6, GatherBW: 1e9, Checksum: 5e9,
			Train:      devices.CPUTrain{Dot: devices.TrainCost{Edges: devices.EdgeRate(engine)}},
			TrainShape: &devices.TrainShape{Model: "dot", Dim: 128, Batch: 1000, Negatives: 4, Workers: 2, Rows: 100}}}
}

func TestHistoryDrift(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	var h History
	// Series of 14 MB transfers: reads 800, 1000, 1300 (median 1000);
	// 28 MB: 1100 and 1000 (median 1050). One engine measurement per
	// shape but two at d=128.
	h.Add(t0, 14e6, historyProfile(800, 2000, 1e6))
	h.Add(t0.Add(time.Minute), 14e6, historyProfile(1000, 2000, 1.2e6))
	h.Add(t0.Add(2*time.Minute), 14e6, historyProfile(1300, 1500, 0.9e6))
	h.Add(t0.Add(3*time.Minute), 28e6, historyProfile(1100, 2000, 0.5e6))
	h.Add(t0.Add(4*time.Minute), 28e6, historyProfile(1000, 2000, 0.5e6))

	drift, n := h.Drift()
	for _, tc := range []struct {
		key    string
		lo, hi float64
	}{
		{"disk.read", 0.8, 1.3},                       // the 14 MB series; 28 MB's 1000/1050 and 1100/1050 lie inside
		{"disk.write", 1500.0 / 2000, 1.0},            // 14 MB: 1500, 2000, 2000
		{"cpu.checksum", 1, 1},                        // never moved
		{"cpu.train.dot.edges", 0.5 / 0.9, 1.2 / 0.9}, // one shape: 1.0, 1.2, 0.9, 0.5, 0.5 (median 0.9)
	} {
		t.Run(tc.key, func(t *testing.T) {
			r, ok := drift[tc.key]
			require.True(t, ok)
			assert.InDelta(t, tc.lo, r.Low, 1e-9)
			assert.InDelta(t, tc.hi, r.High, 1e-9)
		})
	}
	assert.Equal(t, 10, n, "five calibrations, a disk and an engine measurement each")
	_, has := drift["disk.combined"]
	assert.False(t, has, "not measured")

	// Widen: the profile's own range is kept where wider.
	p := historyProfile(1000, 2000, 1e6)
	require.NoError(t, p.SetSpread("disk.read", 700, 1050))
	keys, err := h.Widen(&p)
	require.NoError(t, err)
	assert.Contains(t, keys, "disk.read")
	r, _ := p.Spread.Of("disk.read")
	assert.InDelta(t, 700, r.Low, 1e-9, "its own slower end")
	assert.InDelta(t, 1300, r.High, 1e-9, "the drift's faster end")
	r, _ = p.Spread.Of("cpu.train.dot.edges")
	assert.InDelta(t, 1e6*0.5/0.9, r.Low, 1e-3)
	assert.GreaterOrEqual(t, p.Spread.Samples, 2)

	assert.Len(t, h.Since(t0.Add(3*time.Minute)).Entries, 4, "two disk and two engine entries from 3 min on")
	one, _ := h.Since(t0.Add(4 * time.Minute)).Drift()
	assert.Empty(t, one, "one measurement of each: no drift")

	// Under a kernel limit the disk's rates are the limit's: not recorded.
	held := historyProfile(1000, 2000, 1e6)
	held.Disk.Throttle = devices.Throttle{Read: 100e6}
	var hh History
	hh.Add(t0, 14e6, held)
	require.Len(t, hh.Entries, 1)
	assert.Contains(t, hh.Entries[0].Series, "engine")

	path := filepath.Join(t.TempDir(), "history.json")
	empty, err := ReadHistory(path)
	require.NoError(t, err)
	assert.Empty(t, empty.Entries, "no file yet: an empty history")
	require.NoError(t, h.Write(path))
	back, err := ReadHistory(path)
	require.NoError(t, err)
	assert.Equal(t, h, back)
}

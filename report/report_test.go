package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrors(t *testing.T) {
	measured := Report{EpochSeconds: 10, ComputeSeconds: 8, StallSeconds: 1, ReadBytes: 100, WriteBytes: 0}
	predicted := Report{EpochSeconds: 11, ComputeSeconds: 8, StallSeconds: 2, ReadBytes: 100, WriteBytes: 5}
	e := predicted.Errors(measured)
	assert.InDelta(t, 0.1, e.EpochSeconds, 1e-12)
	assert.Zero(t, e.ComputeSeconds)
	assert.InDelta(t, 0.1, e.StallSeconds, 1e-12, "the stall error is relative to the measured epoch")
	assert.Zero(t, e.ReadBytes)
	assert.Equal(t, 1.0, e.WriteBytes, "predicted something where nothing was measured: entirely wrong")
	assert.Zero(t, measured.Errors(measured).Swaps, "zero against zero is no error")
}

func TestTimeline(t *testing.T) {
	compute := []Interval{{0, 1}, {3, 4}}
	read := []Interval{{0.5, 2.5}}
	tl := Timeline(compute, nil, read, nil, 4, 4)
	require.Len(t, tl, 4)
	want := []TimelinePoint{
		{Start: 0, End: 1, Compute: 1, Read: 0.5},
		{Start: 1, End: 2, Read: 1},
		{Start: 2, End: 3, Read: 0.5},
		{Start: 3, End: 4, Compute: 1},
	}
	for i := range want {
		assert.InDelta(t, want[i].Compute, tl[i].Compute, 1e-12, "slice %d", i)
		assert.InDelta(t, want[i].Read, tl[i].Read, 1e-12, "slice %d", i)
		assert.Zero(t, tl[i].Write)
		assert.Equal(t, want[i].Start, tl[i].Start)
	}
	assert.Equal(t, []float64{1, 0}, utilization([]Interval{{0, 1}, {0, 1}}, 2, 2), "overlapping spans cap at 1")
}

func TestBusyAndOverlap(t *testing.T) {
	for _, tc := range []struct {
		name       string
		a, b       []Interval
		busy, over float64
	}{
		{"empty", nil, nil, 0, 0},
		{"disjoint", []Interval{{0, 1}}, []Interval{{2, 3}}, 1, 0},
		{"a inside b", []Interval{{1, 2}}, []Interval{{0, 5}}, 1, 1},
		{"a's spans overlap each other, counted once", []Interval{{0, 2}, {1, 3}, {5, 6}}, []Interval{{2.5, 5.5}}, 4, 1},
		{"unsorted, empty spans ignored", []Interval{{4, 5}, {0, 1}, {2, 2}}, []Interval{{0.5, 4.5}, {0, 0.25}}, 2, 1.25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.busy, Busy(tc.a), 1e-12)
			assert.InDelta(t, tc.over, Overlap(tc.a, tc.b), 1e-12)
			assert.InDelta(t, tc.over, Overlap(tc.b, tc.a), 1e-12, "symmetric")
		})
	}
}

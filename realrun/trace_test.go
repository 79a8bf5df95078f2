package realrun

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/report"
)

func TestTraceChecksumSpans(t *testing.T) {
	plan, err := orderings.Build("beta", 4, 2, orderings.Belady, 0)
	require.NoError(t, err)
	ep := Epoch{IO: []IOEvent{
		// A load checked from 0.3 to 0.5, one recorded without its
		// check's span, and a write checksummed from 0.6 to 0.7.
		{Kind: "load", Partition: 0, Slot: 0, Start: 0, End: 0.5, Bytes: 100, CheckStart: 0.3, CheckEnd: 0.5},
		{Kind: "load", Partition: 1, Slot: 1, Start: 0.5, End: 0.9, Bytes: 100},
		{Kind: "write", Partition: 0, Slot: 0, Start: 0.7, End: 1.2, Bytes: 100, CheckStart: 0.6, CheckEnd: 0.7},
	}}
	tracks := map[string][][2]float64{}
	for _, s := range ep.Trace(plan).Spans {
		tracks[s.Track] = append(tracks[s.Track], [2]float64{s.Start, s.End})
	}
	assert.Equal(t, [][2]float64{{0, 0.3}, {0.5, 0.9}}, tracks[report.DiskRead], "the transfer alone where the check was recorded")
	assert.Equal(t, [][2]float64{{0.3, 0.5}}, tracks[report.CheckLoad])
	assert.Equal(t, [][2]float64{{0.6, 0.7}}, tracks[report.CheckWrite])
	assert.Equal(t, [][2]float64{{0.7, 1.2}}, tracks[report.DiskWrite])
}

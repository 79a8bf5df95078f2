package chrometrace_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/chrometrace"
	"github.com/tierflow/tierflow/report"
)

// TestSummarize reads hand-made runs back from a written file: busy time
// and rates per track with lanes merged, the disk's busy time as the union
// of reads and writes, and the waits of a prediction and a measurement
// compared bucket by bucket.
func TestSummarize(t *testing.T) {
	mb := func(n float64) map[string]any { return map[string]any{"bytes": n * 1e6} }
	part := func(p int, n float64) map[string]any { return map[string]any{"bytes": n * 1e6, "partition": p} }
	predicted := report.Trace{Spans: []report.Span{
		{Track: report.DiskRead, Name: "partition 1 into slot 0", Start: 0, End: 0.1, Args: mb(100)},   // 1000 MB/s
		{Track: report.DiskRead, Name: "partition 2 into slot 1", Start: 0.1, End: 0.3, Args: mb(100)}, // 500 MB/s
		{Track: report.DiskWrite, Name: "partition 0 out of slot 0", Start: 0.2, End: 0.6, Args: mb(100)},
		{Track: report.DiskWrite, Name: "partition 3 out of slot 1", Start: 0.5, End: 0.7, Args: mb(100)}, // overlaps: a second lane
		{Track: report.CPU, Name: report.BucketName(1, 1), Start: 0.8, End: 1.0},
		{Track: report.Waiting, Name: report.WaitName(1, 1), Start: 0.1, End: 0.8},
		{Track: report.Waiting, Name: report.WaitName(2, 2), Start: 1.0, End: 1.0005}, // below the threshold
		{Track: report.Waiting, Name: report.WaitName(1, 2), Start: 1.1, End: 1.2},
	}}
	measured := report.Trace{Spans: []report.Span{
		{Track: report.DiskRead, Name: "partition 1 into slot 0", Start: 0, End: 0.2, Args: part(1, 100)}, // the fill: 500 MB/s
		{Track: report.DiskWrite, Name: "partition 1 out of slot 0", Start: 0.5, End: 0.6, Args: part(1, 100)},
		{Track: report.DiskRead, Name: "partition 2 into slot 1", Start: 1, End: 1.1, Args: part(2, 100)},    // not written before: 1000 MB/s
		{Track: report.DiskRead, Name: "partition 1 into slot 1", Start: 1.1, End: 1.15, Args: part(1, 100)}, // written 0.5 s before: 2000 MB/s
		{Track: report.DiskRead, Name: "partition 1 into slot 0", Start: 4, End: 4.4, Args: part(1, 100)},    // 3.4 s: 250 MB/s
		{Track: report.CPU, Name: report.BucketName(1, 1), Start: 0.2, End: 0.4},
		{Track: report.Waiting, Name: report.WaitName(1, 1), Start: 0, End: 0.2},
		{Track: report.Waiting, Name: report.WaitName(2, 2), Start: 0.9, End: 1.1},
	}}
	var buf bytes.Buffer
	require.NoError(t, chrometrace.Write(&buf, []chrometrace.Process{
		{Name: "predicted: beta (realrun model, here)", Trace: predicted},
		{Name: "measured: beta (realrun)", Trace: measured},
	}, 0))
	var f chrometrace.File
	require.NoError(t, json.Unmarshal(buf.Bytes(), &f))
	sums := chrometrace.Summarize(f)
	require.Len(t, sums, 2)

	p := sums[0]
	assert.Equal(t, "predicted: beta (realrun model, here)", p.Process)
	assert.InDelta(t, 1.2, p.Seconds, 1e-6)
	assert.InDelta(t, 0.7, p.DiskBusySeconds, 1e-6, "reads 0–0.3 and writes 0.2–0.7 make one interval")
	assert.InDelta(t, 400e6, p.DiskBytes, 1)
	tracks := map[string]chrometrace.TrackSummary{}
	for _, tr := range p.Tracks {
		tracks[tr.Track] = tr
	}
	read := tracks[report.DiskRead]
	assert.Equal(t, 2, read.Spans)
	assert.InDelta(t, 0.3, read.BusySeconds, 1e-6)
	assert.InDelta(t, 500e6, read.RateP10, 1e3)
	assert.InDelta(t, 1000e6, read.RateP50, 1e3)
	write := tracks[report.DiskWrite]
	assert.Equal(t, 2, write.Spans, "both lanes of the write track")
	assert.InDelta(t, 0.6, write.BusySeconds, 1e-6)
	assert.NotContains(t, tracks, "disk write #2")

	m := sums[1]
	assert.InDelta(t, 0.2+0.1+0.15+0.4, m.DiskBusySeconds, 1e-6)
	assert.InDelta(t, 0.2, m.Waits[report.WaitName(2, 2)], 1e-6)
	ages := map[string]chrometrace.LoadClass{}
	for _, c := range m.Loads {
		ages[c.Class] = c
	}
	for class, rate := range map[string]float64{"fill (done before any write)": 500e6, "not written before": 1000e6, "0.25–1 s": 2000e6, "≥ 3 s": 250e6} {
		assert.Equal(t, 1, ages[class].Loads, class)
		assert.InDelta(t, rate, ages[class].RateP50, 1e3, class)
	}
	assert.Len(t, m.Loads, 4, "no empty classes")
	assert.Empty(t, p.Loads, "loads without a partition are not classed")

	pairs := chrometrace.Pairs(sums, 1e-3)
	require.Len(t, pairs, 1)
	assert.Equal(t, "beta", pairs[0].Ordering)
	assert.Equal(t, 1, pairs[0].Both, "(1,1) in both")
	assert.Equal(t, 1, pairs[0].OnlyPredicted, "(1,2)")
	assert.Equal(t, 1, pairs[0].OnlyMeasured, "(2,2): predicted below the threshold")
}

package chrometrace_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/chrometrace"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/telemetry"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

var update = flag.Bool("update", false, "rewrite the golden traces under testdata/")

// golden compares a trace with testdata/name, rewriting it with -update,
// and checks its structure.
func golden(t *testing.T, name string, procs []chrometrace.Process) chrometrace.File {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, chrometrace.Write(&buf, procs, 0))
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "go test ./internal/chrometrace -update writes it")
	assert.JSONEq(t, string(want), buf.String(), "go test ./internal/chrometrace -update regenerates")
	require.NoError(t, chrometrace.Check(buf.Bytes()))
	var f chrometrace.File
	require.NoError(t, json.Unmarshal(buf.Bytes(), &f))
	return f
}

// lastEnd is the end of the last complete event, in µs.
func lastEnd(f chrometrace.File) float64 {
	var end float64
	for _, e := range f.TraceEvents {
		if e.Ph == "X" {
			end = max(end, e.Ts+*e.Dur)
		}
	}
	return end
}

// TestSimulatedTrace: a simulated epoch's trace (the realrun model on a
// small profile, p = 6, c = 3) has a track per resource that works in
// parallel — disk read and write, the checksums, the CPU, the trainer's
// waits — loads named by partition and slot with their bytes, a flow
// from every load after the fill to the bucket that waited for it, and
// ends at the epoch's time in microseconds.
func TestSimulatedTrace(t *testing.T) {
	sys, err := sim.LookupSystem("realrun")
	require.NoError(t, err)
	prof := devices.Profile{Name: "tiny",
		Disk: devices.Disk{Read: 100e6, Write: 80e6, Combined: 120e6, ReadShare: 0.7, Latency: devices.Duration(1e5)},
		CPU: devices.CPU{Workers: 2, Memory: 1 << 30, BatchEdges: 1e6, GatherBW: 1e9, Checksum: 2e9,
			Train: devices.CPUTrain{Dot: devices.TrainCost{Edges: 2e5, RowBW: 1e15, FLOPS: 1e15}}}}
	plan, err := orderings.Build("beta", 6, 3, orderings.Belady, 0)
	require.NoError(t, err)
	rep, err := sim.Run(sim.Config{System: sys, Profile: prof, Plan: plan, PartitionBytes: 8 << 20, Trace: true,
		Dataset:  workload.Dataset{Name: "toy", Nodes: 6000, Edges: 360_000, Relations: 1, TrainFraction: 1, Model: workload.Dot},
		Training: workload.Training{Model: workload.Dot, Dim: 64, Batch: 2000, Negatives: 50}})
	require.NoError(t, err)
	require.NotNil(t, rep.Trace)
	f := golden(t, "simulated.json", []chrometrace.Process{{Name: "predicted: beta", Trace: *rep.Trace}})
	assert.InDelta(t, rep.EpochSeconds*1e6, lastEnd(f), 1, "microseconds, ending with the epoch")
	threads := map[string]bool{}
	flows, loads := 0, 0
	for _, e := range f.TraceEvents {
		switch {
		case e.Ph == "M" && e.Name == "thread_name":
			threads[e.Args["name"].(string)] = true
		case e.Ph == "s":
			flows++
		case e.Ph == "X" && e.Cat == report.DiskRead:
			loads++
			assert.Contains(t, e.Name, "into slot")
			assert.Contains(t, e.Args, "bytes")
		}
	}
	for _, tr := range []string{report.DiskRead, report.DiskWrite, report.CheckLoad, report.CheckWrite, report.CPU} {
		assert.True(t, threads[tr], "a track for %s", tr)
	}
	assert.Equal(t, plan.Counts.Loads, loads)
	assert.Equal(t, plan.Counts.Loads, flows, "an arrow from every load to the bucket that first needed it")
}

// measuredEpoch is a measured BETA epoch at p = 4, c = 2 built by hand:
// the loader reads each load in turn, the writer writes evictions, every
// bucket waits 10 ms.
func measuredEpoch(t *testing.T) (*orderings.Plan, realrun.Epoch) {
	t.Helper()
	plan, err := orderings.Build("beta", 4, 2, orderings.Belady, 0)
	require.NoError(t, err)
	var ep realrun.Epoch
	at := 0.0
	for j, l := range plan.Loads {
		ep.IO = append(ep.IO, realrun.IOEvent{Kind: "load", Partition: l.Partition, Slot: l.Slot, Start: at, End: at + 0.01, Bytes: 1 << 20})
		if l.Evicts != orderings.None {
			ep.IO = append(ep.IO, realrun.IOEvent{Kind: "write", Partition: l.Evicts, Slot: l.Slot, Start: at, End: at + 0.012, Bytes: 1 << 20})
		}
		at += 0.02 * float64(j+1)
	}
	for k, b := range plan.Buckets {
		start := 0.05 * float64(k)
		ep.Buckets = append(ep.Buckets, realrun.BucketRun{Src: b.Src, Dst: b.Dst, Edges: 100, StallSeconds: 0.01, Start: start, End: start + 0.04})
	}
	ep.IO = append(ep.IO, realrun.IOEvent{Kind: "write", Partition: plan.FinalResident[0], Slot: 0, Start: 1, End: 1.01, Bytes: 1 << 20, Final: true})
	return plan, ep
}

// TestMeasuredTraceGPU: from a GPU engine the buckets are on the gpu
// track and the sampled utilisation is a counter, sample by sample.
func TestMeasuredTraceGPU(t *testing.T) {
	plan, ep := measuredEpoch(t)
	samples := []telemetry.Sample{{Seconds: 0.1, Utilization: 0.25}, {Seconds: 0.2, Utilization: 0.9}, {Seconds: 0.3, Utilization: 0}}
	ep.GPU = &telemetry.Report{Timeline: samples}
	var buf bytes.Buffer
	require.NoError(t, chrometrace.Write(&buf, []chrometrace.Process{{Name: "measured: beta", Trace: ep.Trace(plan)}}, 0))
	require.NoError(t, chrometrace.Check(buf.Bytes()))
	var f chrometrace.File
	require.NoError(t, json.Unmarshal(buf.Bytes(), &f))
	threads := map[string]bool{}
	var util []float64
	for _, e := range f.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" {
			threads[e.Args["name"].(string)] = true
		}
		if e.Ph == "C" && e.Name == "gpu utilization" {
			for _, v := range e.Args {
				util = append(util, v.(float64))
			}
		}
	}
	assert.True(t, threads[report.GPU], "the buckets on the gpu track")
	assert.False(t, threads[report.CPU], "no cpu track from a GPU engine")
	assert.Equal(t, []float64{0.25, 0.9, 0}, util)
}

// TestMeasuredTrace: a measured epoch's events become the same kind of
// trace: one track per resource, loads named by partition and slot, the
// trainer's waits, flows from each load to its bucket (on a GPU:
// TestMeasuredTraceGPU).
func TestMeasuredTrace(t *testing.T) {
	plan, ep := measuredEpoch(t)
	f := golden(t, "measured.json", []chrometrace.Process{{Name: "measured: beta", Trace: ep.Trace(plan)}})
	names := map[string]bool{}
	flows := 0
	for _, e := range f.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" {
			names[e.Args["name"].(string)] = true
		}
		if e.Ph == "s" {
			flows++
		}
	}
	for _, tr := range []string{report.DiskRead, report.DiskWrite, report.CPU, report.Waiting} {
		assert.True(t, names[tr], tr)
	}
	assert.Equal(t, len(plan.Loads), flows)
}

// TestLanesAndCap: overlapping spans of one track go on lanes of their
// own (the viewer never moves them to an overflow track), and a cap cuts
// every process at one moment, saying so in its name.
func TestLanesAndCap(t *testing.T) {
	tr := report.Trace{Spans: []report.Span{
		{Track: report.DiskWrite, Name: "a", Start: 0, End: 2},
		{Track: report.DiskWrite, Name: "b", Start: 1, End: 3},
		{Track: report.DiskWrite, Name: "c", Start: 2, End: 4},
		{Track: report.CPU, Name: "bucket (0,0)", Start: 0, End: 4},
	}, Flows: []report.Flow{{FromTrack: report.DiskWrite, FromTime: 1.5, ToTrack: report.CPU, ToTime: 3}}}
	f := chrometrace.Build([]chrometrace.Process{{Name: "p", Trace: tr}}, 0)
	var buf bytes.Buffer
	require.NoError(t, json.NewEncoder(&buf).Encode(f))
	require.NoError(t, chrometrace.Check(buf.Bytes()))
	threads := map[string]int{}
	for _, e := range f.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" {
			threads[e.Args["name"].(string)] = e.Tid
		}
	}
	assert.Contains(t, threads, report.DiskWrite)
	assert.Contains(t, threads, report.DiskWrite+" #2", "b overlaps a: a lane of its own")
	assert.NotContains(t, threads, report.DiskWrite+" #3", "c starts when a ends: back on the first lane")

	capped := chrometrace.Build([]chrometrace.Process{{Name: "p", Trace: tr}}, 2)
	spans := 0
	for _, e := range capped.TraceEvents {
		if e.Ph == "X" {
			spans++
		}
		if e.Ph == "M" && e.Name == "process_name" {
			assert.Contains(t, e.Args["name"], "its first 1 s of 4 s")
		}
	}
	assert.Equal(t, 2, spans)
}

// TestCheckFindsFaults: what a viewer would mishandle is an error.
func TestCheckFindsFaults(t *testing.T) {
	dur := 5.0
	named := []chrometrace.Event{
		{Name: "process_name", Ph: "M", Pid: 1, Args: map[string]any{"name": "p"}},
		{Name: "thread_name", Ph: "M", Pid: 1, Tid: 1, Args: map[string]any{"name": "disk read"}},
	}
	x := func(ts float64) chrometrace.Event {
		return chrometrace.Event{Name: "load", Ph: "X", Ts: ts, Dur: &dur, Pid: 1, Tid: 1}
	}
	for _, tc := range []struct {
		name   string
		events []chrometrace.Event
		want   string
	}{
		{"ok", append(append([]chrometrace.Event{}, named...), x(0), x(5)), ""},
		{"overlap", append(append([]chrometrace.Event{}, named...), x(0), x(3)), "overlap"},
		{"no duration", append(append([]chrometrace.Event{}, named...), chrometrace.Event{Name: "x", Ph: "X", Pid: 1, Tid: 1}), "without a duration"},
		{"unnamed thread", append(append([]chrometrace.Event{}, named[0]), x(0)), "thread 1 of process 1 has no name"},
		{"unnamed process", append(append([]chrometrace.Event{}, named[1]), x(0)), "process 1 has no name"},
		{"dangling flow", append(append([]chrometrace.Event{}, named...), x(0), chrometrace.Event{Ph: "s", ID: 7, Ts: 1, Pid: 1, Tid: 1}), "flow 7"},
		{"flow outside", append(append([]chrometrace.Event{}, named...), x(0), chrometrace.Event{Ph: "s", ID: 7, Ts: 1, Pid: 1, Tid: 1},
			chrometrace.Event{Ph: "f", ID: 7, Ts: 50, Pid: 1, Tid: 1}), "lies in no event"},
		{"negative time", append(append([]chrometrace.Event{}, named...), x(-3)), "negative time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := json.Marshal(chrometrace.File{TraceEvents: tc.events})
			require.NoError(t, err)
			err = chrometrace.Check(data)
			if tc.want == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.want)
			}
		})
	}
	assert.Error(t, chrometrace.Check([]byte("not json")))
}

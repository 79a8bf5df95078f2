package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/job"
)

func TestShapeFlags(t *testing.T) {
	fs := newFlagSet("realrun calibrate")
	var o job.Options
	shapeFlags(fs, &o)
	require.NoError(t, fs.Parse([]string{"--dataset", "fb15k", "--dim", "32", "--p", "4", "--negatives", "50", "--workers", "1", "--epochs", "3"}))
	want := job.Defaults
	want.Dataset, want.Dim, want.P, want.Negatives, want.Workers, want.Epochs = "fb15k", 32, 4, 50, 1, 3
	assert.Equal(t, want, o, "realrun's defaults, the given flags over them")
}

// TestShapeFlagsModel: calibrate takes the run's model as realrun does —
// --model with any name, or --operator with --comparator — and its
// objective flags.
func TestShapeFlagsModel(t *testing.T) {
	tests := []struct {
		args  []string
		model string
		loss  string
	}{
		{[]string{"--model", "RotatE"}, "rotate", ""},
		{[]string{"--model", "linear+dot"}, "linear+dot", ""},
		{[]string{"--operator", "translation", "--comparator", "l2", "--loss", "ranking", "--margin", "1"}, "transe-l2", "ranking"},
		{[]string{"--operator", "linear", "--comparator", "cos"}, "linear+cos", ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			fs := newFlagSet("realrun calibrate")
			var o job.Options
			mf := shapeFlags(fs, &o)
			require.NoError(t, fs.Parse(tt.args))
			require.NoError(t, mf.apply(fs, &o))
			assert.Equal(t, tt.model, o.Model)
			assert.Equal(t, tt.loss, o.Loss)
		})
	}
}

// Bad shape flags are refused in one line with exit status 2, before
// anything is measured.
func TestCalibrateBadShape(t *testing.T) {
	for _, args := range [][]string{
		{"--dim", "0"},
		{"--dataset", "nope"},
		{"--model", "complex", "--dim", "33"},
		{"--model", "bilinear+dot"},
		{"--model", "rotate+dot"},
		{"--operator", "linear"},
		{"--model", "dot", "--operator", "linear", "--comparator", "dot"},
		{"--model", "distmult", "--loss", "hinge"},
		{"--model", "distmult", "--loss", "softmax", "--margin", "1"},
		{"--model", "rotate", "--dim", "31"},
		{"--edges", "/nonexistent/edges.tsv"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"calibrate", "--out", t.TempDir() + "/cal.yaml"}, args...), &stdout, &stderr)
			assert.Equal(t, 2, code, stderr.String())
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr.String()), "\n")+1, "one line: %q", stderr.String())
		})
	}
}

// The calibrate table prints measured figures only: no placeholder rate
// (the "1000000.0 GFLOP/s" a CPU-only profile once printed), and the
// engine's arithmetic as a share of the FMA peak, never above it.
func TestCalibrationTableFigures(t *testing.T) {
	shape := devices.TrainShape{Model: "dot", Dim: 64, Batch: 10000, Negatives: 100, Chunk: 100, Workers: 2, Rows: 10400}
	cal := calibrate.Calibration{ReadBW: 1.5e9, WriteBW: 1.1e9, BothReadBW: 1e9, BothWriteBW: 0.5e9, LatencySeconds: 5e-5, CopyBW: 10e9, ChecksumBW: 7e9,
		Shape: &shape, FMAPeak: 384e9, FMACores: 2}
	cal.Profile.Disk = cal.Disk()
	cal.Profile.CPU.Train.Dot = devices.TrainCost{Edges: 915e3}
	cal.Profile.CPU.TrainShape = &shape
	cal.Profile.CPU.Interference = devices.Interference{Compute: 0.16, IO: 1.03}
	var b bytes.Buffer
	require.NoError(t, calibrationTable(cal).Render(&b))
	out := b.String()
	for _, want := range []string{"915k edges/s", "dot, d=64, batch 10000, 100 negatives, chunk 100, 2 workers, 10400 rows per partition", "70.3 GFLOP/s of score arithmetic, 18% of the FMA peak 384 GFLOP/s of 2 cores", "training 16% slower while I/O runs"} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "PFLOP")
	// Every GFLOP/s figure is at most the FMA peak of this machine's cores.
	for _, m := range regexp.MustCompile(`([0-9.]+) GFLOP/s`).FindAllStringSubmatch(out, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		assert.LessOrEqual(t, v, cal.FMAPeak/1e9, m[0])
	}
}

// A profile without the run's score function's cost is refused in one
// line, exit status 2, before anything is generated or trained.
func TestCompareSimDeviceWithoutModelCost(t *testing.T) {
	p, err := devices.Preset("p3.2xlarge")
	require.NoError(t, err)
	p.CPU.Train = devices.CPUTrain{ComplEx: devices.TrainCost{Edges: 1e6}}
	data, err := p.YAML()
	require.NoError(t, err)
	dir := t.TempDir()
	path := dir + "/cal.yaml"
	require.NoError(t, os.WriteFile(path, data, 0o644))
	var stdout, stderr bytes.Buffer
	code := run([]string{"--dataset", "twitter", "--scale", "0.002", "--model", "dot", "--compare-sim", "--device", path, "--workdir", dir + "/wd"}, &stdout, &stderr)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr.String(), "no cpu.train.dot cost")
	assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr.String()), "\n")+1, "one line: %q", stderr.String())
	assert.NoDirExists(t, dir+"/wd", "nothing generated")
}

// --history: every calibration joins the file; from the second one on,
// the profile's spread holds how far the rates drifted between them, and
// the table says so. A history file that is not one is refused in one
// line.
func TestCalibrateHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("calibrates twice (seconds)")
	}
	dir := t.TempDir()
	hist := filepath.Join(dir, "history.json")
	args := func(out string) []string {
		return []string{"calibrate", "--dataset", "twitter", "--scale", "0.0001", "--dim", "16", "--p", "2", "--negatives", "10", "--size", "1",
			"--dir", dir, "--workdir", filepath.Join(dir, "w"), "--history", hist, "--out", filepath.Join(dir, out)}
	}
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run(args("a.yaml"), &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "none yet: no rate measured twice in the history")
	stdout.Reset()
	require.Equal(t, 0, run(args("b.yaml"), &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "over 4 measurements since", "two of the disk's and two of the engine's")

	h, err := calibrate.ReadHistory(hist)
	require.NoError(t, err)
	require.Len(t, h.Entries, 4)
	prof, err := devices.Load(filepath.Join(dir, "b.yaml"))
	require.NoError(t, err)
	drift, _ := h.Drift()
	for _, key := range []string{"disk.read", "cpu.train.dot.edges"} {
		r, ok := prof.Spread.Of(key)
		require.True(t, ok, key)
		v, _ := prof.Rate(key)
		assert.LessOrEqual(t, r.Low, v*drift[key].Low*(1+1e-9), key)
		assert.GreaterOrEqual(t, r.High, v*drift[key].High*(1-1e-9), key)
	}

	require.NoError(t, os.WriteFile(hist, []byte("not json"), 0o644))
	stderr.Reset()
	assert.Equal(t, 2, run(args("c.yaml"), &stdout, &stderr))
	assert.Contains(t, stderr.String(), "--history: history")
	assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr.String()), "\n")+1, "one line: %q", stderr.String())
}

package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/internal/chrometrace"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/validate"
)

// CompareOutput is what --compare-sim prints with --json.
type CompareOutput = validate.CompareOutput

// compareMain is --compare-sim: validate.CompareSim (its notices on
// stderr with their fields rendered as flags), then printing.
func compareMain(o cmdOptions, stdout, stderr io.Writer, format cli.Format) error {
	out, err := validate.CompareSim(o.Options, o.device, pickProgress(o.progress, stderr), cli.RenderWriter(stderr))
	if err != nil {
		return asUsage(err)
	}
	prof := out.Device
	if o.plot != "" {
		if err := scatter(o.plot, out); err != nil {
			return cli.Usagef("--plot: %w", err)
		}
		atomicfile.Announce(stderr, o.plot)
	}
	if o.trace != "" {
		// One process for the prediction and one for the measurement of
		// every run, all on the same time axis, read one above the other.
		var procs []chrometrace.Process
		for _, c := range out.Results {
			if c.PredictedTrace != nil && c.MeasuredTrace != nil {
				procs = append(procs,
					chrometrace.Process{Name: fmt.Sprintf("predicted: %s (%s model, %s)", c.Ordering, validate.Engine{Name: o.Engine, Buffer: o.Buffer}.System(), out.Device), Trace: *c.PredictedTrace},
					chrometrace.Process{Name: fmt.Sprintf("measured: %s (%s)", c.Ordering, measuredBy(o.Engine)), Trace: *c.MeasuredTrace})
			}
		}
		if err := cli.WriteTrace(o.trace, procs, o.traceSpans, stderr); err != nil {
			return err
		}
	}
	switch format {
	case cli.JSON:
		return cli.PrintJSON(stdout, out)
	case cli.CSV:
		if hasSpread(out.Results) {
			return comparisonSpreadColumns(comparisonColumns).CSV(spreadComparisons(out.Results)).CSV(stdout)
		}
		return comparisonColumns.CSV(out.Results).CSV(stdout)
	}
	table := comparisonColumns.Select(o.out.isWide()).Human(out.Results)
	if hasSpread(out.Results) {
		table = comparisonSpreadColumns(comparisonColumns.Select(o.out.isWide())).Human(spreadComparisons(out.Results))
	}
	if err := table.Render(stdout); err != nil {
		return err
	}
	sys := validate.Engine{Name: o.Engine, Buffer: o.Buffer}.System()
	fmt.Fprintf(stdout, "predicted by the %s system model on device %s; error = (predicted − measured) ÷ measured; bytes must match exactly\n", sys, prof)
	if hasSpread(out.Results) {
		in := 0
		for _, c := range out.Results {
			if c.InRange {
				in++
			}
		}
		fmt.Fprintf(stdout, "predicted (range): the epoch with the profile's rates as given and, in brackets, over their measured spread; %d of %d measured epochs in range\n", in, len(out.Results))
	}
	if o.Engine == "cuda" {
		copies := make([]string, len(out.Results))
		for i, c := range out.Results {
			m, p := c.Measured, c.Predicted
			copies[i] = fmt.Sprintf("%s %.2f s, %.2f s hidden (predicted %.2f s, %.2f s hidden)", c.Ordering, m.TransferSeconds, m.HiddenTransferSeconds, p.TransferSeconds, p.HiddenTransferSeconds)
		}
		fmt.Fprintf(stdout, "host↔GPU copies in flight, and hidden behind training: %s\n", strings.Join(copies, "; "))
	}
	seeds := make([]string, len(out.Results))
	for i, c := range out.Results {
		seeds[i] = fmt.Sprintf("%s %d", c.Ordering, c.Measured.OrderingSeed)
	}
	fmt.Fprintf(stdout, "ordering seeds: %s%s\n", strings.Join(seeds, ", "), planNote(o.PlanFile))
	for _, c := range out.Results {
		if !c.CountsMatch {
			fmt.Fprintf(stdout, "warning: %s: the measured loads, swaps, writes or bytes differ from the Plan's\n", c.Ordering)
		}
	}
	for _, s := range out.Skipped {
		fmt.Fprintf(stdout, "not valid here: %s: %s\n", s.Ordering, s.Reason)
	}
	return nil
}

// scatter plots predicted against measured epoch seconds with the y = x
// line.
func scatter(path string, out CompareOutput) error {
	lc := plots.LineChart{Title: "Predicted vs measured epoch time", XLabel: "measured (s)", YLabel: "predicted (s)", Scatter: true}
	hi := 0.0
	for _, c := range out.Results {
		lc.Series = append(lc.Series, plots.Series{Name: c.Ordering, X: []float64{c.Measured.EpochSeconds}, Y: []float64{c.Predicted.EpochSeconds}})
		hi = math.Max(hi, math.Max(c.Measured.EpochSeconds, c.Predicted.EpochSeconds))
	}
	lc.Series = append(lc.Series, plots.Series{Name: "y = x", X: []float64{0, hi * 1.1}, Y: []float64{0, hi * 1.1}, Line: true})
	return plots.SaveStack(path, lc)
}

// calibrateMain is `realrun calibrate`: it measures the disk holding --dir
// and the CPU engine at the training shape the given realrun flags train
// at (validate.Calibrate), prints the figures and writes a device profile
// that records the shape.
func calibrateMain(args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("realrun calibrate")
	dir := fs.String("dir", os.TempDir(), "measure the disk holding `DIR` (scratch files are removed)")
	cli.MachineDefault(fs, "dir", "the system temp dir, $TMPDIR or /tmp")
	size := fs.Int("size", 0, "scratch file size in MB (default: the run's partition size)")
	out := fs.String("out", "calibrated.yaml", "write the device profile to `FILE`")
	name := fs.String("name", "this-machine", "profile name")
	asJSON := fs.Bool("json", false, "print the measurements as JSON")
	probe := fs.Float64("probe", 0, "complete the calibration with probes: the first `SHARE` (0–1) of each ordering's buckets (--ordering or --orderings, --c) run by the engine on the work directory and not committed; the disk's rates and each ordering's engine rate are scaled to what the probes moved (0: none)")
	history := fs.String("history", "", "add this calibration to the history `FILE` (created if missing) and widen the profile's spread by how far the rates in it drifted since --history-since")
	historySince := fs.Duration("history-since", 24*time.Hour, "the history's `SPAN` that widens the spread (measurements older than this are kept but not used)")
	var o job.Options
	mf := shapeFlags(fs, &o)
	var disk diskFlags
	disk.register(fs, "--dir's disk")
	cli.SetHelp(fs, calibrateHelp)
	if err := cli.Parse(fs, args, stdout); err != nil {
		return err
	}
	if err := mf.apply(fs, &o); err != nil {
		return err
	}
	if err := atomicfile.CheckWritable(*out); err != nil {
		return cli.Usagef("--out: %w", err)
	}
	_, g, err := limitDisk(disk, *dir, stderr)
	if err != nil {
		return err
	}
	done := exitOnSignal(g, stderr)
	defer func() { err = errors.Join(err, g.Release()); done() }()
	if *probe < 0 || *probe > 1 {
		return cli.Usagef("--probe %g: a share of the buckets, between 0 and 1", *probe)
	}
	if *history != "" { // a file that is not a history is refused before anything is measured
		if _, err := calibrate.ReadHistory(*history); err != nil {
			return cli.Usagef("--history: %w", err)
		}
	}
	cal, err := validate.Calibrate(o, *dir, int64(*size)<<20, *name, *probe, stderr)
	if u := objectiveUsage(err); u != nil {
		return u
	}
	if err != nil {
		return asUsage(err)
	}
	renderCalibration(&cal)
	if *history != "" {
		now := time.Now()
		if err := cal.AddToHistory(*history, now, now.Add(-*historySince)); err != nil {
			return cli.Usagef("--history: %w", err)
		}
	}
	data, err := cal.Profile.YAML()
	if err != nil {
		return err
	}
	gpu := "No GPU is recorded: " + cal.NoGPU + ".\n"
	if cal.GPU != nil {
		gpu = fmt.Sprintf("pcie and gpu from %s: pinned copies of partition size and the CUDA engine at %s.\n", cal.GPU.Name, cal.GPU.Shape)
	}
	engine := "\n# cpu.train: not measured (--engine cuda).\n"
	if c := cal.Compute; c != nil {
		engine = fmt.Sprintf("\n# cpu.train from the CPU engine at the training shape cpu.train_shape (valid\n# for that shape: realrun --compare-sim --device says when a run differs),\n# trained on %s.\n", c.On)
	}
	header := []byte("# Measured by `realrun calibrate`: disk figures from O_DIRECT transfers of\n# partition-sized scratch files; " + engine + "# " + gpu)
	if err := atomicfile.Write(*out, func(w io.Writer) error {
		if _, err := w.Write(header); err != nil {
			return err
		}
		_, err := w.Write(data)
		return err
	}); err != nil {
		return cli.Usagef("--out: %w", err)
	}
	if *asJSON {
		return cli.PrintJSON(stdout, cal)
	}
	if err := calibrationTable(cal).Render(stdout); err != nil {
		return err
	}
	atomicfile.Announce(stderr, *out)
	fmt.Fprintf(stdout, "use %s with simulate --device or realrun --compare-sim --device, with the training flags given here\n", *out)
	return nil
}

// calibrationTable is the calibration as `realrun calibrate` prints it:
// measured figures only, each with its unit (none of the profile's
// placeholders), the engine's arithmetic read against the FMA peak.
func calibrationTable(cal calibrate.Calibration) plots.Table {
	t := plots.Table{Header: []string{"measurement", "value"}}
	p := cal.Profile
	source := "O_DIRECT"
	checksum := "CRC-32C, freshly read"
	if cal.Passes != nil {
		source, checksum = "O_DIRECT, in turn as the engine swaps", "CRC-32C, as the loader and writer run it"
	}
	t.Rows = [][]string{
		{"disk read (" + source + ")", fmt.Sprintf("%.0f MB/s", float64(p.Disk.Read)/1e6)}, {"disk write (" + source + ")", fmt.Sprintf("%.0f MB/s", float64(p.Disk.Write)/1e6)},
		{"reads + writes at once (two streams)", cal.BothAtOnce()}, {"full duplex", strconv.FormatBool(p.Disk.FullDuplex)},
		{"request latency", fmt.Sprintf("%.0f µs", cal.LatencySeconds*1e6)}, {"memory copy", fmt.Sprintf("%.1f GB/s", cal.CopyBW/1e9)},
		{"checksum (" + checksum + ")", fmt.Sprintf("%.1f GB/s", cal.ChecksumBW/1e9)},
	}
	if ps := cal.Passes; ps != nil {
		t.Rows = append(t.Rows, []string{"passes alone (for reference)", fmt.Sprintf("read %.0f MB/s, write %.0f MB/s, checksum after each read %.1f GB/s", ps.ReadBW/1e6, ps.WriteBW/1e6, ps.ChecksumBW/1e9)})
	}
	if held := validate.HeldBy(p.Disk); held != "" {
		t.Rows = append(t.Rows, []string{"kernel limit (disk figures above: outside it)", held})
	}
	if note := cal.PairedNote(); note != "" {
		t.Rows = append(t.Rows, []string{"a read, then a write, as the engine swaps", note})
	}
	if cal.Files > 0 {
		t.Rows = append(t.Rows, []string{"disk measured with", fmt.Sprintf("%d files of %.1f MB each way, 3 passes of each kind alone and as two streams (median), then the pairs; %.1f s in all", cal.Files, float64(cal.FileBytes)/1e6, cal.Took.Disk)})
	}
	if cal.Written != "" {
		t.Rows = append(t.Rows, []string{"disk writes wrote", cal.Written})
	}
	if g := cal.GPU; g != nil {
		t.Rows = append(t.Rows, []string{"GPU " + g.Name, fmt.Sprintf("H2D %.1f GB/s, D2H %.1f GB/s, %.2fM edges/s at %s", g.H2D/1e9, g.D2H/1e9, g.EdgesPerSecond/1e6, g.Shape)})
	}
	if s := cal.Shape; s != nil {
		tc, _ := p.CPU.Train.For(s.Model)
		itf := p.CPU.Interference
		t.Rows = append(t.Rows,
			[]string{"training shape", s.String()},
			[]string{"train " + s.Model, fmt.Sprintf("%.0fk edges/s", float64(tc.Edges)/1e3)},
			[]string{"score arithmetic", validate.FLOPSNote(cal)},
			[]string{"interference", fmt.Sprintf("training %.0f%% slower while I/O runs%s, I/O %.0f%% slower while training runs", 100*itf.Compute, interferenceOn(cal), 100*itf.IO)})
		if c := cal.Compute; c != nil {
			t.Rows = append(t.Rows,
				[]string{"engine trained on", c.On},
				[]string{"engine measured with", fmt.Sprintf("%d rounds after one to warm up%s, %d edges, %.1f s: %.0fk–%.0fk edges/s%s (median %.0fk)", c.Rounds, roundsNote(*c), c.TrainedEdges, c.Seconds, c.Low/1e3, c.High/1e3, stretchNote(*c), c.Edges/1e3)},
				[]string{"interference measured for", fmt.Sprintf("%.1f s", cal.Took.Interference)})
		}
		for _, name := range slices.Sorted(maps.Keys(cal.Orderings)) {
			r := cal.Orderings[name]
			beside := "the bench's median"
			if r.Reference > 0 {
				beside = fmt.Sprintf("the bench's %.0fk in rounds taken in turn with it", r.Reference/1e3)
			}
			t.Rows = append(t.Rows, []string{"train " + s.Model + " on " + name + "'s buckets",
				fmt.Sprintf("%.0fk edges/s, %.2f× %s%s, so %.0fk at the bench's rate; %d edges, %.1f s of training: %.0fk–%.0fk; %s", r.Edges/1e3, cal.OrderingRatio(name), beside, pooledNote(r), cal.OrderingRatio(name)*float64(tc.Edges)/1e3, r.TrainedEdges, r.Seconds, r.Low/1e3, r.High/1e3, r.On)})
		}
		if cal.Took.Orderings > 0 {
			t.Rows = append(t.Rows, []string{"orderings measured for", fmt.Sprintf("%.1f s (their loads included)", cal.Took.Orderings)})
		}
	}
	if cal.Took.Total > 0 {
		t.Rows = append(t.Rows, []string{"calibration took", fmt.Sprintf("%.1f s", cal.Took.Total)})
	}
	if p := cal.Probe; p != nil {
		for _, r := range p.Runs {
			t.Rows = append(t.Rows, []string{"probe " + r.Ordering, fmt.Sprintf("first %d of %d buckets in %.1f s (predicted %.1f s); against the calibration: reads %.2f×, writes %.2f×, %s", r.Buckets, r.Of, r.Seconds, r.PredictedSeconds, r.ReadRatio, r.WriteRatio, r.EngineWords())})
		}
		t.Rows = append(t.Rows, []string{"probes applied", fmt.Sprintf("%s; %.1f s of probes", p.Applied(), p.Seconds)})
	}
	if !cal.DriftSince.IsZero() {
		t.Rows = append(t.Rows, []string{"drift in the history", driftNote(cal)})
	}
	return t
}

// driftNote says how far the history's rates strayed from their medians
// (Calibration.Drift), which the profile's spread now holds.
func driftNote(cal calibrate.Calibration) string {
	since := cal.DriftSince.UTC().Format("2006-01-02 15:04 UTC")
	if len(cal.Drift) == 0 {
		return "none yet: no rate measured twice in the history since " + since + " (the spread is this calibration's own)"
	}
	var parts []string
	for _, key := range devices.SpreadKeys() {
		if r, ok := cal.Drift[key]; ok {
			parts = append(parts, fmt.Sprintf("%s %+.0f%%…%+.0f%%", key, 100*(r.Low-1), 100*(r.High-1)))
		}
	}
	return fmt.Sprintf("%s over %d measurements since %s; the profile's spread holds it", strings.Join(parts, ", "), cal.DriftEntries, since)
}

// interferenceOn says what the engine trained while its slowdown by I/O
// was measured, when not the bench's buckets.
func interferenceOn(cal calibrate.Calibration) string {
	if cal.InterferenceOn == "" {
		return ""
	}
	return " (training " + cal.InterferenceOn + ")"
}

// measuredBy names the measured run in a trace: realrun, and the engine
// when it is not the cpu engine.
func measuredBy(engine string) string {
	if engine == "" || engine == "cpu" {
		return "realrun"
	}
	return "realrun, " + engine + " engine"
}

// roundsNote says how many of the bench's rounds were timed in the
// orderings' turns, spread over the calibration, and at its end to time
// the engine for as long as the runs it predicts, if any were.
func roundsNote(c calibrate.ComputeRate) string {
	var parts []string
	if c.InTurns > 0 {
		parts = append(parts, fmt.Sprintf("%d of them in the orderings' turns, across the calibration", c.InTurns))
	}
	if c.Tail > 0 {
		parts = append(parts, fmt.Sprintf("%d more after the disk and the orderings, so that they took %.0f s in all: as long as the runs it predicts train, up to %.0f s", c.Tail, c.Span, calibrate.ComputeSpan.Seconds()))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// pooledNote says when an ordering's ratio is the one it shares with the
// orderings its rounds could not tell it apart from
// (calibrate.TellApart), and its own beside it.
func pooledNote(r calibrate.ComputeRate) string {
	if r.Own <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pooled: its own %.2f× is less than %.0f standard errors of %.1f%% from the orderings' median)", r.Own, calibrate.TellApart, 100*r.RelativeSE)
}

// stretchNote says when the rate's extent is over stretches of rounds
// rather than single rounds (ComputeRate.Stretches).
func stretchNote(c calibrate.ComputeRate) string {
	if n := len(c.Stretches()); n != len(c.Rates) {
		return fmt.Sprintf(" over %d stretches of %.0f s or more", n, calibrate.StretchSeconds)
	}
	return ""
}

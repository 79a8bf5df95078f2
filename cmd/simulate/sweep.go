package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/sim/sweep"
	"github.com/tierflow/tierflow/validate"
)

// SweepOutput is what simulate sweep prints with --json.
type SweepOutput = sweep.Output

// sweepMain runs `simulate sweep`: every ordering at every (p, c) on every
// device, ranked by epoch time among the buffers that fit in memory, with
// the systems that keep every parameter in memory where they fit.
func sweepMain(args []string, stdout, stderr io.Writer) error {
	var q sim.Request
	var ps, cs, devs, plotPath string
	var top int
	var g sweep.Grid
	var machines, bandwidth string
	var epochs int
	var graphDir string
	fs := newFlagSet(prog + " sweep")
	addGraphFlag(fs, &graphDir)
	fs.StringVar(&ps, "p", "8,16,32,64", "partition counts: a comma-separated `LIST` of numbers and ranges a-b (with --graph, the directory's p among them)")
	fs.StringVar(&cs, "c", "", "buffer capacities, a `LIST` like --p; c > p is skipped (default 2,4,8,16, or the system's own; with --graph, the directory's c among them)")
	cli.PresetOrFileVar(fs, &devs, "device", "p3.2xlarge", "comma-separated device `LIST`: presets ("+strings.Join(devices.PresetNames(), ", ")+") or YAML files", devices.PresetNames())
	fs.IntVar(&top, "top", 10, "rows of the human table (all rows with --json and --csv)")
	fs.StringVar(&plotPath, "plot", "", "draw, per device and c, the best ordering's epoch time against p (buffers that fit) to `FILE`.png or .svg")
	fs.Float64Var(&g.MemoryShare, "memory-share", 0.8, "share of the buffer's memory (CPU, or GPU for GPU buffers) that c partitions plus staging buffers may take")
	fs.BoolVar(&g.InMemory, "in-memory", true, "also rank the systems that keep every parameter in memory ("+strings.Join(inMemoryNames(), ", ")+") on each device where the parameters fit --memory-share of its GPU or CPU memory (false: the partitioned system alone)")
	addScenarioFlags(fs, &q)
	fs.StringVar(&machines, "machines", "", "sweep PyTorch-BigGraph (--system pbg, its CPU trainer) over machine counts: a `LIST` like --p; ranks (machines, p) by the time of --epochs epochs (default device pbg-paper)")
	fs.StringVar(&bandwidth, "bandwidth", "", "with --machines: each machine's network bandwidth, e.g. 10GB/s (default: the device's)")
	fs.IntVar(&epochs, "epochs", 0, "with --machines: rank by the time of `N` epochs (default 10)")
	of := registerOut(fs)
	cli.SetHelp(fs, cli.Help{
		Usage:   "simulate sweep [flags]",
		Summary: "Simulates every ordering at every (p, c) on every device and ranks the configurations whose buffer fits in memory, with the systems that keep every parameter in memory where it fits; with --machines, PyTorch-BigGraph on every (machines, p).",
		Groups:  append(slices.Clone(scenarioGroups), cli.FlagGroup{Title: "Several machines (PyTorch-BigGraph's distributed mode)", Flags: []string{"machines", "bandwidth", "epochs"}}),
		Examples: []string{
			"simulate sweep --machines 1,2,4,8 --p 4,8,16,32 --dataset freebase   # how many machines, how many partitions",
			"simulate sweep                                          # Freebase86m d=100 on p3.2xlarge",
			"simulate sweep --dataset twitter --device p3.2xlarge,h100-nvme --p 8-64 --c 2-16 --plot sweep.png",
			"simulate sweep --system legend --device legend-a100 --p 8,16,32 --json",
		},
	})
	format, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	if done, err := of.printed(fs, stdout); done {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	trained, err := useGraph(&q, graphDir, set)
	if err != nil {
		return err
	}
	if set["machines"] || set["bandwidth"] || set["epochs"] {
		return sweepMachines(stdout, format, q, ps, devs, machines, bandwidth, epochs, top, set, *of.wide)
	}
	if g.Ps, err = cli.IntList(ps); err != nil {
		return cli.Usagef("--p: %w", err)
	}
	if cs != "" {
		if g.Cs, err = cli.IntList(cs); err != nil {
			return cli.Usagef("--c: %w", err)
		}
	}
	g.Devices = cli.SplitList(devs)
	var took, swept []string
	if trained != nil {
		took = fromGraph(&q, *trained, set, false)
		swept = sweepGraphPlan(q.System, *trained, &g, set)
	}
	if plotPath != "" {
		if err := plots.CheckPath(plotPath); err != nil {
			return cli.Usagef("--plot: %w", err)
		}
	}
	out, err := sweep.Run(q, g)
	cli.RenderAll(out.Notes)
	out.System.Description = cli.Render(out.System.Description)
	if err != nil {
		if all := append(took, swept...); len(all) > 0 {
			err = fmt.Errorf("%w (with --graph %s's %s)", err, graphDir, strings.Join(all, " "))
		}
		return cli.AsUsage(err)
	}
	if trained != nil {
		out.Notes = append([]string{graphNote(graphDir, *trained, took, swept)}, out.Notes...)
		if n := ownPlanNote(out, *trained); n != "" {
			out.Notes = append(out.Notes, n)
		}
	}
	if plotPath != "" {
		chart, err := sweepChart(out)
		if err == nil {
			err = plots.SaveStack(plotPath, chart)
		}
		if err != nil {
			return cli.Usagef("--plot: %w", err)
		}
		atomicfile.Announce(stderr, plotPath)
	}
	return printSweep(stdout, format, out, top, *of.wide)
}

func printSweep(w io.Writer, format cli.Format, out SweepOutput, top int, wide bool) error {
	switch format {
	case cli.JSON:
		return cli.PrintJSON(w, out)
	case cli.CSV:
		if out.HasSpread() {
			return withSpread(sweepColumns, false).CSV(spreadRows(out.Rows)).CSV(w)
		}
		return sweepColumns.CSV(out.Rows).CSV(w)
	}
	fit := out.Fitting()
	shown := fit[:min(top, len(fit))]
	cols := sweepColumns.Select(wide)
	if len(out.Devices) < 2 {
		cols = cols.DropHuman("Device")
	}
	inMemoryShown := slices.ContainsFunc(shown, func(r sweep.Row) bool { return r.InMemory })
	if inMemoryShown {
		cols = slices.Clone(cols)
		for i := range cols {
			if cols[i].Field == "What" {
				cols[i].Head = "ordering or system"
			}
		}
	}
	if len(fit) > 0 {
		table := cols.Human(spreadRows(shown))
		if out.HasSpread() {
			table = withSpread(cols, false).Human(spreadRows(shown))
		}
		if err := table.Render(w); err != nil {
			return err
		}
	}
	tr := out.Training
	fmt.Fprintf(w, "%s; %s: %d train edges, d=%d, %s, batch %d, %d negatives%s; on %s\n",
		out.System.Name, describe(out.Dataset, out.Graph), out.TrainEdges, out.Dim, tr.Model, tr.Batch, tr.Negatives, chunkText(tr), strings.Join(out.Devices, ", "))
	inMemory := ""
	if len(out.InMemory) > 0 {
		inMemory = fmt.Sprintf(", and %d systems that keep every parameter in memory (%s)", len(out.InMemory), strings.Join(out.InMemory, ", "))
	}
	fmt.Fprintf(w, "swept p ∈ {%s}, c ∈ {%s}, %d orderings%s: %d configurations, %d fit in memory",
		sweep.JoinInts(out.Ps), sweep.JoinInts(out.Cs), len(out.Orderings), inMemory, len(out.Rows), len(fit))
	var bufferOut, batchOut, split, most int
	for _, r := range out.Rows {
		switch {
		case float64(r.BufferBytes) > out.MemoryShare*float64(r.MemoryBytes):
			bufferOut++
		case !r.BatchFits:
			batchOut++
		case r.MicroBatches > 1:
			split++
			most = max(most, r.MicroBatches)
		}
	}
	if bufferOut > 0 {
		fmt.Fprintf(w, " (the other %d need more than %.0f%% of the %s memory for c partitions plus staging buffers)", bufferOut, 100*out.MemoryShare, out.Rows[len(out.Rows)-1].Memory)
	}
	fmt.Fprintln(w)
	for _, line := range leftOutLines(out) {
		fmt.Fprintln(w, line)
	}
	if batchOut > 0 {
		fmt.Fprintf(w, "%d configurations do not fit because a batch does not fit the GPU memory left to it (micro-batching off, or not even one edge per micro-batch fits)\n", batchOut)
	}
	if split > 0 {
		fmt.Fprintf(w, "%d of the configurations that fit split every batch into micro-batches (up to %d) to fit the GPU memory left to it; their epochs include moving the rows that micro-batches share\n", split, most)
	}
	if len(fit) == 0 {
		fmt.Fprintln(w, "no configuration fits in memory: try a larger p or a smaller c (--json lists them all)")
	} else {
		b := fit[0]
		held := "buffer"
		if b.InMemory {
			held = "parameters"
		}
		fmt.Fprintf(w, "fastest: %s on %s, %s per epoch (%.2f× its bound); %s %.1f GB of %.1f GB %s memory\n",
			rowName(b), b.Device, plots.Duration(b.EpochSeconds), b.EpochOverBound, held, sim.GB(b.BufferBytes), sim.GB(b.MemoryBytes), b.Memory)
		fastestSpread(w, fit)
		if near, io, mem := out.NearBest(sweep.NearFastest); len(near) > 1 {
			fmt.Fprintf(w, "within %.0f%% of it: %d configurations; the least I/O among them: %s on %s (%.1f GB); the smallest buffer: %s on %s (%.1f GB)\n",
				100*sweep.NearFastest, len(near), rowName(io), io.Device, sim.GB(io.IOBytes),
				rowName(mem), mem.Device, sim.GB(mem.BufferBytes))
		}
	}
	if n := len(out.Skipped); n > 0 {
		fmt.Fprintf(w, "not valid at some (p, c): %s (%d pairs; --json gives the reasons)\n", out.SkippedNames(), n)
	}
	for _, n := range out.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	buffer := "c partitions plus the system's staging buffers (prefetch, async write)"
	if inMemoryShown {
		buffer += "; for a system that keeps every parameter in memory (no p or c), all of them with their Adagrad state"
	}
	fmt.Fprintf(w, "buffer GB: %s; ÷ bound: epoch over a bound no schedule beats\n", buffer)
	if out.HasSpread() {
		fmt.Fprintln(w, spreadNote)
	}
	return nil
}

// sweepChart draws one line per c: the epoch time of the best ordering at
// each p whose buffer fits; with several devices, one panel per device
// (the lines of a c share a colour across panels).
func sweepChart(o SweepOutput) (plots.Chart, error) {
	curves := o.Curves()
	if len(curves) == 0 {
		return nil, fmt.Errorf("nothing to plot: no configuration fits in memory")
	}
	title := fmt.Sprintf("Best ordering's epoch: %s, %s d=%d", o.System.Name, o.Dataset, o.Dim)
	longest := 0.0
	for _, cv := range curves {
		for _, s := range cv.EpochSeconds {
			longest = max(longest, s)
		}
	}
	unit, secs := plots.DurationUnit(longest) // one unit for every panel
	var panels []plots.LineChart
	panel := map[string]int{}
	for _, cv := range curves {
		k, ok := panel[cv.Device]
		if !ok {
			k = len(panels)
			panel[cv.Device] = k
			panels = append(panels, plots.LineChart{Title: cv.Device, XLabel: "partitions p", YLabel: "epoch (" + unit + ")"})
		}
		s := plots.Series{Name: fmt.Sprintf("c=%d", cv.C)}
		for i, p := range cv.P {
			s.X = append(s.X, float64(p))
			s.Y = append(s.Y, cv.EpochSeconds[i]/secs)
		}
		panels[k].Series = append(panels[k].Series, s)
	}
	// A system that keeps every parameter in memory has no p: a level line
	// across the swept p on its device's panel.
	for _, r := range o.Fitting() {
		if k, ok := panel[r.Device]; ok && r.InMemory && len(o.Ps) > 0 {
			lo, hi := float64(slices.Min(o.Ps)), float64(slices.Max(o.Ps))
			y := r.EpochSeconds / secs
			panels[k].Series = append(panels[k].Series, plots.Series{Name: r.System + " (in memory)", X: []float64{lo, hi}, Y: []float64{y, y}})
		}
	}
	if len(panels) == 1 {
		chart := panels[0]
		chart.Title = title + ", " + chart.Title
		return chart, nil
	}
	return plots.Panels{Title: title, Charts: panels}, nil
}

// sweepColumns are `simulate sweep`'s table and CSV columns; the human
// table leaves the Wide ones out (--wide shows them).
var sweepColumns = plots.Columns{
	{Field: "Rank", Head: "rank", NoCSV: true},
	{Field: "Device", Head: "device"},
	{Field: "P", Head: "p", ZeroMissing: true},
	{Field: "C", Head: "c", ZeroMissing: true},
	{Field: "Ordering"},
	{Field: "What", Head: "ordering", NoCSV: true}, // or the system that keeps every parameter in memory
	{Field: "PartitionBytes"},
	{Field: "BufferBytes", Head: "buffer GB", Scale: 1e-9, Prec: 1},
	{Field: "StagingBuffers"},
	{Field: "MemoryBytes"},
	{Field: "Memory"},
	{Field: "Fits"},
	{Field: "BatchFits"},
	{Field: "MicroBatches"},
	{Field: "Swaps", Head: "swaps", Wide: true},
	{Field: "LowerBound"},
	{Field: "ReadBytes"},
	{Field: "WriteBytes"},
	{Field: "IOBytes", Head: "I/O GB", Scale: 1e-9, Prec: 1, NoCSV: true, Wide: true},
	{Field: "EpochSeconds", Head: "epoch", Seconds: true, CSVPrec: 6},
	{Field: "StallSeconds", Head: "stall", Seconds: true, CSVPrec: 6},
	{Field: "ComputeSeconds", CSVPrec: 6},
	{Field: "BoundSeconds", CSVPrec: 6},
	{Field: "EpochOverBound", Head: "÷ bound", Prec: 2, CSVPrec: 4},
	{Field: "OverBest", Head: "÷ best", Prec: 2, NoCSV: true, Wide: true},
	{Field: "System"}, // CSV: after the columns it had before
	{Field: "InMemory"},
}

// leftOutLines say, one line per device, which systems that keep every
// parameter in memory the sweep left out there and why.
func leftOutLines(out SweepOutput) []string {
	var lines []string
	for _, dev := range out.Devices {
		var parts []string
		var bytes int64
		where := map[string][]string{} // memory → systems
		var order []string
		for _, l := range out.LeftOut {
			switch {
			case l.Device != dev:
			case l.Limit > 0:
				key := fmt.Sprintf("%.1f GB %s memory", sim.GB(l.Limit), l.Where)
				if where[key] == nil {
					order = append(order, key)
				}
				where[key] = append(where[key], l.System)
				bytes = l.Bytes
			default:
				parts = append(parts, l.System+": "+l.Reason)
			}
		}
		var mem []string
		for _, key := range order {
			verb := "needs"
			if len(where[key]) > 1 {
				verb = "need"
			}
			mem = append(mem, fmt.Sprintf("%s %s more than %.0f%% of its %s", strings.Join(where[key], " and "), verb, 100*out.MemoryShare, key))
		}
		if len(mem) > 0 {
			parts = append([]string{fmt.Sprintf("every parameter with its Adagrad state is %.1f GB: %s", sim.GB(bytes), strings.Join(mem, ", "))}, parts...)
		}
		if len(parts) > 0 {
			lines = append(lines, fmt.Sprintf("in memory, not ranked on %s: %s", dev, strings.Join(parts, "; ")))
		}
	}
	return lines
}

// rowName names a sweep row's configuration: "beta at p=8 c=4", or the
// system that keeps every parameter in memory and where.
func rowName(r sweep.Row) string {
	if r.InMemory {
		return fmt.Sprintf("%s (every parameter in %s memory)", r.System, r.Memory)
	}
	return fmt.Sprintf("%s at p=%d c=%d", r.Ordering, r.P, r.C)
}

// inMemoryNames are the systems that keep every parameter in memory.
func inMemoryNames() []string {
	var names []string
	for _, s := range sim.InMemorySystems() {
		names = append(names, s.Name)
	}
	return names
}

// sweepGraphPlan adds the work directory's own p and c (tr) to the swept
// ones, where --p and --c are not given and the system takes a c, so that
// the sweep ranks the Plan it was trained with; it returns what it added
// as flags, for the reader.
func sweepGraphPlan(system string, tr validate.Trained, g *sweep.Grid, set map[string]bool) []string {
	sys, err := sim.LookupSystem(system)
	if err != nil || !sys.Partitioned {
		return nil // sweep.Run says why
	}
	var took []string
	if !set["p"] && tr.P > 0 {
		g.Ps = addInts(g.Ps, tr.P)
		took = append(took, fmt.Sprintf("--p %d", tr.P))
	}
	if !set["c"] && tr.C > 0 && sys.Capacity == 0 {
		if g.Cs == nil {
			g.Cs = sweep.DefaultCs
		}
		g.Cs = addInts(g.Cs, tr.C)
		took = append(took, fmt.Sprintf("--c %d", tr.C))
	}
	return took
}

// ownPlanNote is the line that places the work directory's own Plan (its
// p, c and ordering) among the swept configurations on the first device;
// "" when the sweep did not simulate it.
func ownPlanNote(out SweepOutput, tr validate.Trained) string {
	if len(out.Devices) == 0 || tr.Ordering == "" {
		return ""
	}
	fit := out.Fitting()
	for _, r := range out.Rows {
		if r.Device != out.Devices[0] || r.P != tr.P || r.C != tr.C || r.Ordering != tr.Ordering || r.System != out.System.Name {
			continue
		}
		own := fmt.Sprintf("the directory's own Plan, %s at p=%d c=%d on %s: %s per epoch", r.Ordering, r.P, r.C, r.Device, plots.Duration(r.EpochSeconds))
		if !r.Fits {
			return own + ", but it does not fit in memory here"
		}
		return fmt.Sprintf("%s, rank %d of %d (%.2f× the fastest)", own, r.Rank, len(fit), r.OverBest)
	}
	return ""
}

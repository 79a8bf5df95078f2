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
)

// SweepOutput is what simulate sweep prints with --json.
type SweepOutput = sweep.Output

// sweepMain runs `simulate sweep`: every ordering at every (p, c) on every
// device, ranked by epoch time among the buffers that fit in memory.
func sweepMain(args []string, stdout, stderr io.Writer) error {
	var q sim.Request
	var ps, cs, devs, plotPath string
	var top int
	var g sweep.Grid
	var machines, bandwidth string
	var epochs int
	var graphDir string
	fs := flag.NewFlagSet(prog+" sweep", flag.ContinueOnError)
	addGraphFlag(fs, &graphDir)
	fs.StringVar(&ps, "p", "8,16,32,64", "partition counts: a comma-separated `LIST` of numbers and ranges a-b")
	fs.StringVar(&cs, "c", "", "buffer capacities, a `LIST` like --p; c > p is skipped (default 2,4,8,16, or the system's own)")
	cli.PresetOrFileVar(fs, &devs, "device", "p3.2xlarge", "comma-separated device `LIST`: presets ("+strings.Join(devices.PresetNames(), ", ")+") or YAML files", devices.PresetNames())
	fs.IntVar(&top, "top", 10, "rows of the human table (all rows with --json and --csv)")
	fs.StringVar(&plotPath, "plot", "", "draw, per device and c, the best ordering's epoch time against p (buffers that fit) to `FILE`.png or .svg")
	fs.Float64Var(&g.MemoryShare, "memory-share", 0.8, "share of the buffer's memory (CPU, or GPU for GPU buffers) that c partitions plus staging buffers may take")
	addScenarioFlags(fs, &q)
	fs.StringVar(&machines, "machines", "", "sweep PyTorch-BigGraph (--system pbg, its CPU trainer) over machine counts: a `LIST` like --p; ranks (machines, p) by the time of --epochs epochs (default device pbg-paper)")
	fs.StringVar(&bandwidth, "bandwidth", "", "with --machines: each machine's network bandwidth, e.g. 10GB/s (default: the device's)")
	fs.IntVar(&epochs, "epochs", 0, "with --machines: rank by the time of `N` epochs (default 10)")
	of := registerOut(fs)
	cli.SetHelp(fs, cli.Help{
		Usage:   "simulate sweep [flags]",
		Summary: "Simulates every ordering at every (p, c) on every device and ranks the configurations whose buffer fits in memory; with --machines, PyTorch-BigGraph on every (machines, p).",
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
	if top < 1 {
		return cli.Usagef("--top %d: must be at least 1", top)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := useGraph(&q, graphDir, set); err != nil {
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
	if plotPath != "" {
		if err := plots.CheckPath(plotPath); err != nil {
			return cli.Usagef("--plot: %w", err)
		}
	}
	out, err := sweep.Run(q, g)
	if err != nil {
		return usage(err)
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
	cols := sweepColumns.Select(wide)
	if len(out.Devices) < 2 {
		cols = cols.DropHuman("Device")
	}
	if len(fit) > 0 {
		table := cols.Human(fit[:min(top, len(fit))])
		if out.HasSpread() {
			table = withSpread(cols, false).Human(spreadRows(fit[:min(top, len(fit))]))
		}
		if err := table.Render(w); err != nil {
			return err
		}
	}
	tr := out.Training
	fmt.Fprintf(w, "%s; %s: %d train edges, d=%d, %s, batch %d, %d negatives; on %s\n",
		out.System.Name, describe(out.Dataset, out.Graph), out.TrainEdges, out.Dim, tr.Model, tr.Batch, tr.Negatives, strings.Join(out.Devices, ", "))
	fmt.Fprintf(w, "swept p ∈ {%s}, c ∈ {%s}, %d orderings: %d configurations, %d fit in memory",
		sweep.JoinInts(out.Ps), sweep.JoinInts(out.Cs), len(out.Orderings), len(out.Rows), len(fit))
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
		fmt.Fprintf(w, "fastest: %s at p=%d c=%d on %s, %.1f min per epoch (%.2f× its bound); buffer %.1f GB of %.1f GB %s memory\n",
			b.Ordering, b.P, b.C, b.Device, b.EpochSeconds/60, b.EpochOverBound, sim.GB(b.BufferBytes), sim.GB(b.MemoryBytes), b.Memory)
		fastestSpread(w, fit)
		if near, io, mem := out.NearBest(sweep.NearFastest); len(near) > 1 {
			fmt.Fprintf(w, "within %.0f%% of it: %d configurations; the least I/O among them: %s at p=%d c=%d on %s (%.1f GB); the smallest buffer: %s at p=%d c=%d on %s (%.1f GB)\n",
				100*sweep.NearFastest, len(near), io.Ordering, io.P, io.C, io.Device, sim.GB(io.IOBytes),
				mem.Ordering, mem.P, mem.C, mem.Device, sim.GB(mem.BufferBytes))
		}
	}
	if n := len(out.Skipped); n > 0 {
		fmt.Fprintf(w, "not valid at some (p, c): %s (%d pairs; --json gives the reasons)\n", out.SkippedNames(), n)
	}
	for _, n := range out.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintln(w, "buffer GB: c partitions plus the system's staging buffers (prefetch, async write); ÷ bound: epoch over a bound no schedule beats")
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
	var panels []plots.LineChart
	panel := map[string]int{}
	for _, cv := range curves {
		k, ok := panel[cv.Device]
		if !ok {
			k = len(panels)
			panel[cv.Device] = k
			panels = append(panels, plots.LineChart{Title: cv.Device, XLabel: "partitions p", YLabel: "epoch (minutes)"})
		}
		s := plots.Series{Name: fmt.Sprintf("c=%d", cv.C)}
		for i, p := range cv.P {
			s.X = append(s.X, float64(p))
			s.Y = append(s.Y, cv.EpochSeconds[i]/60)
		}
		panels[k].Series = append(panels[k].Series, s)
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
	{Field: "P", Head: "p"},
	{Field: "C", Head: "c"},
	{Field: "Ordering", Head: "ordering"},
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
	{Field: "EpochSeconds", Head: "epoch min", Scale: 1.0 / 60, Prec: 1, CSVPrec: 3},
	{Field: "StallSeconds", Head: "stall min", Scale: 1.0 / 60, Prec: 1, CSVPrec: 3},
	{Field: "ComputeSeconds", CSVPrec: 3},
	{Field: "BoundSeconds", CSVPrec: 3},
	{Field: "EpochOverBound", Head: "÷ bound", Prec: 2, CSVPrec: 4},
	{Field: "OverBest", Head: "÷ best", Prec: 2, NoCSV: true, Wide: true},
}
